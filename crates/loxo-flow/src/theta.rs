//! [`Theta`], the exact elephant threshold.

use core::fmt;

/// An elephant threshold: the share `θ = num/den` (`0 < θ ≤ 1`) of an epoch's bytes
/// or packets, held as an exact fraction and compared in integers.
///
/// A flow with `part` of the epoch's `total` is an elephant when `part/total ≥ θ`,
/// decided as `part·den ≥ num·total` in 128-bit arithmetic ([`Theta::reached`]) —
/// inclusive and exact at the boundary, with none of a float's rounding (an `f32`
/// `0.1` is 0.100000001 and misses ten flows of exactly 10 %).
///
/// [`Theta::parse`] reads what a user types: a decimal (`0.01`), a percentage
/// (`1%`, `0.25%`) or a fraction (`1/128`). [`Display`](fmt::Display) prints the exact
/// decimal when `den` has no prime factor but 2 and 5, else `num/den`.
///
/// ```
/// use loxo_flow::Theta;
///
/// let t = Theta::parse("0.1").unwrap();
/// assert!(t.reached(100, 1000)); // exactly 10 %: an elephant
/// assert!(!t.reached(99_999, 1_000_000)); // one part in 10^6 below: not
/// assert_eq!(Theta::parse("1%").ok(), Theta::new(1, 100));
/// assert_eq!(t.to_string(), "0.1");
/// assert_eq!(Theta::parse("1/3").unwrap().to_string(), "1/3");
/// assert_eq!(Theta::parse("0.0099999998").unwrap().to_string(), "0.0099999998");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Theta {
    num: u64,
    den: u64,
}

/// Why a threshold was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ThetaError {
    /// Not a decimal, percentage or fraction.
    Syntax,
    /// θ is 0, negative or above 1.
    OutOfRange,
    /// More digits than a 64-bit numerator and denominator can hold exactly.
    TooPrecise,
}

impl fmt::Display for ThetaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Syntax => "expected a decimal (0.01), a percentage (1%) or a fraction (1/100)",
            Self::OutOfRange => "theta must be above 0 and at most 1",
            Self::TooPrecise => "too many digits to hold exactly",
        })
    }
}

impl core::error::Error for ThetaError {}

impl Theta {
    /// θ = `num/den`, if `0 < num ≤ den`.
    #[must_use]
    pub const fn new(num: u64, den: u64) -> Option<Self> {
        if num == 0 || num > den {
            None
        } else {
            Some(Self { num, den })
        }
    }

    /// The numerator.
    #[must_use]
    pub const fn num(self) -> u64 {
        self.num
    }

    /// The denominator.
    #[must_use]
    pub const fn den(self) -> u64 {
        self.den
    }

    /// True when `part / total ≥ θ`, exactly (`part·den ≥ num·total`). An empty
    /// epoch (`total = 0`) makes every part reach θ.
    #[must_use]
    pub const fn reached(self, part: u64, total: u64) -> bool {
        part as u128 * self.den as u128 >= self.num as u128 * total as u128
    }

    /// The smallest `part` with `part / total ≥ θ`: `⌈num·total/den⌉`.
    #[must_use]
    pub const fn threshold(self, total: u64) -> u64 {
        let p = self.num as u128 * total as u128;
        let q = p / self.den as u128;
        // q ≤ total because num ≤ den, so it fits in u64.
        (q + !p.is_multiple_of(self.den as u128) as u128) as u64
    }

    /// θ as a float, for display and statistics only (never for the decision).
    #[must_use]
    pub fn to_f64(self) -> f64 {
        self.num as f64 / self.den as f64
    }

    /// Parses `0.01`, `.5`, `1`, `1%`, `0.25 %` or `1/100` exactly.
    ///
    /// # Errors
    /// [`ThetaError::Syntax`], [`ThetaError::OutOfRange`] (0, or above 1),
    /// [`ThetaError::TooPrecise`] (more than 19 significant digits).
    pub fn parse(s: &str) -> Result<Self, ThetaError> {
        let s = s.trim();
        let (s, percent) = match s.strip_suffix('%') {
            Some(rest) => (rest.trim_end(), true),
            None => (s, false),
        };
        let (num, den) = if let Some((a, b)) = s.split_once('/') {
            if percent {
                return Err(ThetaError::Syntax);
            }
            (integer(a.trim())?, integer(b.trim())?)
        } else {
            let (int, frac) = s.split_once('.').unwrap_or((s, ""));
            if int.is_empty() && frac.is_empty() {
                return Err(ThetaError::Syntax);
            }
            let mut num: u64 = 0;
            let mut den: u64 = if percent { 100 } else { 1 };
            for (i, c) in int.bytes().chain(frac.bytes()).enumerate() {
                let d = digit(c)?;
                num = num
                    .checked_mul(10)
                    .and_then(|n| n.checked_add(d))
                    .ok_or(ThetaError::TooPrecise)?;
                if i >= int.len() {
                    den = den.checked_mul(10).ok_or(ThetaError::TooPrecise)?;
                }
            }
            (num, den)
        };
        if den == 0 {
            return Err(ThetaError::OutOfRange);
        }
        Self::new(num, den).ok_or(ThetaError::OutOfRange)
    }
}

