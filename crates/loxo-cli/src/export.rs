//! `loxo export --redis HOST:PORT KEY FILE` (or `--hyll OUT FILE`): write a sketch as a
//! Redis HyperLogLog; `loxo export --datasketches OUT FILE`: write a top-k summary of
//! flow keys as an Apache DataSketches frequent items image.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use loxo_cli::frequent::datasketches_image;
use loxo_cli::resp::{Client, Reply};
use loxo_cli::sketch::{self, AnyHll};

/// Options of `loxo export`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  loxo export --redis 127.0.0.1:6379 flows:epoch-0 sketches/epoch-0.loxo   then PFCOUNT flows:epoch-0
  loxo export --hyll epoch-0.hyll sketches/epoch-0.loxo
  loxo export --datasketches top.bin collected/epoch-0/device-1.topk.loxo")]
pub(crate) struct Args {
    /// `SET` the sketch as key KEY on the Redis server at HOST:PORT.
    #[arg(long, num_args = 2, value_names = ["HOST:PORT", "KEY"], required_unless_present_any = ["hyll", "datasketches"])]
    redis: Option<Vec<String>>,
    /// Also (or instead) write the `HYLL` string to this file.
    #[arg(long, value_name = "FILE")]
    hyll: Option<PathBuf>,
    /// Write a `space-saving` summary of flow keys (a monitor's top-k) as the image of
    /// an Apache DataSketches `frequent_strings_sketch` to OUT, items as the flow keys'
    /// text (Python: `frequent_strings_sketch.deserialize(open(OUT, 'rb').read())`).
    #[arg(long, value_name = "OUT", conflicts_with_all = ["redis", "hyll"])]
    datasketches: Option<PathBuf>,
    /// lg_max_map_size of the DataSketches image (default: the smallest map that holds
    /// the items; a larger one lets a union of many devices keep more items).
    #[arg(long, value_name = "LG", requires = "datasketches")]
    lg_max_map_size: Option<u8>,
    /// The sketch in loxo wire format: an `hll` of precision 14 (Redis's geometry), or
    /// for `--datasketches` a `space-saving` summary of flow keys.
    file: PathBuf,
}

/// Runs `loxo export`: converts the registers exactly, `SET`s the dense `HYLL`
/// string and prints Redis's `PFCOUNT`, which equals loxo's estimate rounded; or
/// writes the DataSketches frequent items image of a top-k summary.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let bytes = sketch::read(&a.file)?;
    if let Some(out) = &a.datasketches {
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
