//! `loxo build-filter KEYS.txt -o F.loxo`: a binary fuse filter (static blocklist)
//! over addresses and prefixes, as one loxo frame to flash.
//!
//! **Keys file.** One entry per line; blank lines and `#` comments (whole-line or
//! after an entry) are skipped. An entry is
//!
//! * an IPv4 address (`192.0.2.1`): the key is its 4 bytes in network order;
//! * an IPv6 address (`2001:db8::1`): its 16 bytes in network order. An IPv4-mapped
//!   IPv6 address (`::ffff:192.0.2.1`) is a 16-byte key, *not* the IPv4 one: write
//!   the IPv4 form to block it as IPv4;
//! * a CIDR prefix (`198.51.100.0/24`, `2001:db8::/120`): **expanded** into every
//!   address it covers, each hashed as above, when it covers at most 2^16 addresses
//!   (IPv4 `/16` and longer, IPv6 `/112` and longer). Shorter prefixes are refused
//!   with a message, and so is a prefix with host bits set (`10.0.0.5/24`): a
//!   device looks up *addresses*, one hash each, so a prefix is only matched through
//!   its addresses, and 2^16 addresses are already 72 KB of flash at 8 bits a key
//!   (a `/8` would be 18 MB: block such ranges with a prefix rule, not a filter).
//!
//! Each key is hashed with keyed SipHash-1-3 under the seed (`--seed`, 32 hex digits
//! or a file holding them; the device must use the same seed). Without `--seed` a
//! random seed is drawn and written beside the output as `F.loxo.key` (the format
//! `--seed` reads), since the filter is useless without it. Repeated keys (listed
//! twice, or covered by overlapping prefixes) count once.

use std::io::Write as _;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, ensure, Context};
use loxo_bloom::{BinaryFuse16, BinaryFuse8, FuseBuild};
use loxo_core::{KeyHash, Seed};

/// Most addresses one prefix may expand to: `2^MAX_PREFIX_HOST_BITS`.
pub(crate) const MAX_PREFIX_HOST_BITS: u32 = 16;
/// Most keys (after expansion, before deduplication) a keys file may yield.
pub(crate) const MAX_KEYS: usize = 1 << 25;

/// Options of `loxo build-filter`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo build-filter -o blocklist.loxo blocklist.txt       a random seed, written to blocklist.loxo.key
  loxo build-filter -o blocklist.loxo --fingerprint 16 blocklist.txt
  loxo top trace.pcap --blocklist blocklist.loxo")]
pub(crate) struct Args {
    /// Keys file: one IPv4/IPv6 address or CIDR prefix (≤ 2^16 addresses) per line,
    /// `#` comments.
    keys: PathBuf,
    /// Output file (one loxo frame, kind `binary-fuse`).
    #[arg(short, long)]
    output: PathBuf,
    /// Fingerprint bits: 8 (≈ 9 bits/key, 0.39 % false positives) or 16 (≈ 18
    /// bits/key, 0.0015 %).
    #[arg(long, default_value_t = 8, value_parser = fingerprint_bits)]
    fingerprint: u32,
    /// Hash seed: 32 hex digits, or a file holding them. Default: a random seed,
    /// written to OUTPUT.key.
    #[arg(long)]
    seed: Option<String>,
}

/// `--fingerprint`: 8 or 16.
fn fingerprint_bits(s: &str) -> Result<u32, String> {
    match s {
        "8" => Ok(8),
        "16" => Ok(16),
        _ => Err(format!("{s:?}: 8 or 16")),
    }
}

