//! `loxo replay` reads captures as `loxo top` does (issue 15 item 5): pcapng with
//! several interfaces and link types, any snap length, a truncated file. A fake
//! firmware on a loopback UDP socket speaks the authenticated control protocol
//! (`loxo-control`: READY with a device nonce, WELCOME to the host's HELLO, ACK per
//! SYNC, DONE after END, all tagged under both nonces) and records every
//! frame it receives; they must be the capture's frames as Ethernet frames at their
//! wire length (zeros past a snap length), without the ones whose headers the snap
//! length cut and the ones the NIC cannot carry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod capture_util;

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use capture_util::{
    dir, ethernet_pcap, frames, headers_cut, snapped, spread, stderr, write_pcapng, Rec,
};
use loxo_control::{
    Control, Session, OP_ACK, OP_DONE, OP_END, OP_HELLO, OP_READY, OP_SYNC, OP_WELCOME,
};
use pcap_file::{DataLink, Endianness};

const KEY: &str = "0f0e0d0c0b0a09080706050403020100";
const FW_MAC: [u8; 6] = [0x02, 0x4c, 0x4f, 0x58, 0x4f, 0x01];

/// What the fake firmware saw.
struct Seen {
    frames: Vec<Vec<u8>>,
    /// The frame count END announced.
    end: Option<u32>,
}

/// Runs `loxo replay FILE` against a fake firmware; returns its output and what the
/// firmware received.
fn replay(file: &Path) -> (Output, Seen) {
    let key = loxo_cli::key::read_key(KEY).unwrap();
    let nic = UdpSocket::bind("127.0.0.1:0").unwrap();
    nic.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let host: SocketAddr = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap()
    };
    let to = nic.local_addr().unwrap();
    let firmware = std::thread::spawn(move || {
        let device = 0x1234_5678_9abc_def0u64;
        let ready = loxo_control::build(
            FW_MAC,
            Control::with_nonce(OP_READY, device),
            &key,
            Session::announce(device),
        );
        let mut session: Option<Session> = None;
        let mut seen = Seen {
            frames: vec![],
            end: None,
        };
        let mut buf = [0u8; 4096];
        let mut heard = false;
        let deadline = Instant::now() + Duration::from_mins(1);
        while Instant::now() < deadline {
            if !heard {
                let _ = nic.send_to(&ready, host);
            }
            let Ok((n, _)) = nic.recv_from(&mut buf) else {
                continue;
            };
            heard = true;
            let f = &buf[..n];
            let hello = loxo_control::peek(f).filter(|c| c.op == OP_HELLO);
            if let Some(h) = hello {
                let s = Session {
                    device,
                    host: h.nonce(),
                };
                if session.is_none() && loxo_control::verify(f, &key, s).is_ok() {
                    session = Some(s);
                }
                if session == Some(s) {
                    let w = Control::with_nonce(OP_WELCOME, s.host);
                    nic.send_to(&loxo_control::build(FW_MAC, w, &key, s), host)
                        .unwrap();
                }
                continue;
            }
            let verified = session.and_then(|s| loxo_control::verify(f, &key, s).ok());
            if let (Some(c), Some(s)) = (verified, session) {
                let count = seen.frames.len() as u32;
                let reply = |op, seq, value, extra| {
                    let c = Control {
                        op,
                        seq,
                        value,
                        extra,
                    };
                    nic.send_to(&loxo_control::build(FW_MAC, c, &key, s), host)
                        .unwrap();
                };
                match c.op {
                    OP_SYNC => reply(OP_ACK, c.seq, count, 0),
                    OP_END => {
                        seen.end = Some(c.value);
                        reply(OP_DONE, 0, count, u32::from(count != c.value));
                        break;
                    }
                    _ => {}
                }
                continue;
            }
            seen.frames.push(f.to_vec());
        }
        seen
    });
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(["replay", file.to_str().unwrap(), "--control-key", KEY])
        .args(["--to", &to.to_string(), "--from", &host.to_string()])
        .args(["--ready-timeout", "20", "--timeout", "10"])
        .output()
        .unwrap();
    (out, firmware.join().unwrap())
}

/// The frames a firmware must receive for Ethernet records `records`: those the NIC
/// can carry (14..=2047 bytes) whose headers the snap length left whole — by the
/// test's own oracle (`capture_util::headers_cut`), not by `loxo_flow`'s
/// `parse_frame_captured`, which `loxo replay` runs.
fn expected(records: &[Rec]) -> Vec<Vec<u8>> {
    records
        .iter()
        .filter(|(data, orig)| {
            (14..=2047).contains(&(*orig as usize)) && !headers_cut(data, *orig as usize)
        })
        .map(|(data, orig)| {
            let mut f = data.clone();
            f.resize(*orig as usize, 0);
            f
        })
        .collect()
}

