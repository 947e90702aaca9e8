//! Who may feed the collector: the devices' export keys and the fleet's seed
//! fingerprint (`--keys FILE`), and per device a window of the sequence numbers
//! already accepted, so a replayed datagram is refused and a skipped number is counted
//! as a datagram lost in transit. The keys file's format is on [`Keys`].

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context as _;
use loxo_control::datagram::{ExportKey, SketchDatagram};

use super::ErrorKind;

/// Devices a keys file may list (the collector tracks at most `--max-devices` of
/// them; the window of each costs [`KEY_BYTES`]).
pub const MAX_KEYS: usize = 1 << 20;

/// Sequence numbers below the highest accepted that a device's window remembers: a
/// datagram reordered by less than this is still taken, one older is refused.
pub const WINDOW: u64 = 64;

/// Heap bytes a device of the keys file costs (its key and window, three map
/// entries' worth: a B-tree's slack), fixed when the file is read.
pub const KEY_BYTES: usize = 3 * size_of::<(u32, Device)>();

/// The export keys of the fleet's devices, their replay windows, and the fleet's seed
/// fingerprint.
///
/// # The keys file
///
/// Text, one entry per line; `#` starts a comment, blank lines are skipped:
///
/// ```text
/// # the fleet's seed fingerprint, as `loxo inspect` prints it (16 hex digits)
/// fleet-seed-fingerprint 0123456789abcdef
/// # device id (decimal, or 0x… hex) and its 128-bit export key (32 hex digits, the
/// # firmware's LOXO_EXPORT_KEY)
/// 1 00112233445566778899aabbccddeeff
/// 2 ffeeddccbbaa99887766554433221100
/// ```
///
/// A device listed twice, a malformed line or more than [`MAX_KEYS`] devices is an
/// error naming the line and quoting at most 40 characters of its first word (so a
/// key is never echoed). `--fleet-seed-fingerprint` overrides the file's fingerprint; one of them
/// is required.
#[derive(Debug, Clone)]
pub struct Keys {
    fingerprint: u64,
    devices: BTreeMap<u32, Device>,
}

/// One device's key and what it accepted.
#[derive(Debug, Clone)]
pub(super) struct Device {
    key: ExportKey,
    window: Option<Window>,
}

/// Why an authenticated datagram's sequence number is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stale {
    /// Equal to one already accepted.
    Replayed,
    /// Older than the window.
    TooOld,
}

/// The sequence numbers a device's datagrams carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Window {
    /// The highest accepted.
    highest: u64,
    /// Bit `i`: `highest − i` was accepted (bit 0, `highest` itself, always is).
    seen: u64,
    /// Numbers skipped and not (yet) received: datagrams lost in transit.
    lost: u64,
}

impl Window {
    const fn new(seq: u64) -> Self {
        // Datagrams of this boot before the first one received were lost (the low
        // 32 bits count a boot's datagrams from 0).
        Self {
            highest: seq,
            seen: 1,
            lost: seq & 0xffff_ffff,
        }
    }

    /// Takes `seq` if it is new, counting the numbers it skips.
    fn accept(&mut self, seq: u64) -> Result<(), Stale> {
        if seq > self.highest {
            let ahead = seq - self.highest;
            let skipped = if seq >> 32 == self.highest >> 32 {
                ahead - 1
            } else {
                // A new boot: its datagrams before this one. (The previous boot's
                // after `highest` cannot be known.)
                seq & 0xffff_ffff
            };
            self.lost = self.lost.saturating_add(skipped);
            self.seen = if ahead >= WINDOW {
                1
            } else {
                self.seen << ahead | 1
            };
            self.highest = seq;
            return Ok(());
        }
        let behind = self.highest - seq;
        if behind >= WINDOW {
            return Err(Stale::TooOld);
        }
        if self.seen >> behind & 1 == 1 {
            return Err(Stale::Replayed);
        }
        self.seen |= 1 << behind;
        // Counted as skipped when a later one came (same boot), it was only late.
        if seq >> 32 == self.highest >> 32 {
            self.lost = self.lost.saturating_sub(1);
        }
        Ok(())
    }
}

impl Keys {
    /// No device yet, the fleet's seed `fingerprint`.
    #[must_use]
    pub const fn new(fingerprint: u64) -> Self {
        Self {
            fingerprint,
            devices: BTreeMap::new(),
        }
    }

    /// Adds (or replaces) a device's key.
    #[must_use]
    pub fn with(mut self, device: u32, key: ExportKey) -> Self {
        self.devices.insert(device, Device { key, window: None });
        self
    }