/// Runs `loxo build-filter`.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let text = std::fs::read_to_string(&a.keys)
        .with_context(|| format!("{}: cannot read", a.keys.display()))?;
    let keys = parse_keys(&text).with_context(|| format!("{}", a.keys.display()))?;
    let (seed, key_file) = if let Some(s) = &a.seed {
        (loxo_cli::key::read_key(s)?, None)
    } else {
        let seed = loxo_cli::key::random_seed();
        let path = key_path(&a.output);
        write_key(&path, seed)?;
        (seed, Some(path))
    };
    let hashes: Vec<KeyHash> = keys.iter().map(|k| seed.hash(k)).collect();
    let frame = build_frame(seed, &hashes, a.fingerprint)?;
    std::fs::write(&a.output, &frame.bytes)
        .with_context(|| format!("{}: cannot write", a.output.display()))?;
    let b = &frame.build;
    let slots = b.layout.slots();
    println!(
        "{}: binary-fuse{} over {} keys ({} lines' entries, {} repeated), {} slots, {:.2} bits/key, false positives 2^-{} = {:.4} %, {} bytes",
        a.output.display(),
        a.fingerprint,
        b.layout.keys(),
        keys.len(),
        b.duplicates,
        slots,
        (slots as f64 * f64::from(a.fingerprint)) / f64::from(b.layout.keys().max(1)),
        a.fingerprint,
        100.0 / 2f64.powi(a.fingerprint as i32),
        frame.bytes.len()
    );
    println!("seed fingerprint: {:016x}", seed.fingerprint());
    if let Some(path) = key_file {
        println!(
            "seed: random, written to {} (the devices need it; keep it secret)",
            path.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// A built filter and its frame.
pub(crate) struct Frame {
    pub(crate) build: FuseBuild,
    pub(crate) bytes: Vec<u8>,
}

/// Builds a `bits`-bit filter over `hashes` and encodes it under `seed`.
pub(crate) fn build_frame(seed: Seed, hashes: &[KeyHash], bits: u32) -> anyhow::Result<Frame> {
    // The two widths share the build (`FuseBuild`) but no trait for the rest: the
    // macro writes the view-and-encode once for both.
    macro_rules! encode {
        ($fuse:ident) => {{
            let build = $fuse::build(hashes)?;
            let f = $fuse::from_parts(seed, build.layout, &build.fingerprints)?;
            let mut bytes = vec![0u8; f.encoded_len()];
            let n = f.encode_into(&mut bytes)?;
            bytes.truncate(n);
            Frame { build, bytes }
        }};
    }
    Ok(if bits == 16 {
        encode!(BinaryFuse16)
    } else {
        encode!(BinaryFuse8)
    })
}

/// `F.loxo` → `F.loxo.key`.
pub(crate) fn key_path(output: &Path) -> PathBuf {
    let mut s = output.as_os_str().to_owned();
    s.push(".key");
    PathBuf::from(s)
}

/// Writes the seed as 32 hex digits (the 16 bytes in order), readable only by the
/// owner where the platform has permissions.
pub(crate) fn write_key(path: &Path, seed: Seed) -> anyhow::Result<()> {
    let hex = seed.to_bytes().iter().fold(String::new(), |mut h, b| {
        use std::fmt::Write as _;
        let _ = write!(h, "{b:02x}");
        h
    });
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt as _;
        opts.mode(0o600);
    }
    let mut f = opts
        .open(path)
        .with_context(|| format!("{}: cannot write", path.display()))?;
    writeln!(f, "{hex}")?;
    Ok(())
}

/// The keys of a keys file, in order, prefixes expanded (see the module docs).
///
/// # Errors
/// The first line that is not an address or an accepted prefix, with its number.
pub(crate) fn parse_keys(text: &str) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut keys = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let entry = line.split('#').next().unwrap_or("").trim();
        if entry.is_empty() {
            continue;
        }
        push_entry(entry, &mut keys).with_context(|| format!("line {}: {entry:?}", i + 1))?;
        ensure!(
            keys.len() <= MAX_KEYS,
            "line {}: more than {MAX_KEYS} keys in all",
            i + 1
        );
    }
    Ok(keys)
}

