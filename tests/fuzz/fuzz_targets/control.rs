//! Any bytes as a control frame of the replay protocol (`loxo-control`), as the
//! firmware and `loxo replay` receive them: `peek`, `verify` and `sketch_chunk` never
//! panic; any message signed under the test key verifies to itself and fails under
//! another device or host nonce; and the `Guard` of a run accepts only non-decreasing
//! sequence numbers. (No "a raw input never verifies" property: libFuzzer watches the
//! tag comparison's operands and solves it — an attacker on the wire sees no such thing.)
//!
//! Then `loxo replay`'s control path past the MAC: the same bytes, read as a script of
//! firmware frames, each **signed** by the target under a session of the fuzzer's
//! choice — this one, an earlier session of the same boot (another host nonce), an
//! earlier boot (another device nonce), READY's announcement — or sent raw, are fed
//! to a `HostSession` (what `loxo replay` believes). Properties: the session opens
//! only on a WELCOME signed under an answered device nonce and this host nonce; once
//! open, a message is accepted only if signed under exactly that session and not a
//! host op; every refusal is counted; nothing panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_control::host::{HostEvent, HostSession};
use loxo_control::{
    build, build_sketch, peek, sketch_chunk, verify, Control, Guard, Session, OP_END, OP_HELLO,
    OP_READY, OP_SKETCH, OP_SYNC, OP_WELCOME,
};
use loxo_core::Seed;

const KEY: Seed = Seed::new(0x6675_7a7a, 0x636f_6e74);
const FW: [u8; 6] = [2, 0x4c, 0x4f, 0x58, 0x4f, 1];

fn word(b: &[u8], at: usize) -> u32 {
    b.get(at..at + 4)
        .map_or(0, |w| u32::from_le_bytes([w[0], w[1], w[2], w[3]]))
}

fn dword(b: &[u8], at: usize) -> u64 {
    u64::from(word(b, at)) | u64::from(word(b, at + 4)) << 32
}

/// The frame checks of the first version of this target, under `s`.
fn frames(frame: &[u8], s: Session) {
    let _ = peek(frame);
    let _ = sketch_chunk(frame);
    let _ = verify(frame, &KEY, s);
    // The same message signed properly verifies, and round-trips.
    if let Some(c) = peek(frame) {
        let signed = if c.op == OP_SKETCH {
            let chunk = sketch_chunk(frame).unwrap_or(&[]);
            let (f, len) = build_sketch([2; 6], c.seq, c.value, c.extra, chunk, &KEY, s);
            f[..len].to_vec()
        } else {
            build([2; 6], c, &KEY, s).to_vec()
        };
        assert_eq!(verify(&signed, &KEY, s), Ok(c));
        let other_boot = Session {
            device: s.device ^ 1,
            ..s
        };
        let other_session = Session {
            host: s.host ^ 1,
            ..s
        };
        assert!(verify(&signed, &KEY, other_boot).is_err());
        assert!(verify(&signed, &KEY, other_session).is_err());
    }
    // A run's guard: accepted sequence numbers never go down.
    let mut g = Guard::default();
    let mut last: Option<u32> = None;
    for w in frame.chunks_exact(4) {
        let seq = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        let c = Control {
            op: 2,
            seq,
            value: 0,
            extra: 0,
        };
        let ok = g.accept(&c);
        assert_eq!(ok, last.is_none_or(|l| seq >= l));
        if ok {
            last = Some(seq);
        }
    }
}

/// The host's session driven by a script of signed (or raw) firmware frames: steps
/// of 14 bytes — how to sign, op, `seq`, `value`, `extra` — after the two nonces.
fn host_session(script: &[u8], device: u64, host: u64) {
    let mut h = HostSession::new(KEY, host);
    let host = h.host_nonce();
    let this = Session { device, host };
    let mut answered: Vec<u64> = Vec::new();
    let mut rejected = 0u32;
    for step in script.chunks_exact(14) {
        let mut c = Control {
            op: step[1] % 10,
            seq: word(step, 2),
            value: word(step, 6),
            extra: word(step, 10),
        };
        // READY and WELCOME carry nonces: mostly the right ones, so the script gets
        // somewhere; the raw values otherwise.
        let how = step[0];
        if how & 0x40 == 0 {
            match c.op {
                OP_READY => c = Control::with_nonce(OP_READY, device ^ u64::from(how >> 7)),
                OP_WELCOME => c = Control::with_nonce(OP_WELCOME, host),
                _ => {}
            }
        }
        let under = match how & 7 {
            0 | 1 | 2 => Some(this),
            3 => Some(Session::announce(c.nonce())),
            4 => Some(Session {
                host: host ^ 1,
                ..this
            }),
            5 => Some(Session {
                device: device ^ 1,
                ..this
            }),
            6 => Some(Session::announce(device)),
            _ => None,
        };
        let frame = match under {
            Some(s) => build(FW, c, &KEY, s),
            None => {
                let mut f = build(FW, c, &KEY, this);
                // A raw tag: the script's bytes, not a signature.
                f[30..38].copy_from_slice(&step[6..14]);
                f[30] ^= 0x5a;
                f
            }
        };
        let open_before = h.session();
        let event = h.receive(&frame);
        match event {
            HostEvent::Announced(d) => {
                assert!(open_before.is_none());
                assert_eq!(c.op, OP_READY);
                assert_eq!(verify(&frame, &KEY, Session::announce(d)), Ok(c));
                assert!(!answered.contains(&d) || answered.len() > 8);
                answered.push(d);
                assert!(h.announced().contains(&d));
            }
            HostEvent::Repeat => assert_eq!(c.op, OP_READY),
            HostEvent::Open(s) => {
                assert!(open_before.is_none());
                assert_eq!(c.op, OP_WELCOME);
                assert_eq!(s.host, host, "opened under this run's host nonce only");
                assert!(answered.contains(&s.device), "an answered device nonce");
                assert_eq!(verify(&frame, &KEY, s), Ok(c));
                assert_eq!(h.session(), Some(s));
            }
            HostEvent::Message(m) => {
                let s = open_before.expect("messages only in an open session");
                assert_eq!(m, c);
                assert_eq!(verify(&frame, &KEY, s), Ok(c), "signed under the session");
                assert!(!matches!(m.op, OP_HELLO | OP_SYNC | OP_END | OP_READY));
            }
            HostEvent::Refused(_) => rejected += 1,
            _ => {}
        }
        assert_eq!(h.rejected(), rejected, "every refusal counted");
        // The host's own frames of an open session verify under it, and only it.
        if let Some(s) = h.session() {
            let sync = Control { op: OP_SYNC, ..c };
            let f = h.sign([2; 6], sync).expect("open");
            assert_eq!(verify(&f, &KEY, s), Ok(sync));
            assert!(verify(
                &f,
                &KEY,
                Session {
                    host: s.host ^ 1,
                    ..s
                }
            )
            .is_err());
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let (device, host) = (dword(data, 0), dword(data, 8));
    let rest = data.get(16..).unwrap_or(&[]);
    frames(rest, Session { device, host });
    host_session(rest, device, host);
});
