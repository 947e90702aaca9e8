//! Where finalized epochs go: the text printed, the files written, the Redis export.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;

use super::redis::export_redis;
use super::{Collector, EpochSummary, ErrorKind};
use crate::resp::Client;

/// Where finalized epochs go.
pub(super) struct Output<'a> {
    pub(super) dir: Option<&'a Path>,
    pub(super) redis: Option<&'a mut Client>,
    pub(super) top: usize,
}

impl Output<'_> {
    /// Prints the collector's new errors, then reports, writes and exports its
    /// finalized epochs.
    pub(super) fn flush(&mut self, c: &mut Collector) {
        for s in c.take_finalized() {
            print!("{}", describe(&s, self.top));
            if let Some(dir) = self.dir {
                if let Err(e) = write_epoch(dir, &s) {
                    c.fail(ErrorKind::Output, format!("epoch {}: {e:#}", s.epoch));
                }
            }
            if let (Some(client), Some(hll)) = (self.redis.as_deref_mut(), &s.flows) {
                let key = format!("loxo:flows:epoch:{}", s.epoch);
                let r = hll
                    .as_p14()
                    .context("Redis HyperLogLogs have precision 14")
                    .and_then(|h| export_redis(client, &key, h));
                match r {
                    Ok(n) => println!("  redis: PFMERGE {key}: PFCOUNT {n}"),
                    Err(e) => c.fail(ErrorKind::Output, format!("{key}: {e:#}")),
                }
            }
        }
        for m in c.take_messages() {
            eprintln!("loxo collect: error: {m}");
        }
    }
}

/// Writes an epoch's frames and its fleet HLL under `dir/epoch-<n>/`.
///
/// # Errors
/// I/O errors, with the path.
pub fn write_epoch(dir: &Path, s: &EpochSummary) -> anyhow::Result<()> {
    let dir = dir.join(format!("epoch-{}", s.epoch));
    std::fs::create_dir_all(&dir).with_context(|| format!("{}: cannot create", dir.display()))?;
    let write = |name: String, bytes: &[u8]| {
        let path = dir.join(name);
        std::fs::write(&path, bytes).with_context(|| format!("{}: cannot write", path.display()))
    };
    for f in &s.frames {
        write(
            format!("device-{}.{}.loxo", f.device, f.stream.name()),
            &f.bytes,
        )?;
    }
    if let Some(bytes) = s.encode_flows() {
        write("fleet.flows.loxo".to_owned(), &bytes)?;
    }
    Ok(())
}

/// The text `loxo collect` prints for an epoch.
#[must_use]
pub fn describe(s: &EpochSummary, top: usize) -> String {
    let list = |d: &[u32]| d.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    let mut out = String::new();
    let devices = s.devices();
    let _ = writeln!(
        out,
        "epoch {}: {} device(s): {}",
        s.epoch,
        devices.len(),
        list(&devices)
    );
    for f in s.frames.iter().filter(|f| !f.merged) {
        let _ = writeln!(
            out,
            "  device {} {}: seed fingerprint {:016x}, not merged",
            f.device,
            f.stream.name(),
            f.fingerprint
        );
    }
    match &s.flows {
        Some(h) => {
            let _ = writeln!(
                out,
                "  fleet distinct flows: {:.0} (relative standard error {:.2} %; devices {}; seed fingerprint {:016x})",
                h.estimate(),
                100.0 * h.relative_standard_error(),
                list(&s.flows_devices),
                s.fingerprint.unwrap_or_default()
            );
        }
        None => {
            let _ = writeln!(out, "  fleet distinct flows: no sketch merged");
        }
    }
    if s.top_devices.is_empty() {
        let _ = writeln!(out, "  fleet top flows: no summary merged");
        return out;
    }
    let _ = writeln!(
        out,
        "  fleet top flows (devices {}; total {}; count = sum of the devices' counts, f within [lower, upper]; any unlisted flow ≤ {}):",
        list(&s.top_devices),
        s.top_total,
        s.unlisted_upper
    );
    for (i, e) in s.top.iter().take(top).enumerate() {
        let _ = writeln!(
            out,
            "  {:>3}. {}  count {} [{}, {}] on {} device(s)",
            i + 1,
            e.key,
            e.count,
            e.lower,
            e.upper,
            e.devices
        );
    }
    out
}
