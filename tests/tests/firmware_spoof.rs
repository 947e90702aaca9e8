//! A capture full of spoofed and recorded control frames changes nothing: the
//! firmware in QEMU, fed a 20 000-frame trace with forged END / SYNC / ACK frames
//! mixed in (random tags, the wrong key, the right key under another boot's nonce)
//! and the host side of a session recorded from an earlier boot (its HELLO — byte for
//! byte as `loxo replay` sent it then — SYNCs and END under that session's nonces),
//! obeys none of them,
//! counts every one in `control_rejected` — apart from traffic: neither the frame
//! count nor the verdict moves — and ends with verdict ok. On the unauthenticated
//! protocol one such END stopped it with `sent=0` and a MISMATCH; on protocol
//! version 1 each refused frame was counted as traffic (an injected one turned the
//! verdict to MISMATCH), and two boots in one second shared a nonce, so a recorded
//! session of the other boot verified.
//!
//! The earlier boot is a short run of its own (300 frames): its log gives the device
//! nonce and the host nonce the session ran under, from which the recording is
//! rebuilt, and its boot's nonce must differ from the second boot's (both draw a boot
//! counter and the TRNG stand-in, `firmware/src/nonce.rs`).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use loxo_cli::trace::{generate, TraceConfig};
use loxo_control::{build, Control, Session, OP_ACK, OP_END, OP_HELLO, OP_SYNC};
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

/// `loxo replay`'s source address (`crates/loxo-cli/src/replay.rs`).
const HOST_MAC: [u8; 6] = [0x02, 0x4C, 0x4F, 0x58, 0x4F, 0x02];

/// The `report.` pairs of a `cargo xtask demo --summary` output.
fn report(stdout: &str) -> BTreeMap<&str, &str> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("report."))
        .filter_map(|l| l.split_once('='))
        .collect()
}

fn hex(v: &str) -> u64 {
    u64::from_str_radix(v.trim_start_matches("0x"), 16).unwrap()
}

/// The host's frames of the session `s` as `loxo replay` sent them: HELLO, a SYNC per
/// batch (at most 128 frames each, every frame sent counted), END.
fn recorded_session(s: Session, sent: u32) -> Vec<[u8; 60]> {
    let k = key(CONTROL_KEY);
    let c = |op, seq, value| Control {
        op,
        seq,
        value,
        extra: 0,
    };
    let mut out = vec![build(
        HOST_MAC,
        Control::with_nonce(OP_HELLO, s.host),
        &k,
        s,
    )];
    let batches = sent.div_ceil(128);
    for b in 0..batches {
        out.push(build(
            HOST_MAC,
            c(OP_SYNC, b, (128 * (b + 1)).min(sent)),
            &k,
            s,
        ));
    }
    out.push(build(HOST_MAC, c(OP_END, batches, sent), &k, s));
    out
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
            let mut f = build(
                attacker,
                c(op, 1000 + i, 5),
                &Seed::new(0, 0),
                Session::default(),
            );
            f[30..38].copy_from_slice(&u64::from(i).wrapping_mul(0x9e37_79b9).to_le_bytes());
            out.push(f);
        }
        // The wrong key.
        out.push(build(
            attacker,
            c(OP_END, 1000 + i, 5),
            &Seed::new(1, 2),
            Session { device: 7, host: 7 },
        ));
        // The right key under another boot's nonce: a frame recorded from another run.
        out.push(build(
            attacker,
            c(OP_END, 1000 + i, 5),
            &key(CONTROL_KEY),
            Session {
                device: u64::from(i),
                host: 1,
            },
        ));
    }
    out
}

#[test]
fn spoofed_control_frames_change_nothing() {
    let tmp = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("firmware-spoof");
    std::fs::create_dir_all(&tmp).unwrap();
    let env = [
        ("LOXO_DEVICE_SEED", DEVICE_SEED),
        ("LOXO_CONTROL_KEY", CONTROL_KEY),
    ];

    // The earlier boot: a short honest run, whose session is then "recorded".
    let first = loxo_tests::demo::run(
        &["--frames", "300", "--seed", "5", "--timeout", "600"],
        &env,
    );
    let first_out = String::from_utf8_lossy(&first.stdout);
    assert!(first.status.success(), "first boot: {first_out}");
    let r1 = report(&first_out);
    let earlier = Session {
        device: hex(r1["control.device_nonce"]),
        host: hex(r1["session.host_nonce"]),
    };
    let first_sent: u32 = r1["final.sent"].parse().unwrap();
    assert_eq!(r1["control.entropy"], "host-urandom", "{first_out}");

    let pcap = tmp.join("spoofed.pcap");
    let mut spoof = spoofed();
    let recording = recorded_session(earlier, first_sent);
    spoof.extend(recording.iter().copied());
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
        // Frames of the control EtherType are sent, but counted apart on both sides.
        if (14..=2048).contains(&f.len()) && loxo_control::peek(f).is_none() {
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
    let out = loxo_tests::demo::run(&["--timeout", "600", "--pcap", &pcap_arg], &env);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "demo failed: {}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report = report(&stdout);
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
    assert_ne!(
        hex(report["control.device_nonce"]),
        earlier.device,
        "a new boot, a new device nonce"
    );
    // The boot counter (`out/boot-counter`, the flash page's stand-in) moved on: the
    // nonces differ whatever the clock says, two boots in one second included.
    let count = |r: &BTreeMap<&str, &str>| -> u64 { r["control.boot_counter"].parse().unwrap() };
    assert!(
        count(&r1) > 0,
        "the first boot found its counter: {first_out}"
    );
    assert!(
        count(&report) > count(&r1),
        "the second boot counted on from the first"
    );
    assert_eq!(
        get("final.sent"),
        sent,
        "replay sent every data frame, and counted the control ones apart"
    );
    assert_eq!(
        get("final.frames"),
        sent,
        "the firmware counted every data frame, and no control frame, as traffic"
    );
    assert_eq!(
        get("final.control_rejected"),
        spoof.len() as u64,
        "every spoofed or recorded control frame was refused"
    );
    assert!(stdout.contains("verdict: ok"), "{stdout}");
}
