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
//!   with a message, and so is a prefix with host bits set (`10.0.0.5/24`).
//!
//! **Bounds.** A device looks up *addresses*, one SipHash digest each (the one it
//! computes anyway for its distinct sources), so a prefix is matched through its
//! addresses, and the filter costs ≈ 1.13 bytes of flash per address at 8 bits (2.25 at
//! 16): a `/16` is 72 KB. The keys file may expand to at most `--max-keys` addresses
//! ([`DEFAULT_MAX_KEYS`] = 2^20: a filter of 1.18 MB at 8 bits, 42 MB of RAM and
//! 0.09 s to build), at most [`MAX_KEYS`] = 2^25 when raised; the count
//! is checked *before* a prefix is expanded, and a file past it is refused at the line
//! that passes it, naming the size the filter would have had. Keys are hashed as they
//! are read (8 bytes each), the file is read a line at a time, and a line longer than
//! [`MAX_LINE`] bytes is refused: memory is bounded by the key count. Every error that
//! shows a line quotes at most [`EXCERPT_CHARS`] characters of it (escaped), with its
//! length. Before this cap, 512 lines of `/16`s (6.9 KB) took 3.05 GB of RAM and wrote
//! a 37.7 MB filter.
//!
//! *Why not prefixes stored as prefixes* (one filter per prefix length, each holding
//! the masked prefixes): the device would hash each flow's addresses once per
//! configured length — a SipHash-1-3 is ≈ 240 Cortex-M4 instructions, against a frame
//! budget of 800 — and the `Blocklist` frame format would change; wide ranges belong
//! in a prefix rule outside the filter.
//!
//! Each key is hashed with keyed SipHash-1-3 under the seed (`--seed`, 32 hex digits
//! or a file holding them; the device must use the same seed). Without `--seed` a
//! random seed is drawn and written beside the output as `F.loxo.key` (the format
//! `--seed` reads) once the keys file is read whole, since the filter is useless
//! without it. Repeated keys (listed twice, or covered by overlapping prefixes) count
//! once (and count toward `--max-keys` each time).

use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Read as _, Write as _};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context};
use loxo_bloom::{BinaryFuse16, BinaryFuse8, FuseBuild};
use loxo_core::{KeyHash, Seed};

/// Most addresses one prefix may expand to: `2^MAX_PREFIX_HOST_BITS`.
pub(crate) const MAX_PREFIX_HOST_BITS: u32 = 16;
/// `--max-keys`' default: addresses (after expansion, before deduplication) a keys
/// file may yield.
pub(crate) const DEFAULT_MAX_KEYS: usize = 1 << 20;
/// The largest `--max-keys` (1.2 GB of RAM and 6 s to build, a 38 MB filter at 8 bits).
pub(crate) const MAX_KEYS: usize = 1 << 25;
/// The longest line of a keys file, in bytes (an address with a comment fits many
/// times over).
pub(crate) const MAX_LINE: usize = 4096;
/// Characters of a line an error quotes, at most.
pub(crate) const EXCERPT_CHARS: usize = 80;

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
    /// Most addresses the keys file may expand to (prefixes expanded, repeats
    /// counted): 1..=33554432. A filter takes ≈ 1.13 bytes per address at 8 bits
    /// (2.25 at 16) and ≈ 40 bytes of RAM per address to build.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_KEYS, value_parser = max_keys)]
    max_keys: usize,
}

/// `--fingerprint`: 8 or 16.
fn fingerprint_bits(s: &str) -> Result<u32, String> {
    match s {
        "8" => Ok(8),
        "16" => Ok(16),
        _ => Err(format!("{s:?}: 8 or 16")),
    }
}

/// `--max-keys`: 1..=[`MAX_KEYS`].
fn max_keys(s: &str) -> Result<usize, String> {
    let n: usize = crate::non_negative(s)?;
    if (1..=MAX_KEYS).contains(&n) {
        Ok(n)
    } else {
        Err(format!("{n}: 1..={MAX_KEYS}"))
    }
}

/// Runs `loxo build-filter`.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let file = std::fs::File::open(&a.keys)
        .with_context(|| format!("{}: cannot read", a.keys.display()))?;
    let seed = match &a.seed {
        Some(s) => loxo_cli::key::read_key(s)?,
        None => loxo_cli::key::random_seed(),
    };
    let mut hashes: Vec<KeyHash> = Vec::new();
    for_each_key(BufReader::new(file), a.max_keys, a.fingerprint, |k| {
        hashes.push(seed.hash(k));
    })
    .with_context(|| format!("{}", a.keys.display()))?;
    // The key file only once the keys file is read whole: a refused one leaves none.
    let key_file = if a.seed.is_none() {
        let path = key_path(&a.output);
        write_key(&path, seed)?;
        Some(path)
    } else {
        None
    };
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
        hashes.len(),
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

