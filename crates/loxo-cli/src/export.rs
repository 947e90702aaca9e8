//! `loxo export --redis HOST:PORT KEY FILE` (or `--hyll OUT FILE`): write a sketch as a Redis HyperLogLog.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context};
use loxo_cli::resp::{Client, Reply};
use loxo_cli::sketch::{self, AnyHll};
use loxo_interop::redis::{RedisHll, DENSE_LEN};

/// Options of `loxo export`.
#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// `SET` the sketch as key KEY on the Redis server at HOST:PORT.
    #[arg(long, num_args = 2, value_names = ["HOST:PORT", "KEY"], required_unless_present = "hyll")]
    redis: Option<Vec<String>>,
    /// Also (or instead) write the `HYLL` string to this file.
    #[arg(long, value_name = "FILE")]
    hyll: Option<PathBuf>,
    /// An `hll` sketch of precision 14 (Redis's geometry) in loxo wire format.
    file: PathBuf,
}

/// Runs `loxo export`: converts the registers exactly, `SET`s the dense `HYLL`
/// string and prints Redis's `PFCOUNT`, which equals loxo's estimate rounded.
pub(crate) fn run(a: &Args) -> anyhow::Result<ExitCode> {
    let bytes = sketch::read(&a.file)?;
    let (hll, _) = AnyHll::decode(&bytes).with_context(|| format!("{}", a.file.display()))?;
    let Some(p14) = hll.as_p14() else {
        bail!(
            "{}: Redis HyperLogLogs have precision 14, this sketch has {}",
            a.file.display(),
            hll.precision()
        );
    };
    let redis = RedisHll::from_hll(p14);
    let mut hyll = vec![0u8; DENSE_LEN];
    let n = redis.encode_dense_into(&mut hyll)?;
    hyll.truncate(n);
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
