//! `loxo gen`'s scan and DDoS classes and the truth of their participants (issue 28
//! item 4), through the binary: for each class, `loxo gen --participants-min 1` over
//! two firmware epochs (2 × 16 384 frames) writes a participants file listing every
//! key, and
//! * the file is the pcap's truth: the pcap read back and parsed here by
//!   `loxo_flow::parse_frame` (never the generator's records), epochs cut every
//!   16 384 records, gives every key's spread — each source's distinct destinations,
//!   each destination's distinct sources, each (source, destination)'s distinct
//!   destination ports — and each role's distinct (key, element) pairs, exactly the
//!   file's;
//! * the designed participants are the class's (its scanners or victims, as many as
//!   `--scanners`/`--victims` or the class's default), each at ≥ 1 % of its epoch's
//!   pairs, and they are the top spreads of their role: every other key is below a
//!   tenth of the smallest designed spread.
//!
//! Runs the `loxo` binary `cargo test --workspace` builds (`loxo_tests::demo::loxo`).
//! Cost once built: about a second per class.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fs::File;
use std::io::BufReader;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use loxo_cli::trace::{participants_path, read_participants, Role, SpreadKey};
use loxo_flow::{parse_frame, FlowKey, Parsed};
use pcap_file::pcap::PcapReader;

/// The firmware's `EPOCH_FRAMES`, `loxo gen --epoch`'s default.
const EPOCH: usize = 16_384;

/// The `loxo` binary of this test run.
fn loxo() -> PathBuf {
    loxo_tests::demo::loxo()
}

fn addr(b: &[u8]) -> IpAddr {
    match <[u8; 4]>::try_from(b) {
        Ok(a) => IpAddr::from(a),
        Err(_) => IpAddr::from(<[u8; 16]>::try_from(b).unwrap()),
    }
}

/// One epoch's spreads, counted from parsed keys with sets of their own.
#[derive(Default)]
struct Counted {
    pairs: HashSet<(IpAddr, IpAddr)>,
    triples: HashSet<(IpAddr, IpAddr, u16)>,
}

impl Counted {
    fn add(&mut self, k: &FlowKey) {
        let (s, d) = (addr(k.src_bytes()), addr(k.dst_bytes()));
        self.pairs.insert((s, d));
        self.triples.insert((s, d, k.dst_port()));
    }

    /// Every key's spread.
    fn spreads(&self) -> HashMap<SpreadKey, u64> {
        let mut m: HashMap<SpreadKey, u64> = HashMap::new();
        for &(s, d) in &self.pairs {
            *m.entry(SpreadKey::Source(s)).or_default() += 1;
            *m.entry(SpreadKey::Destination(d)).or_default() += 1;
        }
        for &(s, d, _) in &self.triples {
            *m.entry(SpreadKey::Pair(s, d)).or_default() += 1;
        }
        m
    }

    fn pairs(&self, role: Role) -> u64 {
        match role {
            Role::FanOut | Role::FanIn => self.pairs.len() as u64,
            Role::DstPorts => self.triples.len() as u64,
        }
    }
}

/// The pcap's epochs, parsed.
fn parse_epochs(pcap: &Path) -> Vec<Counted> {
    let mut r = PcapReader::new(File::open(pcap).unwrap()).unwrap();
    let mut epochs: Vec<Counted> = Vec::new();
    let mut n = 0;
    while let Some(p) = r.next_packet() {
        if n % EPOCH == 0 {
            epochs.push(Counted::default());
        }
        if let Ok(Parsed::Flow(f)) = parse_frame(&p.unwrap().data) {
            epochs.last_mut().unwrap().add(&f.key);
        }
        n += 1;
    }
    epochs
}

#[test]
fn gen_names_every_participant_of_the_scan_and_ddos_classes() {
    let loxo = loxo();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gen-participants");
    std::fs::create_dir_all(&dir).unwrap();
    // (class, options, designed participants and their role)
    let runs: [(&str, &[&str], usize, &[Role]); 7] = [
        ("hscan", &[], 4, &[Role::FanOut]),
        ("vscan", &[], 2, &[Role::DstPorts]),
        ("ddos-v4", &[], 1, &[Role::FanIn]),
        ("ddos-v6", &["--victims", "2"], 2, &[Role::FanIn]),
        ("ddos-multi", &[], 4, &[Role::FanIn]),
        ("scan-hidden", &[], 4, &[Role::FanOut, Role::DstPorts]),
        (
            "hscan",
            &["--scanners", "7", "--spread", "900"],
            7,
            &[Role::FanOut],
        ),
    ];
    for (i, (class, opts, designed, roles)) in runs.into_iter().enumerate() {
        let name = format!("{class} {}", opts.join(" "));
        let pcap = dir.join(format!("{i}-{class}.pcap"));
        let out = Command::new(&loxo)
            .args(["gen", "-o", pcap.to_str().unwrap(), "--class", class])
            .args([
                "-n",
                &(2 * EPOCH).to_string(),
                "--seed",
                &(40 + i).to_string(),
            ])
            .args(["--participants-min", "1"])
            .args(opts)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );

        let rows = read_participants(BufReader::new(
            File::open(participants_path(&pcap)).unwrap(),
        ))
        .unwrap();
        let epochs = parse_epochs(&pcap);
        assert_eq!(epochs.len(), 2, "{name}");
        for (e, counted) in epochs.iter().enumerate() {
            let listed: Vec<_> = rows.iter().filter(|r| r.epoch == e as u64).collect();
            // The file is the pcap's truth: every key (minimum 1), its exact spread.
            let file: HashMap<SpreadKey, u64> = listed.iter().map(|r| (r.key, r.spread)).collect();
            assert_eq!(file.len(), listed.len(), "{name}: a key listed twice");
            assert_eq!(file, counted.spreads(), "{name}, epoch {e}");
            for r in &listed {
                assert_eq!(r.pairs, counted.pairs(r.key.role()), "{name}: {r:?}");
            }

            // The designed participants: the class's, in its roles, at ≥ 1 % of their
            // role's pairs, and the top spreads by a factor of ten.
            let ours: Vec<_> = listed.iter().filter(|r| r.designed).collect();
            assert_eq!(ours.len(), designed, "{name}, epoch {e}");
            let used: BTreeSet<Role> = ours.iter().map(|r| r.key.role()).collect();
            assert_eq!(used, roles.iter().copied().collect(), "{name}");
            for role in Role::ALL {
                let pairs = counted.pairs(role) as f64;
                let of = |d: bool| {
                    listed
                        .iter()
                        .filter(move |r| r.key.role() == role && r.designed == d)
                };
                let least = of(true).map(|r| r.spread).min();
                let other = of(false).map(|r| r.spread).max().unwrap_or(0);
                if let Some(least) = least {
                    assert!(
                        least as f64 >= 0.01 * pairs,
                        "{name}, {role}: {least} of {pairs}"
                    );
                    assert!(
                        10 * other < least,
                        "{name}, {role}: {other} against {least}"
                    );
                }
                println!(
                    "{name}, epoch {e}, {role}: {} designed, smallest spread {least:?} of {pairs} pairs, largest other {other}",
                    of(true).count()
                );
            }
        }
    }
}