/// `s` quoted for an error message: at most [`EXCERPT_CHARS`] characters of it, as
/// Rust escapes them (control characters and quotes shown, not acted on), then `…` and
/// its length in bytes when it is longer.
pub(crate) fn excerpt(s: &str) -> String {
    quote(s, true)
}

/// [`excerpt`], with (`len`) or without the length of `s` when it is cut.
fn quote(s: &str, len: bool) -> String {
    let mut out = String::from("\"");
    let mut shown = 0;
    for c in s.chars() {
        let e = c.escape_debug();
        let n = e.clone().count();
        if shown + n > EXCERPT_CHARS {
            out.push_str("\"…");
            if len {
                let _ = write!(out, " ({} bytes)", s.len());
            }
            return out;
        }
        out.extend(e);
        shown += n;
    }
    out.push('"');
    out
}

/// The filter bytes `keys` addresses take at `bits` bits, about: the binary fuse
/// construction's slots per key, `max(1.125, 0.875 + 0.25 · ln 10⁶ / ln n)` (1.125
/// from about 10⁶ keys on, 1.19 at 2^16), one fingerprint each.
fn filter_bytes(keys: usize, bits: u32) -> usize {
    let n = keys.max(2) as f64;
    let per_key = (0.875 + 0.25 * 1e6f64.ln() / n.ln()).max(1.125);
    (keys as f64 * per_key * f64::from(bits) / 8.0) as usize
}

/// Reads a keys file a line at a time and calls `key` with the bytes of each address
/// it yields, in order, prefixes expanded (see the module docs); returns their count.
///
/// # Errors
/// The first line that is not an address or an accepted prefix, is longer than
/// [`MAX_LINE`] bytes or is not UTF-8, or that would take the count past `max_keys`
/// (checked before the prefix is expanded), with its number and an excerpt; I/O
/// errors.
pub(crate) fn for_each_key(
    mut reader: impl BufRead,
    max_keys: usize,
    bits: u32,
    mut key: impl FnMut(&[u8]),
) -> anyhow::Result<usize> {
    let mut line = Vec::new();
    let (mut count, mut number) = (0usize, 0usize);
    loop {
        line.clear();
        let read = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line)
            .with_context(|| format!("line {}: cannot read", number + 1))?;
        if read == 0 {
            return Ok(count);
        }
        number += 1;
        let text = String::from_utf8_lossy(&line);
        if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
            bail!(
                "line {number}: longer than {MAX_LINE} bytes, starting {}",
                quote(&text, false)
            );
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            bail!("line {number}: not UTF-8 text: {}", excerpt(&text));
        };
        let entry = text.split('#').next().unwrap_or("").trim();
        if entry.is_empty() {
            continue;
        }
        let e = excerpt(entry);
        let addresses = Entry::parse(entry).with_context(|| format!("line {number}: {e}"))?;
        let n = addresses.len();
        if count.saturating_add(n) > max_keys {
            bail!(
                "line {number}: {e}: {n} more addresses would pass --max-keys {max_keys} ({} in all: a filter of ≈ {} bytes at {bits} bits); a filter holds addresses, one key each: block wide ranges by a prefix rule outside the filter, or raise --max-keys (≤ {MAX_KEYS})",
                count.saturating_add(n),
                filter_bytes(count.saturating_add(n), bits)
            );
        }
        count += n;
        addresses.for_each(&mut key);
    }
}

/// The keys of a keys file, in order, prefixes expanded, at most [`MAX_KEYS`] of
/// them (`loxo build-theta`'s reader).
///
/// # Errors
/// As [`for_each_key`].
pub(crate) fn parse_keys(text: &str) -> anyhow::Result<Vec<Vec<u8>>> {
    let mut keys = Vec::new();
    for_each_key(text.as_bytes(), MAX_KEYS, 8, |k| keys.push(k.to_vec()))?;
    Ok(keys)
}

/// One entry of a keys file: the addresses `base ..= base + len − 1` of one family.
#[derive(Clone, Copy, Debug)]
struct Entry {
    v4: bool,
    base: u128,
    len: u128,
}

impl Entry {
    /// An address, or a prefix that covers at most `2^MAX_PREFIX_HOST_BITS`
    /// addresses and has no host bit set.
    fn parse(entry: &str) -> anyhow::Result<Self> {
        let Some((addr, len)) = entry.split_once('/') else {
            let ip: IpAddr = entry
                .parse()
                .context("not an IPv4 or IPv6 address, nor a CIDR prefix")?;
            return Ok(Self::new(ip, 1));
        };
        let ip: IpAddr = addr
            .parse()
            .context("the part before '/' is not an IPv4 or IPv6 address")?;
        let width: u32 = if ip.is_ipv4() { 32 } else { 128 };
        let Some(len) = len.parse::<u32>().ok().filter(|&l| l <= width) else {
            bail!("prefix length {} is not 0..={width}", excerpt(len));
        };
        let host_bits = width - len;
        if host_bits > MAX_PREFIX_HOST_BITS {
            bail!(
                "covers 2^{host_bits} addresses; at most 2^16 are expanded (IPv4 /16, IPv6 /112 or longer): split the prefix or block it by a rule outside the filter"
            );
        }
        let e = Self::new(ip, 1 << host_bits);
        if e.base & (e.len - 1) != 0 {
            let net = Self::new(ip, 1).base & !(e.len - 1);
            let net = if e.v4 {
                IpAddr::from(std::net::Ipv4Addr::from(net as u32))
            } else {
                IpAddr::from(std::net::Ipv6Addr::from(net))
            };
            bail!("host bits set: the prefix's network address is {net}");
        }
        Ok(e)
    }