/// Appends the keys of one entry: an address, or the addresses of a prefix.
fn push_entry(entry: &str, keys: &mut Vec<Vec<u8>>) -> anyhow::Result<()> {
    let Some((addr, len)) = entry.split_once('/') else {
        let ip: IpAddr = entry
            .parse()
            .context("not an IPv4 or IPv6 address, nor a CIDR prefix")?;
        keys.push(ip_bytes(ip));
        return Ok(());
    };
    let ip: IpAddr = addr
        .parse()
        .context("the part before '/' is not an IPv4 or IPv6 address")?;
    let width: u32 = if ip.is_ipv4() { 32 } else { 128 };
    let len: u32 = len
        .parse()
        .ok()
        .filter(|&l| l <= width)
        .with_context(|| format!("prefix length {len:?} is not 0..={width}"))?;
    let host_bits = width - len;
    if host_bits > MAX_PREFIX_HOST_BITS {
        bail!(
            "covers 2^{host_bits} addresses; at most 2^16 are expanded (IPv4 /16, IPv6 /112 or longer): split the prefix or block it by a rule outside the filter"
        );
    }
    let count = 1u128 << host_bits;
    let base = match ip {
        IpAddr::V4(v4) => u128::from(u32::from(v4)),
        IpAddr::V6(v6) => u128::from(v6),
    };
    if base & (count - 1) != 0 {
        bail!("host bits set: the prefix's network address is {}", {
            let net = base & !(count - 1);
            if ip.is_ipv4() {
                IpAddr::from(std::net::Ipv4Addr::from(net as u32))
            } else {
                IpAddr::from(std::net::Ipv6Addr::from(net))
            }
        });
    }
    for offset in 0..count {
        let a = base | offset;
        keys.push(if ip.is_ipv4() {
            (a as u32).to_be_bytes().to_vec()
        } else {
            a.to_be_bytes().to_vec()
        });
    }
    Ok(())
}

/// The key bytes of an address: 4 (IPv4) or 16 (IPv6), network order.
fn ip_bytes(ip: IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(v4) => v4.octets().to_vec(),
        IpAddr::V6(v6) => v6.octets().to_vec(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn addresses_prefixes_and_comments() {
        let keys = parse_keys(
            "# blocklist\n\n192.0.2.1\n  2001:db8::1  # a host\n198.51.100.0/30\n2001:db8::/127\n10.0.0.9/32\n",
        )
        .unwrap();
        let want: Vec<Vec<u8>> = vec![
            vec![192, 0, 2, 1],
            std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)
                .octets()
                .to_vec(),
            vec![198, 51, 100, 0],
            vec![198, 51, 100, 1],
            vec![198, 51, 100, 2],
            vec![198, 51, 100, 3],
            std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0)
                .octets()
                .to_vec(),
            std::net::Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 1)
                .octets()
                .to_vec(),
            vec![10, 0, 0, 9],
        ];
        assert_eq!(keys, want);
        assert_eq!(parse_keys("10.1.0.0/16").unwrap().len(), 65_536);
        assert_eq!(parse_keys("2001:db8::/112").unwrap().len(), 65_536);
        assert_eq!(parse_keys("::ffff:192.0.2.1").unwrap()[0].len(), 16);
    }

    #[test]
    fn refusals_name_the_line_and_the_reason() {
        for (text, line, why) in [
            ("192.0.2.1\n10.0.0.0/8", "line 2", "covers 2^24 addresses"),
            ("2001:db8::/64", "line 1", "covers 2^64 addresses"),
            ("::/0", "line 1", "covers 2^128 addresses"),
            ("10.0.0.5/24", "line 1", "network address is 10.0.0.0"),
            ("\n\nexample.com", "line 3", "not an IPv4 or IPv6 address"),
            ("10.0.0.0/33", "line 1", "not 0..=32"),
            ("10.0.0.0/x", "line 1", "not 0..=32"),
            ("300.0.0.0/24", "line 1", "before '/'"),
        ] {
            let e = format!("{:#}", parse_keys(text).unwrap_err());
            assert!(e.contains(line) && e.contains(why), "{text:?}: {e}");
        }
    }

    #[test]
    fn key_file_is_what_seed_reads() {
        let dir = std::env::temp_dir().join(format!("loxo-bf-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = key_path(&dir.join("f.loxo"));
        assert!(path.ends_with("f.loxo.key"));
        let seed = Seed::new(0x0123_4567_89ab_cdef, 42);
        write_key(&path, seed).unwrap();
        assert_eq!(
            loxo_cli::key::read_key(path.to_str().unwrap()).unwrap(),
            seed
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
