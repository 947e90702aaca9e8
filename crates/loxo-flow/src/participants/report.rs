//! The end-of-epoch [`ParticipantsReport`]: [`Participant`]s by [`Role`].

use core::fmt;
use core::net::IpAddr;

use loxo_spread::{Estimate, Spreader};

use super::BOUNDS_Z;
#[cfg(doc)]
use super::{Participants, ParticipantsConfig, REPORT_Z};
use crate::Theta;

/// Rows of each list of the default [`ParticipantsReport`].
pub const DEFAULT_PARTICIPANTS: usize = 16;

/// Standard errors a threshold must span to keep keys without spread out of a
/// report ([`ParticipantsReport::noisy`]): a key of no spread reads at most a few
/// standard errors of noise, and `4σ` is passed with probability ≈ 3·10⁻⁵.
pub const NOISE_Z: f64 = 4.0;

/// What a participant does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Role {
    /// A source with many distinct destinations (a horizontal scan, a worm): its
    /// spread counts destinations.
    HorizontalScan,
    /// A source probing many destination ports of one destination: its spread
    /// counts the ports.
    VerticalScan,
    /// A destination with many distinct sources (a distributed flood's victim): its
    /// spread counts sources.
    Victim,
}

impl Role {
    /// Its name in text and JSON: `horizontal`, `vertical`, `victim`.
    #[must_use]
    pub const fn name(self) -> &'static str {
        match self {
            Self::HorizontalScan => "horizontal",
            Self::VerticalScan => "vertical",
            Self::Victim => "victim",
        }
    }

    /// What its spread counts: `destinations`, `ports`, `sources`.
    #[must_use]
    pub const fn counts(self) -> &'static str {
        match self {
            Self::HorizontalScan => "destinations",
            Self::VerticalScan => "ports",
            Self::Victim => "sources",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One reported participant: its address, its estimated spread and bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Participant {
    /// What it does.
    pub role: Role,
    /// The scanner's source, or the victim.
    pub address: IpAddr,
    /// A vertical scan's destination (`None` for the other roles).
    pub target: Option<IpAddr>,
    /// Its spread — distinct destinations, ports or sources ([`Role::counts`]): the
    /// maximum-likelihood estimate and its standard error.
    pub spread: Estimate,
    /// Lower bound, [`BOUNDS_Z`] = 4 standard errors below the estimate, never below
    /// [`sampled`](Self::sampled) (which is exact).
    pub lower: f64,
    /// Upper bound, 4 standard errors above.
    pub upper: f64,
    /// Distinct pairs of the key the sketch's cells hold: a certain minimum of its
    /// spread.
    pub sampled: u32,
    /// A quarter or more of its registers are at the cap: the spread is beyond what
    /// the registers resolve (about `S·2¹²`) and the estimate says "at least this".
    pub saturated: bool,
}

impl Participant {
    /// The participant of a sketch's reported key.
    pub(super) fn of<K>(
        role: Role,
        address: IpAddr,
        target: Option<IpAddr>,
        s: &Spreader<K>,
    ) -> Self {
        Self {
            role,
            address,
            target,
            spread: s.spread,
            lower: s.lower(BOUNDS_Z),
            upper: s.upper(BOUNDS_Z),
            sampled: s.sampled,
            saturated: s.saturated,
        }
    }

    /// Whether `spread` lies within `[lower, upper]`.
    #[must_use]
    pub fn contains(&self, spread: f64) -> bool {
        self.lower <= spread && spread <= self.upper
    }
}

impl fmt::Display for Participant {
    /// `vertical 198.51.100.2 -> 203.0.113.10: ~4096 ± 120 ports [3616, 4576]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.role, self.address)?;
        if let Some(t) = self.target {
            write!(f, " -> {t}")?;
        }
        write!(
            f,
            ": ~{:.0} ± {:.0} {} [{:.0}, {:.0}]",
            self.spread.value,
            self.spread.sigma,
            self.role.counts(),
            self.lower,
            self.upper
        )?;
        if self.saturated {
            f.write_str(" SATURATED")?;
        }
        Ok(())
    }
}

#[cfg(feature = "defmt")]
impl defmt::Format for Participant {
    /// As [`Display`](fmt::Display), addresses in their usual text (estimates as
    /// integers).
    fn format(&self, f: defmt::Formatter<'_>) {
        defmt::write!(f, "{=str} ", self.role.name());
        crate::key::defmt_addr(&octets(self.address), f);
        if let Some(t) = self.target {
            defmt::write!(f, " -> ");
            crate::key::defmt_addr(&octets(t), f);
        }
        defmt::write!(
            f,
            ": ~{=u64} +- {=u64} {=str} [{=u64}, {=u64}]",
            self.spread.value as u64,
            self.spread.sigma as u64,
            self.role.counts(),
            self.lower as u64,
            self.upper as u64
        );
        if self.saturated {
            defmt::write!(f, " SATURATED");
        }
    }
}