    fn new(ip: IpAddr, len: u128) -> Self {
        match ip {
            IpAddr::V4(v4) => Self {
                v4: true,
                base: u128::from(u32::from(v4)),
                len,
            },
            IpAddr::V6(v6) => Self {
                v4: false,
                base: u128::from(v6),
                len,
            },
        }
    }

    /// Addresses covered (≤ 2^16).
    fn len(self) -> usize {
        self.len as usize
    }

    /// Calls `f` with the key bytes of each address: 4 (IPv4) or 16 (IPv6), network
    /// order.
    fn for_each(self, f: &mut impl FnMut(&[u8])) {
        for offset in 0..self.len {
            let a = self.base | offset;
            if self.v4 {
                f(&(a as u32).to_be_bytes());
            } else {
                f(&a.to_be_bytes());
            }
        }
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

    /// Errors quote at most `EXCERPT_CHARS` characters of a line, escaped, with its
    /// length; the old messages echoed the whole entry (a 50 MB line went to stderr
    /// whole).
    #[test]
    fn errors_quote_a_short_excerpt() {
        assert_eq!(excerpt("10.0.0.1"), "\"10.0.0.1\"");
        let long = "é".repeat(200);
        let e = excerpt(&long);
        assert_eq!(e, format!("\"{}\"… (400 bytes)", "é".repeat(EXCERPT_CHARS)));
        // Escapes count: a terminal control sequence is shown, not sent.
        let e = excerpt(&"\u{1b}[2J".repeat(40));
        assert!(
            e.starts_with("\"\\u{1b}[2J") && e.ends_with("(160 bytes)"),
            "{e}"
        );
        assert!(e.chars().count() <= EXCERPT_CHARS + 20, "{e}");
        for (text, why) in [
            ("x".repeat(1 << 20), "longer than 4096 bytes"),
            (format!("{}/24", "1".repeat(3000)), "before '/'"),
            (format!("10.0.0.0/{}", "9".repeat(3000)), "prefix length"),
            (format!("{}\n", "z".repeat(4000)), "not an IPv4"),
        ] {
            let m = format!("{:#}", parse_keys(&text).unwrap_err());
            assert!(m.contains(why) && m.contains("line 1"), "{m}");
            assert!(m.len() < 400, "{} bytes: {m}", m.len());
        }
        let mut bad = b"10.0.0.1\n".to_vec();
        bad.extend_from_slice(&[0xff; 5000]);
        let m = format!("{:#}", for_each_key(&bad[..], 10, 8, |_| {}).unwrap_err());
        assert!(
            m.contains("line 2: longer than 4096 bytes, starting"),
            "{m}"
        );
        let m = format!(
            "{:#}",
            for_each_key(&b"\xff\xfe\n"[..], 10, 8, |_| {}).unwrap_err()
        );
        assert!(m.contains("line 1: not UTF-8 text"), "{m}");
    }

    /// The key count is checked before a prefix is expanded: a file past `--max-keys`
    /// is refused at the line that passes it, having yielded no key past the cap (512
    /// lines of /16s used to expand to 2^25 keys, 3 GB of RAM).
    #[test]
    fn max_keys_is_checked_before_expanding() {
        let text: String = (0..512).fold(String::new(), |mut t, i| {
            let _ = writeln!(t, "{}.{}.0.0/16", 10 + i / 256, i % 256);
            t
        });
        let mut n = 0usize;
        let e = for_each_key(text.as_bytes(), DEFAULT_MAX_KEYS, 8, |_| n += 1).unwrap_err();
        assert_eq!(n, DEFAULT_MAX_KEYS, "16 /16s");
        let m = format!("{e:#}");
        assert!(
            m.contains("line 17: \"10.16.0.0/16\": 65536 more addresses would pass --max-keys 1048576 (1114112 in all: a filter of ≈ 1253376 bytes at 8 bits)"),
            "{m}"
        );
        let mut n = 0usize;
        let e = for_each_key(&b"192.0.2.1\n2001:db8::/112\n"[..], 65_536, 16, |_| n += 1);
        assert!(format!("{:#}", e.unwrap_err()).contains("line 2:"));
        assert_eq!(n, 1);
        assert_eq!(
            for_each_key(&b"2001:db8::/112\n"[..], 65_536, 16, |_| {}).unwrap(),
            65_536
        );
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