/// Checks what the fake firmware got against `want`, the frames the oracle says
/// `loxo replay` must send. Deterministic: END announces exactly `want.len()` frames
/// (the replay's own count of what it sent), and every frame received is the next
/// one of `want` (in order, byte for byte, nothing that was not to be sent). UDP over
/// loopback does not promise delivery, so a datagram may be lost under load; the
/// protocol then promises an honest report, which is asserted instead: DONE carries
/// the firmware's count, the replay prints it, calls it a mismatch and exits
/// non-zero. Returns the number of frames lost (0 on a quiet machine).
fn check_delivery(out: &Output, seen: &Seen, want: &[Vec<u8>]) -> usize {
    assert_eq!(
        seen.end,
        Some(want.len() as u32),
        "END announces every frame to be sent"
    );
    let mut rest = want.iter();
    for (i, got) in seen.frames.iter().enumerate() {
        assert!(
            rest.any(|w| w == got),
            "received frame {i} ({} bytes) is not among the frames still to come",
            got.len()
        );
    }
    let lost = want.len() - seen.frames.len();
    let err = stderr(out);
    assert!(
        err.contains(&format!("firmware counted {},", seen.frames.len())),
        "the replay reports the firmware's count: {err}"
    );
    if lost > 0 {
        println!("{lost} of {} datagrams lost on loopback", want.len());
        assert!(err.contains("verdict mismatch"), "{err}");
        assert!(!out.status.success(), "a loss must fail the replay: {err}");
    } else {
        assert!(err.contains("verdict ok"), "{err}");
    }
    lost
}

#[test]
fn replay_sends_pcapng_of_any_link_type_and_snap_length() {
    let d = dir("capture-replay-pcapng");
    let frames = frames(6_000, 0.3, 12);
    let layout: [&[(DataLink, u32)]; 2] = [
        &[
            (DataLink::ETHERNET, 64),
            (DataLink::RAW, 0),
            (DataLink::LINUX_SLL, 96),
        ],
        &[
            (DataLink::ETHERNET, 0),
            (DataLink::LINUX_SLL2, 128),
            (DataLink::NULL, 0),
            (DataLink::IPV6, 0),
        ],
    ];
    let (sections, reference) = spread(&frames, &layout);
    let file = d.join("mixed.pcapng");
    write_pcapng(&file, &sections, Endianness::Little);
    let want = expected(&reference);
    assert!(want.len() < frames.len(), "some frames are not sent");
    let (out, seen) = replay(&file);
    if check_delivery(&out, &seen, &want) == 0 {
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let snapped = reference
        .iter()
        .filter(|(d, o)| (14..=2047).contains(&(*o as usize)) && headers_cut(d, *o as usize))
        .count();
    assert!(snapped > 0);
    assert!(
        stderr(&out).contains(&format!(
            "{snapped} with headers cut by the snap length not sent"
        )),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_truncated_capture_is_replayed_up_to_the_cut_then_fails() {
    let d = dir("capture-replay-truncated");
    let frames = frames(2_000, 0.0, 13);
    let records = snapped(&frames, 96);
    let file = d.join("full.pcap");
    ethernet_pcap(&file, 96, &records);
    let bytes = std::fs::read(&file).unwrap();
    let end = 24
        + records[..1500]
            .iter()
            .map(|(d, _)| 16 + d.len())
            .sum::<usize>();
    let cut = d.join("cut.pcap");
    std::fs::write(&cut, &bytes[..end + 20]).unwrap();
    let (out, seen) = replay(&cut);
    let want = expected(&records[..1500]);
    assert!(!out.status.success(), "a truncated capture must fail");
    let err = stderr(&out);
    assert!(
        err.contains("warning") && err.contains("record 1501"),
        "{err}"
    );
    check_delivery(&out, &seen, &want);
}

#[test]
fn an_unreadable_capture_fails_before_waiting_for_the_firmware() {
    let d = dir("capture-replay-bad");
    let file = d.join("not-a-capture");
    std::fs::write(&file, b"definitely not a capture").unwrap();
    // Deterministic: the replay must not reach its wait for READY (it announces that
    // wait on stderr before it starts it). The READY timeout only bounds the test if
    // it does wait; it is not what is checked.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_loxo"))
        .args(["replay", file.to_str().unwrap(), "--control-key", KEY])
        .args(["--to", "127.0.0.1:9", "--from", "127.0.0.1:0"])
        .args(["--ready-timeout", "30"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(
        !stderr(&out).contains("waiting for the firmware"),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("not a pcap or pcapng file"),
        "{}",
        stderr(&out)
    );
}
