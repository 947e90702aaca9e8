//! `--allow-from`: the addresses a collector takes datagrams from.
//!
//! A source address proves nothing on its own (UDP's is trivially spoofed off-path
//! where no ingress filtering stops it), so this is not authentication — the MAC is
//! (`--keys`) — but it keeps a stray or hostile host's datagrams from costing the
//! collector anything beyond a counter, and it is the only restriction there is for
//! an export without integrity of its own, such as IPFIX over UDP.

use std::net::IpAddr;

/// Address prefixes: `ADDR` or `ADDR/LEN`, IPv4 or IPv6, comma-separated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowFrom {
    nets: Vec<(IpAddr, u8)>,
}

impl AllowFrom {
    /// Parses `10.0.2.0/24,127.0.0.1,::1` (an IPv4-mapped IPv6 sender matches its
    /// IPv4 prefix).
    ///
    /// # Errors
    /// An item that is not an address or prefix (quoted, at most 40 characters), or
    /// an empty list.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut nets = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = || {
                let excerpt: String = item.chars().take(40).collect();
                format!("{excerpt:?}: not an address or ADDR/PREFIX-LENGTH")
            };
            let (addr, len) = match item.split_once('/') {
                Some((a, l)) => (a, Some(l)),
                None => (item, None),
            };
            let addr: IpAddr = addr.parse().map_err(|_| bad())?;
            let max = if addr.is_ipv4() { 32 } else { 128 };
            let len = match len {
                Some(l) => l.parse::<u8>().ok().filter(|&l| l <= max).ok_or_else(bad)?,
                None => max,
            };
            nets.push((addr.to_canonical(), len));
        }
        if nets.is_empty() {
            return Err("an empty address list".to_owned());
        }
        Ok(Self { nets })
    }

    /// Whether `ip` is in one of the prefixes.
    #[must_use]
    pub fn allows(&self, ip: IpAddr) -> bool {
        let ip = ip.to_canonical();
        self.nets.iter().any(|&(net, len)| match (net, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                let mask = u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
                u32::from(n) & mask == u32::from(a) & mask
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => {
                let mask = u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
                u128::from(n) & mask == u128::from(a) & mask
            }
            _ => false,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::AllowFrom;

    #[test]
    fn prefixes_match_their_addresses_only() {
        let a = AllowFrom::parse("10.0.2.0/24, 127.0.0.1,2001:db8::/32").unwrap();
        for (ip, ok) in [
            ("10.0.2.15", true),
            ("10.0.3.1", false),
            ("127.0.0.1", true),
            ("127.0.0.2", false),
            ("::ffff:10.0.2.9", true),
            ("2001:db8:1::1", true),
            ("2001:db9::1", false),
        ] {
            assert_eq!(a.allows(ip.parse().unwrap()), ok, "{ip}");
        }
        let any = AllowFrom::parse("0.0.0.0/0").unwrap();
        assert!(any.allows("192.0.2.1".parse().unwrap()));
        assert!(!any.allows("::1".parse().unwrap()));
        for bad in ["", "10.0.0.0/33", "10.0.0/8", "host", "::1/129"] {
            assert!(AllowFrom::parse(bad).is_err(), "{bad}");
        }
    }
}
