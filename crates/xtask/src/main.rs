//! `cargo xtask demo`: the firmware demo in one command.
//!
//! Builds the firmware for `thumbv7em-none-eabihf` and the `loxo` host tool,
//! generates a trace with `loxo gen` (or takes `--pcap FILE`), boots the
//! firmware in QEMU `mps2-an386` with its LAN9118 wired to two free loopback
//! UDP ports, replays the trace with `loxo replay`, and prints the firmware's
//! defmt log decoded with `defmt-decoder`. Every child has a deadline and is
//! killed on drop: the command never hangs.
//!
//! Exit code: 0 when QEMU exited 0 (the firmware's verdict) and the replay
//! succeeded, 1 otherwise. When the replay fails (a missing or unreadable capture,
//! a truncated one) QEMU gets a few seconds to finish and is then stopped: the
//! command does not wait out its deadline. `--summary` also prints the report's
//! `key=value` pairs one per line (`report.KEY=VALUE`) for scripts and tests. The
//! firmware's `cost:` and `epoch_cost:` lines (SysTick ticks × 40/128) count
//! instructions only under `--icount` (`-icount shift=7`, [`ICOUNT_SHIFT`]); without
//! it, they are left out.
//!
//! `--blocklist` also writes a blocklist of the trace's addresses (`out/blocklist.txt`:
//! the source of every 40th flow, the first flow's destination, and a /22 that never
//! occurs), builds it with `loxo build-filter` under the device seed and flashes it:
//! the log then has a `blocklisted:` line per epoch and the largest blocklisted flows.
//!
//! `LOXO_HOST_TOOL=PATH` runs that `loxo` binary instead of building the host tool
//! in release: the workspace's tests pass the one `cargo test --workspace` already
//! built, which saves CI a second, release (fat-LTO) build of the host tool.

use std::io::{Read, Write};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};

const USAGE: &str =
    "usage: cargo xtask demo [--frames N] [--seed N] [--pcap FILE] [--sketch-dir DIR] [--icount] [--timeout SECS] [--summary] [--batch-bytes N] [--ack-timeout SECS] [--blocklist]";