    /// Reads a keys file (format: [`Keys`]); `fingerprint`, when given,
    /// overrides the file's.
    ///
    /// # Errors
    /// An unreadable file, or what [`parse`](Self::parse) finds.
    pub fn load(path: &Path, fingerprint: Option<u64>) -> anyhow::Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read the keys file {}", path.display()))?;
        Self::parse(&text, fingerprint).with_context(|| format!("keys file {}", path.display()))
    }

    /// Parses a keys file's text.
    ///
    /// # Errors
    /// A line that is not an entry, a device listed twice, more than [`MAX_KEYS`]
    /// devices, or no fingerprint in the file nor in `fingerprint`.
    pub fn parse(text: &str, fingerprint: Option<u64>) -> anyhow::Result<Self> {
        let mut file_fp = None;
        let mut devices = BTreeMap::new();
        for (i, line) in text.lines().enumerate() {
            let entry = line.split('#').next().unwrap_or("").trim();
            if entry.is_empty() {
                continue;
            }
            let first = entry.split_whitespace().next().unwrap_or("");
            let bad = |what: &str| {
                let excerpt: String = first.chars().take(40).collect();
                let more = if first.chars().count() > 40 {
                    "…"
                } else {
                    ""
                };
                anyhow::anyhow!("line {} ({excerpt:?}{more}…): {what}", i + 1)
            };
            let mut words = entry.split_whitespace();
            let (Some(a), Some(b), None) = (words.next(), words.next(), words.next()) else {
                return Err(bad("expected `DEVICE KEY` or `fleet-seed-fingerprint HEX`"));
            };
            if a == "fleet-seed-fingerprint" {
                let fp = parse_fingerprint(b).map_err(|e| bad(&e))?;
                if file_fp.replace(fp).is_some() {
                    return Err(bad("a second fleet-seed-fingerprint"));
                }
                continue;
            }
            let device = parse_device(a).ok_or_else(|| bad("not a device id (u32)"))?;
            let key = ExportKey::from_hex(b).ok_or_else(|| bad("not a key (32 hex digits)"))?;
            if devices.len() >= MAX_KEYS {
                return Err(bad(&format!("more than {MAX_KEYS} devices")));
            }
            if devices
                .insert(device, Device { key, window: None })
                .is_some()
            {
                return Err(bad(&format!("device {device} listed twice")));
            }
        }
        let fingerprint = fingerprint.or(file_fp).context(
            "no fleet seed fingerprint: put `fleet-seed-fingerprint HEX` in the keys file or give --fleet-seed-fingerprint",
        )?;
        Ok(Self {
            fingerprint,
            devices,
        })
    }

    /// The fleet's seed fingerprint.
    #[must_use]
    pub const fn fingerprint(&self) -> u64 {
        self.fingerprint
    }

    /// Devices listed.
    #[must_use]
    pub fn len(&self) -> usize {
        self.devices.len()
    }

    /// True when no device is listed.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.devices.is_empty()
    }

    /// `device`'s key, if listed.
    pub(super) fn key(&self, device: u32) -> Option<&ExportKey> {
        self.devices.get(&device).map(|d| &d.key)
    }

    /// Checks `d`, parsed from `bytes`: its device listed, its MAC good under that
    /// device's key, its sequence number new (then recorded); else why not.
    pub(super) fn admit(
        &mut self,
        bytes: &[u8],
        d: &SketchDatagram<'_>,
    ) -> Result<(), (ErrorKind, String)> {
        let what = format!(
            "device {} epoch {} {} datagram {}",
            d.device,
            d.epoch,
            d.stream.name(),
            d.seq
        );
        match self.key(d.device) {
            None => Err((
                ErrorKind::UnknownDevice,
                format!("{what}: not a device of the keys file: refused"),
            )),
            Some(key) if SketchDatagram::authenticate(bytes, key).is_err() => Err((
                ErrorKind::BadMac,
                format!("{what}: its MAC does not verify under the device's key (forged or corrupted): refused"),
            )),
            Some(_) => self.accept(d.device, d.seq).map_err(|stale| {
                let why = match stale {
                    Stale::Replayed => "already received (a replay)".to_owned(),
                    Stale::TooOld => format!("older than the device's last {WINDOW}"),
                };
                (
                    ErrorKind::Replay,
                    format!("{what}: sequence number {why}: refused"),
                )
            }),
        }
    }

    /// Records `seq` from `device` (listed, its datagram authenticated).
    fn accept(&mut self, device: u32, seq: u64) -> Result<(), Stale> {
        let Some(d) = self.devices.get_mut(&device) else {
            return Err(Stale::TooOld);
        };
        if let Some(w) = &mut d.window {
            return w.accept(seq);
        }
        d.window = Some(Window::new(seq));
        Ok(())
    }

    /// Datagrams lost in transit per device, from the gaps in their sequence numbers
    /// (devices that lost none are not listed).
    #[must_use]
    pub fn losses(&self) -> BTreeMap<u32, u64> {
        self.devices
            .iter()
            .filter_map(|(&id, d)| Some((id, d.window?.lost)).filter(|&(_, n)| n > 0))
            .collect()
    }
}

