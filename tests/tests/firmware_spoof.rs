//! A capture full of spoofed control frames changes nothing: the firmware in QEMU,
//! fed a 20 000-frame trace with forged END / SYNC / ACK frames mixed in (random
//! tags, the wrong key, the right key under another boot's nonce), obeys none of
//! them, counts every one (`control_rejected`), treats them as ordinary traffic and
//! ends with verdict ok. On the unauthenticated protocol one such END stopped it with
//! `sent=0` and a MISMATCH.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use loxo_cli::trace::{generate, TraceConfig};
use loxo_control::{build, Control, OP_ACK, OP_END, OP_SYNC};
use loxo_core::Seed;
use pcap_file::pcap::{PcapPacket, PcapWriter};

/// Fixed test provisioning (tests may use fixed values; devices may not).
const DEVICE_SEED: &str = "5e5e5e5e5e5e5e5e0123456789abcdef";
const CONTROL_KEY: &str = "c0c0c0c0c0c0c0c0fedcba9876543210";

fn key(hex: &str) -> Seed {
    let b: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    Seed::from_bytes(b.try_into().unwrap())
}

/// The spoofed frames: what an attacker on the link can send.
fn spoofed() -> Vec<[u8; 60]> {
    let attacker = [0x02, 0x66, 0x66, 0x66, 0x66, 0x66];
    let c = |op, seq, value| Control {
        op,
        seq,
        value,
        extra: 0,
    };
    let mut out = Vec::new();
    for i in 0..5u32 {
        // Forged tags: the protocol's layout, garbage where the tag goes.
        for op in [OP_END, OP_SYNC, OP_ACK] {
            let mut f = build(attacker, c(op, 1000 + i, 5), &Seed::new(0, 0), 0);
            f[30..38].copy_from_slice(&u64::from(i).wrapping_mul(0x9e37_79b9).to_le_bytes());
            out.push(f);
        }
        // The wrong key.
        out.push(build(attacker, c(OP_END, 1000 + i, 5), &Seed::new(1, 2), 7));
        // The right key under another boot's nonce: a frame recorded from another run.
        out.push(build(
            attacker,
            c(OP_END, 1000 + i, 5),
            &key(CONTROL_KEY),
            u64::from(i),
        ));
    }
    out
}

#[test]
fn spoofed_control_frames_change_nothing() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("firmware-spoof");
    std::fs::create_dir_all(&tmp).unwrap();
    let pcap = tmp.join("spoofed.pcap");
    let spoof = spoofed();
    let mut w = PcapWriter::new(std::fs::File::create(&pcap).unwrap()).unwrap();
    let cfg = TraceConfig {
        packets: 20_000,
        flows: 2_000,
        seed: 31,
        ..TraceConfig::default()
    };
    let (mut sent, mut i) = (0u64, 0u64);
    let every = 20_000 / spoof.len() as u64;
    let mut write = |f: &[u8], w: &mut PcapWriter<std::fs::File>| {
        i += 1;
        if (14..=2048).contains(&f.len()) {
            sent += 1;
        }
        w.write_packet(&PcapPacket::new(
            Duration::from_micros(i),
            f.len() as u32,
            f,
        ))
        .unwrap();
    };
    let mut n = 0u64;
    let mut next_spoof = spoof.iter();
    generate(&cfg, |f| {
        n += 1;
        write(f, &mut w);
        if n % every == every / 2 {
            if let Some(s) = next_spoof.next() {
                write(s, &mut w);
            }
        }
        Ok::<(), ()>(())
    })
    .unwrap();
    drop(w);
    assert_eq!(
        next_spoof.count(),
        0,
        "every spoofed frame went into the capture"
    );

    let pcap_arg = pcap.to_string_lossy().into_owned();
    let out = loxo_tests::demo::run(
        env!("CARGO_TARGET_TMPDIR"),
        &["--timeout", "600", "--pcap", &pcap_arg],
        &[
            ("LOXO_DEVICE_SEED", DEVICE_SEED),
            ("LOXO_CONTROL_KEY", CONTROL_KEY),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report: BTreeMap<&str, &str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("report."))
        .filter_map(|l| l.split_once('='))
        .collect();
    let get = |k: &str| -> u64 {
        report
            .get(k)
            .unwrap_or_else(|| panic!("{k} missing:\n{stdout}"))
            .parse()
            .unwrap()
    };
    println!(
        "sent {sent}: firmware counted {}, refused {} control frames",
        get("final.frames"),
        get("final.control_rejected")
    );
    assert_eq!(
        get("final.sent"),
        sent,
        "replay sent every frame, spoofed ones too"
    );
    assert_eq!(
        get("final.frames"),
        sent,
        "the firmware counted every one as a frame"
    );
    assert_eq!(
        get("final.control_rejected"),
        spoof.len() as u64,
        "every spoofed control frame was refused"
    );
    assert!(stdout.contains("verdict: ok"), "{stdout}");
}
