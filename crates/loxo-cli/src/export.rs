//! `loxo export --redis HOST:PORT KEY FILE` (or `--hyll OUT FILE`): write a sketch as a
//! Redis HyperLogLog; `loxo export --datasketches OUT FILE`: write a top-k summary of
//! flow keys as an Apache DataSketches frequent items image, or a `theta` frame as a
//! DataSketches compact theta image (dispatched on the frame's kind).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use loxo_cli::frequent::datasketches_image;
use loxo_cli::resp::{Client, Reply};
use loxo_cli::sketch::{self, AnyHll};
use loxo_core::wire::{Frame, SketchKind};

/// Options of `loxo export`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo export --redis 127.0.0.1:6379 flows:epoch-0 sketches/epoch-0.loxo   then PFCOUNT flows:epoch-0
  loxo export --hyll epoch-0.hyll sketches/epoch-0.loxo
  loxo export --datasketches top.bin collected/epoch-0/device-1.topk.loxo
  loxo export --datasketches site-a.theta.bin site-a.loxo
      then Python: compact_theta_sketch.deserialize(open('site-a.theta.bin', 'rb').read(), seed=<printed seed>)")]
pub(crate) struct Args {
    /// `SET` the sketch as key KEY on the Redis server at HOST:PORT.
    #[arg(long, num_args = 2, value_names = ["HOST:PORT", "KEY"], required_unless_present_any = ["hyll", "datasketches"])]
    redis: Option<Vec<String>>,
    /// Also (or instead) write the `HYLL` string to this file.
    #[arg(long, value_name = "FILE")]
    hyll: Option<PathBuf>,
    /// Write a `space-saving` summary of flow keys (a monitor's top-k) as the image of
    /// an Apache DataSketches `frequent_strings_sketch` to OUT, items as the flow keys'
    /// text (Python: `frequent_strings_sketch.deserialize(open(OUT, 'rb').read())`);
    /// or a `theta` frame as a DataSketches compact theta image (serial version 3),
    /// whose seed is the loxo seed's fingerprint (Python:
    /// `compact_theta_sketch.deserialize(open(OUT, 'rb').read(), seed=<fingerprint>)`,
    /// the seed printed).
    #[arg(long, value_name = "OUT", conflicts_with_all = ["redis", "hyll"])]
    datasketches: Option<PathBuf>,
    /// lg_max_map_size of the DataSketches image (default: the smallest map that holds
    /// the items; a larger one lets a union of many devices keep more items).
    #[arg(long, value_name = "LG", requires = "datasketches")]
    lg_max_map_size: Option<u8>,
    /// For a `theta` frame `loxo setop` wrote of DataSketches images read under
    /// `--ds-seed S`: that `S` (default 9001), which the image gets back. Other frames
    /// are exported under their fingerprint.
    #[arg(long, value_name = "S", requires = "datasketches", default_value_t = loxo_interop::theta::DEFAULT_UPDATE_SEED, value_parser = loxo_cli::theta_ds::parse_ds_seed)]
    ds_seed: u64,
    /// The sketch in loxo wire format: an `hll` of precision 14 (Redis's geometry), or
    /// for `--datasketches` a `space-saving` summary of flow keys or a `theta` sketch.
    file: PathBuf,
}

/// Runs `loxo export`: converts the registers exactly, `SET`s the dense `HYLL`
/// string and prints Redis's `PFCOUNT`, which equals loxo's estimate rounded; or
/// writes the DataSketches frequent items image of a top-k summary.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let bytes = sketch::read(&a.file)?;
    if let Some(out) = &a.datasketches {
        let is_theta = Frame::parse(&bytes).is_ok_and(|f| f.header().kind == SketchKind::Theta);
        if is_theta {
            return export_theta(a, out, &bytes);
        }
        let img = datasketches_image(&bytes, a.lg_max_map_size)
            .with_context(|| format!("{}", a.file.display()))?;
        std::fs::write(out, &img.bytes)
            .with_context(|| format!("{}: cannot write", out.display()))?;
        println!(
            "{}: frequent_strings_sketch of {} items ({} of {} candidates monitored), \
             stream weight {}, maximum error {} ({} bytes)",
            out.display(),
            img.items,
            img.monitored,
            img.capacity,
            img.total,
            img.offset,
            img.bytes.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let (hll, _) = AnyHll::decode(&bytes).with_context(|| format!("{}", a.file.display()))?;
    let Some(p14) = hll.as_p14() else {
        bail!(
            "{}: Redis HyperLogLogs have precision 14, this sketch has {}",
            a.file.display(),
            hll.precision()
        );
    };
    let (redis, hyll) = loxo_cli::collect::redis_hyll(p14)?;
    if let Some(path) = &a.hyll {
        std::fs::write(path, &hyll).with_context(|| format!("{}: cannot write", path.display()))?;
    }
    if let Some([addr, key]) = a.redis.as_deref() {
        let mut c = Client::connect(addr)?;
        match c.checked(&[b"SET", key.as_bytes(), &hyll])? {
            Reply::Status(s) if s == "OK" => {}
            r => bail!("unexpected reply to SET: {r:?}"),
        }
        let count = c.integer(&[b"PFCOUNT", key.as_bytes()])?;
        println!(
            "SET {key} ({} bytes): PFCOUNT {count} (loxo estimate {:.1})",
            hyll.len(),
            hll.estimate()
        );
        if u64::try_from(count).ok() != Some(redis.count()) {
            bail!("Redis counted {count}, loxo expected {}", redis.count());
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `--datasketches` of a `theta` frame: the compact theta image and the seed
/// DataSketches must be given.
fn export_theta(a: &Args, out: &std::path::Path, frame: &[u8]) -> anyhow::Result<ExitCode> {
    if a.lg_max_map_size.is_some() {
        bail!("--lg-max-map-size is for frequent items images, not theta sketches");
    }
    let e = loxo_cli::theta_ds::export(frame, a.ds_seed)
        .with_context(|| format!("{}", a.file.display()))?;
    std::fs::write(out, &e.bytes).with_context(|| format!("{}: cannot write", out.display()))?;
    let s = &e.summary;
    println!(
        "{}: compact theta image (serial version 3) of {} values, θ = {:.6}, estimate {:.1} ({} bytes)",
        out.display(),
        s.retained,
        s.theta,
        s.estimate,
        e.bytes.len()
    );
    println!(
        "DataSketches seed {} (seed hash {:04x}): Python compact_theta_sketch.deserialize(bytes, seed={}), \
         theta_union(lg_k, seed={0}) …; Java Sketch.wrap(mem, {0}L)",
        e.update_seed,
        loxo_interop::theta::compute_seed_hash(e.update_seed),
        e.update_seed
    );
    Ok(ExitCode::SUCCESS)
}