/// A fingerprint: 16 hex digits, `0x` allowed.
///
/// # Errors
/// Anything else.
pub fn parse_fingerprint(s: &str) -> Result<u64, String> {
    let h = s.trim().trim_start_matches("0x");
    if h.is_empty() || h.len() > 16 {
        return Err("not a seed fingerprint (16 hex digits)".to_owned());
    }
    u64::from_str_radix(h, 16).map_err(|_| "not a seed fingerprint (16 hex digits)".to_owned())
}

fn parse_device(s: &str) -> Option<u32> {
    match s.strip_prefix("0x") {
        Some(h) => u32::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_window_refuses_replays_and_counts_gaps() {
        let mut w = Window::new(5);
        assert_eq!(w.lost, 5, "0..5 of the boot never came");
        assert_eq!(w.accept(5), Err(Stale::Replayed));
        assert_eq!(w.accept(8), Ok(()));
        assert_eq!(w.lost, 7);
        assert_eq!(w.accept(7), Ok(()), "late, not lost");
        assert_eq!(w.lost, 6);
        assert_eq!(w.accept(7), Err(Stale::Replayed));
        assert_eq!(w.accept(8 + WINDOW), Ok(()));
        assert_eq!(w.lost, 6 + WINDOW - 1);
        assert_eq!(w.accept(8), Err(Stale::TooOld));
        assert_eq!(w.accept(9), Ok(()), "just inside the window");
        assert_eq!(w.accept(9), Err(Stale::Replayed));
        // A new boot: numbered from boot << 32; its first 3 were lost.
        assert_eq!(w.accept(1 << 32 | 3), Ok(()));
        assert_eq!(w.lost, 6 + WINDOW - 2 + 3);
        assert_eq!(w.accept(70), Err(Stale::TooOld), "the old boot's");
    }

    #[test]
    fn keys_files_parse_or_name_the_line() {
        let k = Keys::parse(
            "# fleet\nfleet-seed-fingerprint 00000000000000ff\n\n1 00112233445566778899aabbccddeeff # a\n0x10 ffeeddccbbaa99887766554433221100\n",
            None,
        )
        .unwrap();
        assert_eq!((k.fingerprint(), k.len()), (0xff, 2));
        assert!(k.key(16).is_some() && k.key(1).is_some() && k.key(2).is_none());
        assert_eq!(Keys::parse("", Some(7)).unwrap().fingerprint(), 7);
        let k = Keys::parse("fleet-seed-fingerprint 1\n", Some(7)).unwrap();
        assert_eq!(k.fingerprint(), 7, "the option overrides the file");
        for (text, msg) in [
            (
                "1 00112233445566778899aabbccddeeff\n",
                "no fleet seed fingerprint",
            ),
            ("fleet-seed-fingerprint xyz\n", "not a seed fingerprint"),
            ("1 0011\n", "line 1 (\"1\"…): not a key"),
            (
                "-1 00112233445566778899aabbccddeeff\n",
                "line 1 (\"-1\"…): not a device id",
            ),
            (
                "1 00112233445566778899aabbccddeeff\n1 00112233445566778899aabbccddeeff",
                "line 2 (\"1\"…): device 1 listed twice",
            ),
            ("1 2 3\n", "line 1 (\"1\"…): expected"),
        ] {
            let e = format!("{:#}", Keys::parse(text, None).unwrap_err());
            assert!(e.contains(msg), "{text:?}: {e}");
        }
        let long = format!("{} 1", "z".repeat(1000));
        let e = format!("{:#}", Keys::parse(&long, Some(1)).unwrap_err());
        assert!(e.len() < 120, "a short excerpt: {e}");
        let e = format!(
            "{:#}",
            Keys::parse("7 00112233445566778899aabbccddeef", Some(1)).unwrap_err()
        );
        assert!(!e.contains("0011"), "no key echoed: {e}");
    }
}