/// An address's bytes: 4 or 16.
#[cfg(feature = "defmt")]
fn octets(a: IpAddr) -> heapless::Vec<u8, 16> {
    let mut v = heapless::Vec::new();
    let _ = match a {
        IpAddr::V4(a) => v.extend_from_slice(&a.octets()),
        IpAddr::V6(a) => v.extend_from_slice(&a.octets()),
    };
    v
}

/// End-of-epoch report of a [`Participants`]; filled in place by
/// [`Participants::end_epoch`].
///
/// `scanners` holds horizontal and vertical scans, `victims` the victims, each at
/// most `R` rows: the participants found, largest first (scanners by their spread
/// over their own threshold, the two kinds having different ones). When more
/// qualify than a list holds, the largest are kept and `*_left_out` says how many
/// were not listed.
///
/// Memory: `112 + 144·R` bytes on a 64-bit host (two lists of 72-byte rows and their
/// lengths): 2 416 for the default `R` = 16 (pinned by a test).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ParticipantsReport<const R: usize = DEFAULT_PARTICIPANTS> {
    /// Epoch number, from 0.
    pub epoch: u32,
    /// The threshold's share ([`ParticipantsConfig::share`]).
    pub share: Theta,
    /// Estimated distinct (source, destination) pairs of the epoch.
    pub pairs: Estimate,
    /// Estimated distinct (source, destination, destination port) triples.
    pub triples: Estimate,
    /// The horizontal scanners' and the victims' threshold, in distinct
    /// destinations or sources: `max(share · pairs, min_spread)`. A key is listed
    /// when its estimate reaches it less [`REPORT_Z`] standard errors.
    pub threshold: f64,
    /// The vertical scans' threshold in distinct ports: `max(share · triples,
    /// min_spread)`.
    pub port_threshold: f64,
    /// The standard error of a spread at `threshold` among the sketches' noise (the
    /// larger of the fan-out and fan-in sketches'): see [`noisy`](Self::noisy).
    pub threshold_sigma: f64,
    /// The same at `port_threshold` in the vertical sketch.
    pub port_threshold_sigma: f64,
    /// Horizontal and vertical scans.
    pub scanners: heapless::Vec<Participant, R>,
    /// Scans that qualified but did not fit in `scanners` (the smallest).
    pub scanners_left_out: u32,
    /// Victims.
    pub victims: heapless::Vec<Participant, R>,
    /// Victims that qualified but did not fit in `victims`.
    pub victims_left_out: u32,
    /// The sampling level the epoch ended at: its figures come from a `2^−sampling`
    /// sample of the pairs, scaled up (0: every pair;
    /// [`SampledParticipants`](super::SampledParticipants)).
    pub sampling: u8,
    /// The level rose during the epoch: the pairs sampled before the rise were kept
    /// at a higher rate than the scale assumes, so the figures are biased upwards by
    /// up to `2^(rise)` for the part of the epoch before it.
    pub sampling_rose: bool,
}

impl<const R: usize> ParticipantsReport<R> {
    /// An empty report (epoch 0, share 1 %).
    #[must_use]
    pub const fn new() -> Self {
        Self {
            epoch: 0,
            share: super::ONE_PERCENT,
            pairs: Estimate {
                value: 0.0,
                sigma: 0.0,
            },
            triples: Estimate {
                value: 0.0,
                sigma: 0.0,
            },
            threshold: 0.0,
            port_threshold: 0.0,
            threshold_sigma: 0.0,
            port_threshold_sigma: 0.0,
            scanners: heapless::Vec::new(),
            scanners_left_out: 0,
            victims: heapless::Vec::new(),
            victims_left_out: 0,
            sampling: 0,
            sampling_rose: false,
        }
    }

    /// Empties the lists and zeroes the figures (the share and epoch stay), in
    /// place (no report-sized temporary on the stack).
    pub fn clear(&mut self) {
        let zero = Estimate {
            value: 0.0,
            sigma: 0.0,
        };
        self.pairs = zero;
        self.triples = zero;
        self.threshold = 0.0;
        self.port_threshold = 0.0;
        self.threshold_sigma = 0.0;
        self.port_threshold_sigma = 0.0;
        self.scanners.clear();
        self.scanners_left_out = 0;
        self.victims.clear();
        self.victims_left_out = 0;
        self.sampling = 0;
        self.sampling_rose = false;
    }

    /// Whether a threshold is below [`NOISE_Z`] = 4 of its standard errors: the
    /// sketches' noise is then large next to it, and among the hundreds of keys of
    /// an epoch a few with no spread of their own may be listed (`tests/participants.rs`
    /// measures it: 1 % of an epoch of 4 000–8 000 pairs is such a threshold for
    /// [`HostParticipants`](super::HostParticipants)). Longer epochs or a larger
    /// share leave the noise behind.
    #[must_use]
    pub fn noisy(&self) -> bool {
        self.threshold < NOISE_Z * self.threshold_sigma
            || self.port_threshold < NOISE_Z * self.port_threshold_sigma
    }

    /// Whether every participant that qualified is listed.
    #[must_use]
    pub const fn complete(&self) -> bool {
        self.scanners_left_out == 0 && self.victims_left_out == 0
    }
}

impl<const R: usize> Default for ParticipantsReport<R> {
    fn default() -> Self {
        Self::new()
    }
}
