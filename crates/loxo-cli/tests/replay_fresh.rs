//! `loxo replay`'s control channel is fresh both ways (issue 33 item 3): a session
//! recorded on the wire — the firmware's READY, WELCOME, ACK and DONE frames of an
//! earlier boot — played back to a new `loxo replay` run does not make it report
//! "verdict ok". On protocol version 1, where the host checked a READY under the nonce
//! that same READY announced, the recorded READY/ACK/DONE verified and the run printed
//! "verdict ok" and exited 0 while no firmware had counted a frame.
//!
//! A fake firmware on a loopback UDP socket (as in `capture_replay.rs`) plays the honest
//! device once and records every frame it sends; then an attacker replays those frames
//! to a second run, answering each HELLO, SYNC and END with the recorded reply.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::too_many_lines)]

mod capture_util;

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use capture_util::{dir, ethernet_pcap, frames, stderr, whole};
use loxo_control::{
    Control, Session, OP_ACK, OP_DONE, OP_END, OP_HELLO, OP_READY, OP_SYNC, OP_WELCOME,
};

const KEY: &str = "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf";
const FW_MAC: [u8; 6] = [0x02, 0x4c, 0x4f, 0x58, 0x4f, 0x01];

/// What the fake device does with the host's frames.
enum Device {
    /// Speaks the protocol under `device` nonce; injects `inject` (frames recorded in
    /// another session) before each of its own replies, as an attacker on the link.
    Honest { device: u64, inject: Vec<Vec<u8>> },
    /// Plays back a recorded session: its READY, then the recorded reply of the same
    /// op (and sequence number) to each host frame.
    Replay(Vec<Vec<u8>>),
}

/// Runs `loxo replay FILE` against `device`; returns its output and the frames the
/// device sent.
fn run(file: &Path, device: Device, ready_timeout: &str) -> (Output, Vec<Vec<u8>>) {
    let key = loxo_cli::key::read_key(KEY).unwrap();
    let nic = UdpSocket::bind("127.0.0.1:0").unwrap();
    nic.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let host: SocketAddr = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap()
    };
    let to = nic.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let fw = std::thread::spawn(move || {
        let mut sent: Vec<Vec<u8>> = Vec::new();
        let send = |f: &[u8], sent: &mut Vec<Vec<u8>>| {
            nic.send_to(f, host).unwrap();
            sent.push(f.to_vec());
        };
        let recorded = |op: u8, seq: Option<u32>, rec: &[Vec<u8>]| -> Option<Vec<u8>> {
            rec.iter()
                .find(|f| {
                    loxo_control::peek(f)
                        .is_some_and(|c| c.op == op && seq.is_none_or(|s| s == c.seq))
                })
                .cloned()
        };
        let mut session: Option<Session> = None;
        let mut frames = 0u32;
        let mut heard = false;
        let mut buf = [0u8; 4096];
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline && !stopped.load(Ordering::Relaxed) {
            if !heard {
                let ready = match &device {
                    Device::Honest { device, .. } => loxo_control::build(
                        FW_MAC,
                        Control::with_nonce(OP_READY, *device),
                        &key,
                        Session::announce(*device),
                    )
                    .to_vec(),
                    Device::Replay(rec) => recorded(OP_READY, None, rec).unwrap(),
                };
                send(&ready, &mut sent);
            }
            let Ok((n, _)) = nic.recv_from(&mut buf) else {
                continue;
            };
            heard = true;
            let f = &buf[..n];
            let Some(c) = loxo_control::peek(f) else {
                frames += 1;
                continue;
            };
            match &device {
                Device::Replay(rec) => {
                    let reply = match c.op {
                        OP_HELLO => recorded(OP_WELCOME, None, rec),
                        OP_SYNC => recorded(OP_ACK, Some(c.seq), rec),
                        OP_END => recorded(OP_DONE, None, rec),
                        _ => None,
                    };
                    if let Some(r) = reply {
                        send(&r, &mut sent);
                    }
                }
                Device::Honest { device, inject } => {
                    if c.op == OP_HELLO && session.is_none() {
                        let s = Session {
                            device: *device,
                            host: c.nonce(),
                        };
                        session = loxo_control::verify(f, &key, s).is_ok().then_some(s);
                    }
                    let Some(s) = session else { continue };
                    let Ok(c) = loxo_control::verify(f, &key, s) else {
                        continue;
                    };
                    for i in inject {
                        send(i, &mut sent);
                    }
                    let reply = |op, seq, value, extra| Control {
                        op,
                        seq,
                        value,
                        extra,
                    };
                    let r = match c.op {
                        OP_HELLO => Control::with_nonce(OP_WELCOME, s.host),
                        OP_SYNC => reply(OP_ACK, c.seq, frames, 0),
                        OP_END => reply(OP_DONE, 0, frames, u32::from(frames != c.value)),
                        _ => continue,
                    };
                    send(&loxo_control::build(FW_MAC, r, &key, s), &mut sent);
                }
            }
            if c.op == OP_END {
                break;
            }
        }
        sent
    });
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(["replay", file.to_str().unwrap(), "--control-key", KEY])
        .args(["--to", &to.to_string(), "--from", &host.to_string()])
        .args(["--ready-timeout", ready_timeout, "--timeout", "6"])
        .output()
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    (out, fw.join().unwrap())
}

#[test]
fn a_recorded_session_does_not_verify_in_a_new_one() {
    let d = dir("replay-fresh");
    let file = d.join("small.pcap");
    ethernet_pcap(&file, 65_535, &whole(&frames(300, 0.0, 33)));

    // Session 1: the honest device (boot nonce 1), recorded.
    let device = 0x0000_0001_0000_0001;
    let (out, recorded) = run(
        &file,
        Device::Honest {
            device,
            inject: vec![],
        },
        "20",
    );
    let err = stderr(&out);
    assert!(out.status.success(), "honest session: {err}");
    assert!(err.contains("verdict ok"), "{err}");
    let ops: Vec<u8> = recorded
        .iter()
        .filter_map(|f| loxo_control::peek(f).map(|c| c.op))
        .collect();
    for op in [OP_READY, OP_WELCOME, OP_ACK, OP_DONE] {
        assert!(ops.contains(&op), "op {op} recorded: {ops:?}");
    }

    // Session 2: the recording played back. The recorded READY verifies (it is the
    // key holder's announcement), the HELLO is answered with the recorded WELCOME —
    // under the old host nonce, so it does not verify, nor would the ACKs and DONE.
    let (out, _) = run(&file, Device::Replay(recorded.clone()), "3");
    let err = stderr(&out);
    assert!(!out.status.success(), "a replayed session must fail: {err}");
    assert!(!err.contains("verdict ok"), "{err}");
    assert!(
        err.contains("no session with the firmware") && err.contains("control frames refused"),
        "{err}"
    );

    // Session 3: the honest device of a new boot, the recording injected on the link
    // before each of its replies (a recorded DONE "ok" with another count among them):
    // the run ends with the honest device's figures, the injected frames counted
    // apart and ignored.
    let (out, _) = run(
        &file,
        Device::Honest {
            device: device + 1,
            inject: recorded,
        },
        "20",
    );
    let err = stderr(&out);
    assert!(
        out.status.success(),
        "honest session with injections: {err}"
    );
    assert!(err.contains("verdict ok"), "{err}");
    let ignored: u32 = err
        .split(" unauthenticated control frames ignored")
        .next()
        .and_then(|s| s.rsplit(", ").next())
        .and_then(|s| s.parse().ok())
        .expect("the count of ignored control frames");
    assert!(ignored > 0, "{err}");
}