#[derive(Debug)]
struct Opts {
    frames: u64,
    seed: u64,
    sketch_dir: Option<PathBuf>,
    pcap: Option<PathBuf>,
    icount: bool,
    timeout: u64,
    summary: bool,
    /// `loxo replay --batch-bytes` (None: replay's default, which fits the RX FIFO).
    batch_bytes: Option<usize>,
    /// `loxo replay --timeout`: seconds for each ACK (a SYNC is sent up to three
    /// times within it) and for DONE (None: replay's default). A test that loses
    /// SYNC frames on purpose waits less with a short one.
    ack_timeout: Option<u64>,
    /// Flash a generated blocklist (`--blocklist`; it costs the monitor ~70
    /// instructions per frame on the demo trace: 973 instead of 860 per frame,
    /// within the 1 000 budget, asserted by `tests/firmware_blocklist.rs`).
    blocklist: bool,
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("xtask: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> anyhow::Result<ExitCode> {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("demo") => {}
        Some("decode") => {
            let elf = args.next().context(USAGE)?;
            let mut log = Vec::new();
            std::io::stdin().read_to_end(&mut log)?;
            for l in decode(&std::fs::read(&elf).context("reading the ELF")?, &log)? {
                println!("{l}");
            }
            return Ok(ExitCode::SUCCESS);
        }
        _ => bail!("{USAGE}"),
    }
    let mut o = Opts {
        frames: 100_000,
        seed: 7,
        sketch_dir: None,
        pcap: None,
        icount: false,
        timeout: 600,
        summary: false,
        batch_bytes: None,
        ack_timeout: None,
        blocklist: false,
    };
    while let Some(a) = args.next() {
        let mut val = || {
            args.next()
                .with_context(|| format!("{a} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--frames" => o.frames = val()?.parse().context("--frames")?,
            "--pcap" => o.pcap = Some(PathBuf::from(val()?)),
            "--seed" => o.seed = val()?.parse().context("--seed")?,
            "--sketch-dir" => o.sketch_dir = Some(PathBuf::from(val()?)),
            "--timeout" => o.timeout = val()?.parse().context("--timeout")?,
            "--icount" => o.icount = true,
            "--summary" => o.summary = true,
            "--blocklist" => o.blocklist = true,
            "--batch-bytes" => o.batch_bytes = Some(val()?.parse().context("--batch-bytes")?),
            "--ack-timeout" => o.ack_timeout = Some(val()?.parse().context("--ack-timeout")?),
            _ => bail!("unknown option {a}\n{USAGE}"),
        }
    }
    if let Some(p) = &o.pcap {
        // Before the builds: a wrong path should not cost minutes.
        anyhow::ensure!(p.is_file(), "--pcap {}: no such file", p.display());
    }
    if let Some(tool) = std::env::var_os("LOXO_HOST_TOOL") {
        let tool = Path::new(&tool);
        anyhow::ensure!(
            tool.is_file(),
            "LOXO_HOST_TOOL={}: no such file",
            tool.display()
        );
    }
    demo(&o)
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())
}

fn check(status: std::process::ExitStatus, what: &str) -> anyhow::Result<()> {
    if status.success() {
        Ok(())
    } else {
        bail!("{what} failed ({status})")
    }
}

/// Installs what a fresh machine lacks: the Cortex-M4F target, QEMU and nfdump (the
/// IPFIX collector the demo exports to).
fn ensure_tools() -> anyhow::Result<()> {
    if Command::new("rustup").arg("--version").output().is_ok() {
        let out = Command::new("rustup")
            .args(["target", "list", "--installed"])
            .output()?;
        if !String::from_utf8_lossy(&out.stdout).contains("thumbv7em-none-eabihf") {
            eprintln!("xtask: installing the thumbv7em-none-eabihf target");
            check(
                Command::new("rustup")
                    .args(["target", "add", "thumbv7em-none-eabihf"])
                    .status()?,
                "rustup target add",
            )?;
        }
    }
    let has = |tool: &str, arg: &str| {
        Command::new(tool)
            .arg(arg)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let mut missing = Vec::new();
    if !has("qemu-system-arm", "--version") {
        missing.push("qemu-system-arm");
    }
    if !has("nfdump", "-V") {
        missing.push("nfdump");
    }
    if missing.is_empty() {
        return Ok(());
    }
    let is_root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"));
    if is_root && Path::new("/usr/bin/apt-get").exists() {
        eprintln!("xtask: installing {} with apt-get", missing.join(" "));
        check(
            Command::new("apt-get").arg("update").status()?,
            "apt-get update",
        )?;
        check(
            Command::new("apt-get")
                .args(["install", "-y", "--no-install-recommends"])
                .args(&missing)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()?,
            "apt-get install",
        )?;
        return Ok(());
    }
    bail!(
        "{} missing; install with: sudo apt-get install {}",
        missing.join(" and "),
        missing.join(" ")
    )
}

/// A child process killed when dropped.
struct Guard(Child, &'static str);

impl Guard {
    fn wait(&mut self, deadline: Instant) -> anyhow::Result<std::process::ExitStatus> {
        loop {
            if let Some(s) = self.0.try_wait()? {
                return Ok(s);
            }
            if Instant::now() >= deadline {
                let _ = self.0.kill();
                bail!("{} did not finish in time and was killed", self.1);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// `nfcapd`, the IPFIX/NetFlow collector of nfdump, receiving the firmware's export
/// (through `loxo replay`'s gateway) into `dir`.
struct Nfcapd {
    child: Guard,
    dir: PathBuf,
}

impl Nfcapd {
    fn start(dir: &Path, port: u16) -> anyhow::Result<Self> {
        // A fresh directory: the listing is this run's flows only.
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir)?;
        let child = Command::new("nfcapd")
            .args([
                "-b",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-t",
                "3600",
                "-w",
            ])
            .arg(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .context("starting nfcapd")?;
        eprintln!(
            "xtask: nfcapd collecting IPFIX on 127.0.0.1:{port} into {}",
            dir.display()
        );
        Ok(Self {
            child: Guard(child, "nfcapd"),
            dir: dir.to_owned(),
        })
    }

    /// Stops nfcapd (SIGTERM: it closes its file) and lists what it received with
    /// `nfdump`; `None` if either failed.
    fn finish(mut self) -> Option<String> {
        let pid = self.child.0.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        self.child
            .wait(Instant::now() + Duration::from_secs(10))
            .ok()?;
        let out = Command::new("nfdump")
            .arg("-R")
            .arg(&self.dir)
            .args(["-N", "-q", "-6", "-o"])
            .arg("fmt:%ts %td %pr %sap -> %dap %pkt %byt")
            .output()
            .ok()?;
        let _ = std::fs::remove_dir_all(&self.dir);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// Seconds without a datagram after which the demo's `loxo collect` stops.
const COLLECT_IDLE_SECS: u64 = 30;

/// `loxo collect`, receiving the firmware's sketch datagrams into `dir`.
struct Collect {
    child: Guard,
    /// Closed by `finish`: the collector then stops once 100 ms pass without a
    /// datagram (`--stop-on-eof`), instead of waiting out its idle timeout.
    stdin: Option<std::process::ChildStdin>,
    stdout: std::thread::JoinHandle<String>,
}

impl Collect {
    fn start(loxo: &Path, dir: &Path, keys: &Path, port: u16) -> anyhow::Result<Self> {
        let mut child = Command::new(loxo)
            .args(["collect", "--listen", &format!("127.0.0.1:{port}")])
            // Only the device's authenticated datagrams, from `loxo replay`'s
            // forwarding socket on the loopback.
            .arg("--keys")
            .arg(keys)
            .args(["--allow-from", "127.0.0.0/8"])
            .arg("--out")
            .arg(dir)
            // It stops COLLECT_IDLE_SECS after the last datagram (the firmware sends
            // its last epoch's before its verdict). Longer than an epoch's run: under
            // `-icount` on a loaded 2-core machine an epoch took up to 18 s, and a 2 s
            // idle stop collected only the first epoch.
            .args(["--timeout", &COLLECT_IDLE_SECS.to_string()])
            .args(["--devices", "1", "--top", "3", "--stop-on-eof"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .context("starting loxo collect")?;
        let stdin = child.stdin.take();
        let mut out = child.stdout.take().context("loxo collect stdout")?;
        let stdout = std::thread::spawn(move || {
            let mut s = String::new();
            let _ = out.read_to_string(&mut s);
            s
        });
        Ok(Self {
            child: Guard(child, "loxo collect"),
            stdin,
            stdout,
        })
    }

    /// Tells it the device is done (closes its input: it stops after 100 ms without
    /// a datagram), waits (≤ [`COLLECT_IDLE_SECS`] + 10 s) for it to stop; whether it
    /// succeeded, and what it printed. Called after the firmware's run ended, so every
    /// datagram it sent is on its way.
    fn finish(mut self) -> Option<(bool, String)> {
        drop(self.stdin.take());
        let status = self
            .child
            .wait(Instant::now() + Duration::from_secs(COLLECT_IDLE_SECS + 10));
        drop(self.child);
        let out = self.stdout.join().ok()?;
        Some((status.is_ok_and(|s| s.success()), out))
    }
}

/// The keys file of the demo's `loxo collect` (`out/collect-PORT.keys`, one per run):
/// the fleet's seed fingerprint (the device seed's) and the device's export key under
/// its id (`LOXO_OBSERVATION_DOMAIN`, 1 by default, as the firmware build reads it).
fn collect_keys(out_dir: &Path, seed: &Path, export: &Path, port: u16) -> anyhow::Result<PathBuf> {
    let hex16 = |p: &Path| -> anyhow::Result<[u8; 16]> {
        let h = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
        let h = h.trim();
        let mut b = [0u8; 16];
        for (i, x) in b.iter_mut().enumerate() {
            *x = h
                .get(2 * i..2 * i + 2)
                .and_then(|d| u8::from_str_radix(d, 16).ok())
                .with_context(|| format!("{}: not 32 hex digits", p.display()))?;
        }
        Ok(b)
    };
    let fingerprint = loxo_core::Seed::from_bytes(hex16(seed)?).fingerprint();
    let domain = std::env::var("LOXO_OBSERVATION_DOMAIN").unwrap_or_else(|_| "1".to_owned());
    let key = std::fs::read_to_string(export)?;
    let path = out_dir.join(format!("collect-{port}.keys"));
    std::fs::write(
        &path,
        format!(
            "# loxo collect --keys: written by cargo xtask demo\nfleet-seed-fingerprint {fingerprint:016x}\n{} {}\n",
            domain.trim(),
            key.trim()
        ),
    )?;
    Ok(path)
}

/// Two distinct free UDP ports on 127.0.0.1 (bound, read, released).
fn free_ports() -> anyhow::Result<(u16, u16)> {
    let a = UdpSocket::bind("127.0.0.1:0")?;
    let b = UdpSocket::bind("127.0.0.1:0")?;
    Ok((a.local_addr()?.port(), b.local_addr()?.port()))
}

fn demo(o: &Opts) -> anyhow::Result<ExitCode> {
    let start = Instant::now();
    let deadline = start + Duration::from_secs(o.timeout);
    ensure_tools()?;
    let root = root();

    let out_dir = root.join("out");
    std::fs::create_dir_all(&out_dir)?;
    let (seed_file, key_file) = provisioning(&out_dir)?;
    let export_file = provision(&out_dir.join("export.key"), "LOXO_EXPORT_KEY")?;
    let loxo = build_loxo(&root)?;

    let pcap = demo_trace(o, &loxo, &out_dir)?;
    let blocklist = if o.blocklist {
        Some(make_blocklist(&loxo, &pcap, &out_dir, &seed_file)?)
    } else {
        None
    };
    let elf = build_firmware(
        &root,
        &seed_file,
        (&key_file, &export_file),
        blocklist.as_deref(),
    )?;

    let (host_port, nic_port) = free_ports()?;
    let mut qemu = qemu_command((host_port, nic_port), o.icount);
    qemu.arg("-kernel")
        .arg(&elf)
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    eprintln!("xtask: booting QEMU mps2-an386, NIC on 127.0.0.1:{nic_port}, host on 127.0.0.1:{host_port}");
    let mut qemu = Guard(qemu.spawn().context("starting qemu-system-arm")?, "QEMU");
    let mut stdout = qemu.0.stdout.take().context("QEMU stdout")?;
    let reader = std::thread::spawn(move || {
        let mut log = Vec::new();
        let _ = stdout.read_to_end(&mut log);
        log
    });

    let (collector_port, sketch_port) = free_ports()?;
    // One directory per run (tests run demos side by side), removed once listed.
    let nfcapd_dir = out_dir.join(format!("nfcapd-{collector_port}"));
    let nfcapd = Nfcapd::start(&nfcapd_dir, collector_port)?;
    let keys = collect_keys(&out_dir, &seed_file, &export_file, sketch_port)?;
    let collect = Collect::start(&loxo, &out_dir.join("collect"), &keys, sketch_port)?;
    let mut replay = replay_command(
        &loxo,
        &pcap,
        &key_file,
        (host_port, nic_port),
        (collector_port, sketch_port),
        o,
    );
    let mut replay = Guard(
        replay.spawn().context("starting loxo replay")?,
        "loxo replay",
    );
    let replay_status = replay.wait(deadline);
    // A successful replay ends with the firmware's DONE, and QEMU exits right after;
    // a failed one may have stopped before END (an unreadable capture: the firmware
    // waits for frames forever), so QEMU only gets a few seconds to finish.
    let qemu_status = qemu.wait(
        if replay_status
            .as_ref()
            .is_ok_and(std::process::ExitStatus::success)
        {
            deadline
        } else {
            (Instant::now() + Duration::from_secs(5)).min(deadline)
        },
    );
    drop(qemu);
    let log = reader.join().unwrap_or_default();

    let elf_bytes = std::fs::read(&elf)?;
    let lines = decode(&elf_bytes, &log)?;
    print_log(&lines, o.summary, o.icount);
    let listing = nfcapd.finish();
    let fleet = collect.finish();
    let replay_ok = replay_status
        .as_ref()
        .is_ok_and(std::process::ExitStatus::success);
    let qemu_ok = qemu_status
        .as_ref()
        .is_ok_and(std::process::ExitStatus::success);
    let firmware = if !replay_ok && qemu_status.is_err() {
        "stopped: it was still waiting for frames when the replay failed".to_owned()
    } else {
        format!("exit {}", describe(&qemu_status))
    };
    let collected = print_collectors(fleet.as_ref(), listing.as_deref());
    eprintln!(
        "xtask: replay {}, firmware {firmware}, collector {}, {:.1}s",
        describe(&replay_status),
        if collected { "ok" } else { "EMPTY" },
        start.elapsed().as_secs_f64()
    );
    Ok(if replay_ok && qemu_ok && collected {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// What both collectors received: `loxo collect`'s epochs, then nfdump's listing.
/// Whether both got something.
fn print_collectors(fleet: Option<&(bool, String)>, listing: Option<&str>) -> bool {
    let sketches = fleet.is_some_and(|(ok, out)| {
        println!("--- loxo collect: the firmware's sketch datagrams, merged per epoch ---");
        print!("{out}");
        *ok
    });
    print_listing(listing) && sketches
}

/// The demo ends with what the collector received: nfdump's listing of the flows the
/// firmware exported over IPFIX (its elephants, IP bytes and packets). Whether there
/// was any.
fn print_listing(listing: Option<&str>) -> bool {
    let Some(l) = listing else {
        eprintln!("xtask: nfdump listed nothing (nfcapd failed?)");
        return false;
    };
    println!("--- nfdump: the firmware's IPFIX export as nfcapd received it ---");
    println!(
        "Date first seen          Duration Proto      Src IP Addr:Port ->      Dst IP Addr:Port   Packets    Bytes"
    );
    print!("{l}");
    println!("({} flow records)", l.lines().count());
    !l.trim().is_empty()
}

/// `-icount shift` under `--icount`: one instruction is 2⁷ ns of virtual time, 3.2
/// ticks of the board's 25 MHz SysTick, so the firmware's tick counts give exact
/// instruction counts (`firmware/src/board.rs`: `ICOUNT_SHIFT`, which must match).
const ICOUNT_SHIFT: u32 = 7;

/// QEMU mps2-an386 with its LAN9118 on a UDP datagram netdev: the NIC at
/// 127.0.0.1:`nic`, talking to 127.0.0.1:`host`.
fn qemu_command((host, nic): (u16, u16), icount: bool) -> Command {
    let netdev = format!(
        "dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port={nic},\
         remote.type=inet,remote.host=127.0.0.1,remote.port={host}"
    );
    let mut qemu = Command::new("qemu-system-arm");
    qemu.args(["-cpu", "cortex-m4", "-machine", "mps2-an386", "-nographic"])
        .args(["-monitor", "none", "-serial", "null"])
        .args(["-semihosting-config", "enable=on,target=native"])
        .args(["-netdev", &netdev, "-net", "nic,model=lan9118,netdev=n0"]);
    if icount {
        qemu.args(["-icount", &format!("shift={ICOUNT_SHIFT}")]);
    }
    // Extra QEMU options, as `qemu-run.sh` takes them (e.g. `-d exec,nochain -D
    // FILE` to profile the firmware by translation block).
    if let Ok(extra) = std::env::var("LOXO_QEMU_ARGS") {
        qemu.args(extra.split_whitespace());
    }
    qemu
}

/// `loxo replay` of `pcap` to the NIC at 127.0.0.1:`nic` from 127.0.0.1:`host`.
fn replay_command(
    loxo: &Path,
    pcap: &Path,
    key_file: &Path,
    (host, nic): (u16, u16),
    (ipfix, sketches): (u16, u16),
    o: &Opts,
) -> Command {
    let mut replay = Command::new(loxo);
    replay
        .arg("replay")
        .arg(pcap)
        .arg("--control-key")
        .arg(key_file)
        .args(["--to", &format!("127.0.0.1:{nic}")])
        .args(["--from", &format!("127.0.0.1:{host}")])
        // The firmware's IPFIX (to its collector 10.0.2.2:4739) into nfcapd, its
        // sketch datagrams (to 10.0.2.2:4740) into `loxo collect`.
        .args(["--forward", &format!("4739=127.0.0.1:{ipfix}")])
        .args(["--forward", &format!("4740=127.0.0.1:{sketches}")]);
    if let Some(dir) = &o.sketch_dir {
        replay.arg("--sketch-dir").arg(dir);
    }
    if let Some(b) = o.batch_bytes {
        replay.args(["--batch-bytes", &b.to_string()]);
    }
    if let Some(t) = o.ack_timeout {
        replay.args(["--timeout", &t.to_string()]);
    }
    replay
}

/// Provisioning outside the source tree: the device seed and the control key, drawn
/// once from the OS RNG and kept in `out/` (ignored by git); returns their files.
fn provisioning(out_dir: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    let seed_file = provision(&out_dir.join("device.seed"), "LOXO_DEVICE_SEED")?;
    let key_file = provision(&out_dir.join("control.key"), "LOXO_CONTROL_KEY")?;
    eprintln!(
        "xtask: device seed from {} (a demo provisioning value: a product draws its seed from its TRNG at boot), control key from {}",
        seed_file.display(),
        key_file.display()
    );
    Ok((seed_file, key_file))
}

/// 32 hex digits in a file: `path`, created from `/dev/urandom` if missing — or, if
/// the environment variable `var` is set (a test's fixed seed, a fleet's shared
/// one), a file next to it holding that value.
fn provision(path: &Path, var: &str) -> anyhow::Result<PathBuf> {
    if let Ok(v) = std::env::var(var) {
        let v = v.trim();
        anyhow::ensure!(
            v.len() == 32 && v.bytes().all(|b| b.is_ascii_hexdigit()),
            "{var} must be 32 hex digits"
        );
        let p = path.with_extension("from-env");
        // Written aside and renamed into place: demos run side by side (a test
        // binary's tests) never read a half-written file.
        let tmp = path.with_extension(format!("from-env.{}", std::process::id()));
        std::fs::write(&tmp, v)?;
        std::fs::rename(&tmp, &p)?;
        return Ok(p);
    }
    if !path.exists() {
        let mut b = [0u8; 16];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut b))
            .context("reading /dev/urandom")?;
        let hex = b.iter().fold(String::new(), |mut s, x| {
            let _ = std::fmt::Write::write_fmt(&mut s, format_args!("{x:02x}"));
            s
        });
        // Another run may create it at the same moment: the first writer wins.
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(mut f) => f.write_all(hex.as_bytes())?,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e).with_context(|| format!("creating {}", path.display())),
        }
    }
    Ok(path.to_path_buf())
}

/// The demo's trace: `--pcap FILE`, or a seeded `loxo gen` trace (with its truth)
/// in `out_dir`.
fn demo_trace(o: &Opts, loxo: &Path, out_dir: &Path) -> anyhow::Result<PathBuf> {
    Ok(if let Some(p) = &o.pcap {
        p.clone()
    } else {
        let p = out_dir.join(format!("demo-{}.pcap", o.seed));
        eprintln!("xtask: generating {} frames into {}", o.frames, p.display());
        // Zipf(1.0) over 10 000 flows (IPv4/IPv6/VLAN/QinQ, fragments, ICMP), 1 %
        // malformed frames, seeded: the same trace on every machine.
        check(
            Command::new(loxo)
                .arg("gen")
                .arg("--output")
                .arg(&p)
                .args(["--packets", &o.frames.to_string()])
                .args(["--flows", "10000", "--zipf", "1.0", "--malformed", "0.01"])
                .args(["--seed", &o.seed.to_string()])
                .status()?,
            "loxo gen",
        )?;
        p
    })
}

/// Addresses of the demo's generated blocklist that never occur in a trace: the
/// benchmarking range 198.18.0.0/15's first /22 (1 024 addresses, a CIDR line that
/// `loxo build-filter` expands).
const BLOCKLIST_NOISE: &str = "198.18.0.0/22";
/// Every this-many-th distinct flow of the trace (in order of first appearance) has
/// its source address blocklisted.
const BLOCKLIST_EVERY: usize = 40;

/// Writes the demo's blocklist — the source of every [`BLOCKLIST_EVERY`]-th flow of
/// the trace, the destination of the trace's first flow, and [`BLOCKLIST_NOISE`] —
/// to `out/blocklist.txt`, and builds it with `loxo build-filter` under the device
/// seed into `out/blocklist.loxo`, the frame the firmware flashes. The flows are
/// read from the generator's truth beside the pcap; a pcap without one
/// (`--pcap`) gets the noise addresses only.
fn make_blocklist(
    loxo: &Path,
    pcap: &Path,
    out_dir: &Path,
    seed: &Path,
) -> anyhow::Result<PathBuf> {
    let mut lines = vec![
        "# cargo xtask demo: a generated blocklist (flows of the demo trace + never-seen addresses)".to_owned(),
        BLOCKLIST_NOISE.to_owned(),
    ];
    if let Ok(truth) = std::fs::read_to_string(pcap.with_extension("truth.csv")) {
        let mut flows = std::collections::HashSet::new();
        let mut first_dst = None;
        for row in truth.lines().skip(1) {
            // frame,len,ip_len,expected,error,damage,fragment,flood,src,dst,src_port,dst_port,protocol
            let f: Vec<&str> = row.split(',').collect();
            let (Some(&"flow"), Some(&src), Some(&dst)) = (f.get(3), f.get(8), f.get(9)) else {
                continue;
            };
            let key = f.get(8..13).map(|k| k.join(","));
            if flows.insert(key) {
                first_dst.get_or_insert_with(|| dst.to_owned());
                if flows.len() % BLOCKLIST_EVERY == 0 {
                    lines.push(src.to_owned());
                }
            }
        }
        lines.extend(first_dst);
    }
    let txt = out_dir.join("blocklist.txt");
    std::fs::write(&txt, lines.join("\n") + "\n")?;
    let frame = out_dir.join("blocklist.loxo");
    check(
        Command::new(loxo)
            .arg("build-filter")
            .arg(&txt)
            .arg("--seed")
            .arg(seed)
            .arg("-o")
            .arg(&frame)
            .status()?,
        "loxo build-filter",
    )?;
    eprintln!(
        "xtask: blocklist of {} entries ({}) flashed from {}",
        lines.len() - 1,
        txt.display(),
        frame.display()
    );
    Ok(frame)
}

/// Builds the `loxo` host tool; returns its path. With `LOXO_HOST_TOOL` set, that
/// binary instead (it must exist), and nothing is built.
fn build_loxo(root: &Path) -> anyhow::Result<PathBuf> {
    if let Some(tool) = std::env::var_os("LOXO_HOST_TOOL") {
        // Checked to exist before anything was built (`run`).
        return Ok(PathBuf::from(tool));
    }
    eprintln!("xtask: building the loxo host tool");
    check(
        Command::new(cargo())
            .args(["build", "--release", "-p", "loxo-cli"])
            .current_dir(root)
            .status()?,
        "loxo build",
    )?;
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
    Ok(target_dir.join("release/loxo"))
}

/// Builds the firmware ELF, provisioned with the seed, control-key and export-key
/// files and flashing
/// `blocklist`; returns its path.
fn build_firmware(
    root: &Path,
    seed: &Path,
    (key, export): (&Path, &Path),
    blocklist: Option<&Path>,
) -> anyhow::Result<PathBuf> {
    eprintln!("xtask: building the firmware (release, thumbv7em-none-eabihf)");
    let fw_dir = root.join("firmware");
    let read = |p: &Path| -> anyhow::Result<String> {
        Ok(std::fs::read_to_string(p)
            .with_context(|| format!("reading {}", p.display()))?
            .trim()
            .to_owned())
    };
    let mut build = Command::new(cargo());
    build
        .args(["build", "--release"])
        .current_dir(&fw_dir)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("LOXO_BLOCKLIST")
        .env("LOXO_DEVICE_SEED", read(seed)?)
        .env("LOXO_CONTROL_KEY", read(key)?)
        .env("LOXO_EXPORT_KEY", read(export)?);
    if let Some(b) = blocklist {
        build.env("LOXO_BLOCKLIST", b);
    }
    check(build.status()?, "firmware build")?;
    Ok(fw_dir.join("target/thumbv7em-none-eabihf/release/loxo-firmware"))
}

/// Prints the decoded log, and with `summary` its `key=value` pairs. The `cost:` and
/// `epoch_cost:` lines are SysTick ticks × 40/128: instructions only under `-icount
/// shift=7` (`icount`); without it the figure is host time, so they are left out.
fn print_log(lines: &[String], summary: bool, icount: bool) {
    let shown = |l: &&String| {
        let msg = l.get(6..).unwrap_or("");
        icount || !(msg.starts_with("cost:") || msg.starts_with("epoch_cost:"))
    };
    println!("--- firmware log (defmt, decoded) ---");
    for l in lines.iter().filter(shown) {
        println!("{l}");
    }
    if !icount {
        eprintln!("xtask: per-frame instruction counts need --icount (the firmware's cost line is left out)");
    }
    if summary {
        for l in lines.iter().filter(shown) {
            let msg = l.get(6..).unwrap_or("");
            let Some((section, kv)) = msg.split_once(": ") else {
                continue;
            };
            for pair in kv.split_whitespace() {
                if let Some((k, v)) = pair.split_once('=') {
                    println!("report.{section}.{k}={v}");
                }
            }
        }
    }
}

fn describe(s: &anyhow::Result<std::process::ExitStatus>) -> String {
    match s {
        Ok(s) => s.to_string(),
        Err(e) => format!("{e:#}"),
    }
}

/// Decodes a defmt (rzCOBS) byte stream with the ELF's defmt table.
fn decode(elf: &[u8], log: &[u8]) -> anyhow::Result<Vec<String>> {
    let table = defmt_decoder::Table::parse(elf)?.context("the firmware ELF has no defmt table")?;
    let mut dec = table.new_stream_decoder();
    dec.received(log);
    let mut lines = Vec::new();
    loop {
        match dec.decode() {
            Ok(frame) => lines.push(format!(
                "{:<5} {}",
                frame
                    .level()
                    .map_or_else(|| "print".to_owned(), |l| l.as_str().to_owned()),
                frame.display_message()
            )),
            Err(defmt_decoder::DecodeError::UnexpectedEof) => break,
            Err(defmt_decoder::DecodeError::Malformed) => {
                lines.push("(malformed defmt frame skipped)".to_owned());
            }
        }
    }
    Ok(lines)
}