fn digit(c: u8) -> Result<u64, ThetaError> {
    if c.is_ascii_digit() {
        Ok(u64::from(c - b'0'))
    } else {
        Err(ThetaError::Syntax)
    }
}

fn integer(s: &str) -> Result<u64, ThetaError> {
    if s.is_empty() {
        return Err(ThetaError::Syntax);
    }
    s.bytes().try_fold(0u64, |n, c| {
        let d = digit(c)?;
        n.checked_mul(10)
            .and_then(|n| n.checked_add(d))
            .ok_or(ThetaError::TooPrecise)
    })
}

impl fmt::Display for Theta {
    /// The exact decimal if `den = 2^a·5^b`, else `num/den`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (mut a, mut b, mut d) = (0u32, 0u32, self.den);
        while d.is_multiple_of(2) {
            d /= 2;
            a += 1;
        }
        while d.is_multiple_of(5) {
            d /= 5;
            b += 1;
        }
        let digits = a.max(b);
        // num/den = num·2^(k−a)·5^(k−b) / 10^k with k = max(a, b).
        let scaled = (self.num as u128)
            .checked_mul(2u128.pow(digits - a))
            .and_then(|x| x.checked_mul(5u128.pow(digits - b)));
        match scaled {
            Some(x) if d == 1 && digits <= 38 => {
                let p = 10u128.pow(digits);
                let (int, frac) = (x / p, x % p);
                if digits == 0 {
                    write!(f, "{int}")
                } else {
                    let s = frac_digits(frac, digits);
                    write!(f, "{int}.{}", s.as_str())
                }
            }
            _ => write!(f, "{}/{}", self.num, self.den),
        }
    }
}

/// `frac` as exactly `digits` decimal digits without trailing zeros.
fn frac_digits(frac: u128, digits: u32) -> Digits {
    let mut out = Digits {
        buf: [b'0'; 40],
        len: digits as usize,
    };
    let mut x = frac;
    for i in (0..digits as usize).rev() {
        if let Some(c) = out.buf.get_mut(i) {
            *c = b'0' + (x % 10) as u8;
        }
        x /= 10;
    }
    while out.len > 1 && out.buf.get(out.len - 1) == Some(&b'0') {
        out.len -= 1;
    }
    out
}

struct Digits {
    buf: [u8; 40],
    len: usize,
}

impl Digits {
    fn as_str(&self) -> &str {
        core::str::from_utf8(self.buf.get(..self.len).unwrap_or(&[])).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::string::ToString;

    use super::*;

    #[test]
    fn parses_and_prints_exactly() {
        for (text, num, den, shown) in [
            ("0.01", 1, 100, "0.01"),
            ("1%", 1, 100, "0.01"),
            ("0.25 %", 25, 10_000, "0.0025"),
            (".5", 5, 10, "0.5"),
            ("1", 1, 1, "1"),
            ("1/128", 1, 128, "0.0078125"),
            ("2/3", 2, 3, "2/3"),
            ("0.0099999998", 99_999_998, 10_000_000_000, "0.0099999998"),
        ] {
            let t = Theta::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!((t.num(), t.den()), (num, den), "{text}");
            assert_eq!(t.to_string(), shown, "{text}");
        }
        for bad in [
            "", "abc", "0", "0.0", "1.5", "2/1", "1/0", "-0.1", "1/2%", ".",
        ] {
            assert!(Theta::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            Theta::parse("0.00000000000000000001"),
            Err(ThetaError::TooPrecise)
        );
    }

    #[test]
    fn boundary_is_inclusive_and_exact() {
        let t = Theta::parse("0.1").unwrap_or_else(|e| panic!("{e}"));
        assert!(t.reached(10, 100) && !t.reached(9, 100));
        assert!(t.reached(u64::MAX / 10 + 1, u64::MAX) && !t.reached(u64::MAX / 10, u64::MAX));
        assert_eq!(t.threshold(100), 10);
        assert_eq!(t.threshold(101), 11);
        assert_eq!(t.threshold(u64::MAX), u64::MAX / 10 + 1);
        let p = Theta::parse("0.0099999998").unwrap_or_else(|e| panic!("{e}"));
        assert!(!p.reached(99_999_997, 10_000_000_000) && p.reached(99_999_998, 10_000_000_000));
        assert!(Theta::new(1, 1).is_some_and(|t| t.reached(0, 0)));
    }
}
