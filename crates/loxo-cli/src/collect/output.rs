//! Where finalized epochs go: the text printed, the files written, the Redis export.

use std::fmt::Write as _;

use anyhow::Context;

use super::cluster::{store_frame, ClusterSink};
use super::redis::export_redis;
use super::{Collector, EpochSummary, ErrorKind, OutDir};
use crate::resp::Client;

/// Where decoded frames and finalized epochs go.
pub(super) struct Output<'a> {
    pub(super) dir: Option<OutDir>,
    pub(super) redis: Option<&'a mut Client>,
    pub(super) cluster: Option<&'a mut ClusterSink>,
    pub(super) top: usize,
}

impl Output<'_> {
    /// Writes the collector's new frames, reports, writes and exports its finalized
    /// epochs, then prints its new errors.
    pub(super) fn flush(&mut self, c: &mut Collector) {
        for f in c.take_frames() {
            let name = format!("device-{}.{}.loxo", f.device, f.stream.name());
            self.write(c, f.epoch, &name, &f.bytes);
            if let Some(sink) = self.cluster.as_deref_mut() {
                if let Err((kind, msg)) = store_frame(sink, &f) {
                    c.fail(kind, msg);
                }
            }
        }
        for s in c.take_finalized() {
            print!("{}", describe(&s, self.top));
            if let Some(bytes) = s.encode_flows() {
                self.write(c, s.epoch, "fleet.flows.loxo", &bytes);
            }
            if let Some(dir) = &mut self.dir {
                dir.finalized(s.epoch);
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

    /// Writes `DIR/epoch-<epoch>/<name>` (with `--out`); a failure is counted.
    fn write(&mut self, c: &mut Collector, epoch: u32, name: &str, bytes: &[u8]) {
        let Some(dir) = &mut self.dir else {
            return;
        };
        match dir.write(epoch, name, bytes) {
            Ok(removed) => {
                for e in removed {
                    eprintln!(
                        "loxo collect: --out-max-bytes: removed epoch-{e} to make room ({} bytes written now)",
                        dir.used()
                    );
                }
            }
            Err(e) => c.fail(ErrorKind::Output, format!("epoch {epoch}: {e:#}")),
        }
    }
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
