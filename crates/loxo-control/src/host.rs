//! The host's side of a session ([`HostSession`]): which of the firmware's frames
//! `loxo replay` believes, kept apart from its sockets so that it is tested and
//! fuzzed on its own (`tests/fuzz/fuzz_targets/control.rs` signs its inputs).

use loxo_core::Seed;

use crate::{build, peek, verify, Control, ControlError, Session, OP_HELLO, OP_READY, OP_WELCOME};

/// Device nonces a host answers at once before a session is open: a READY replayed
/// from an earlier boot verifies (it is the key holder's announcement), so the host
/// keeps a few and lets only a WELCOME decide; the firmware re-announces until it
/// hears from the host, so stale ones cannot crowd it out for long.
pub const ANNOUNCED: usize = 8;

/// What a frame from the firmware means to the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum HostEvent {
    /// A READY announcing a device nonce not answered yet: send
    /// [`HostSession::hello`] for it.
    Announced(u64),
    /// A READY already answered (a repeat).
    Repeat,
    /// The session is open: a WELCOME verified under a device nonce answered and
    /// this host nonce.
    Open(Session),
    /// A message of the open session (ACK, DONE, SKETCH, a repeated WELCOME).
    Message(Control),
    /// Refused (counted in [`HostSession::rejected`]): a bad tag, another boot or
    /// session, another version, or a host op reflected back.
    Refused(ControlError),
}

/// The host's state of one session: its nonce, the device nonces it answered, and
/// once a WELCOME verified, the session. Before that, the only frame it acts on is a
/// READY (by answering HELLO); after, only frames tagged under both nonces.
///
/// ```
/// use loxo_control::host::{HostEvent, HostSession};
/// use loxo_control::{build, Control, Session, OP_ACK, OP_READY, OP_WELCOME};
/// use loxo_core::Seed;
///
/// let key = Seed::new(5, 6);
/// let mut h = HostSession::new(key, 0x4057);
/// let device = 0xd1ce;
/// let ready = build([2; 6], Control::with_nonce(OP_READY, device), &key, Session::announce(device));
/// assert_eq!(h.receive(&ready), HostEvent::Announced(device));
/// // A WELCOME of an earlier session (another host nonce) does not open this one.
/// let old = Session { device, host: 0x0bad };
/// let stale = build([2; 6], Control::with_nonce(OP_WELCOME, old.host), &key, old);
/// assert!(matches!(h.receive(&stale), HostEvent::Refused(_)));
/// let s = Session { device, host: 0x4057 };
/// let welcome = build([2; 6], Control::with_nonce(OP_WELCOME, s.host), &key, s);
/// assert_eq!(h.receive(&welcome), HostEvent::Open(s));
/// let ack = Control { op: OP_ACK, seq: 0, value: 9, extra: 0 };
/// assert_eq!(h.receive(&build([2; 6], ack, &key, s)), HostEvent::Message(ack));
/// assert!(matches!(h.receive(&build([2; 6], ack, &key, old)), HostEvent::Refused(_)));
/// assert_eq!(h.rejected(), 2);
/// ```
#[derive(Clone, Debug)]
pub struct HostSession {
    key: Seed,
    host: u64,
    open: Option<Session>,
    announced: [u64; ANNOUNCED],
    len: usize,
    next: usize,
    rejected: u32,
}

impl HostSession {
    /// A session under `key` with the host nonce `host` (fresh per session, from the
    /// OS's entropy; 0 is taken as 1: 0 marks a READY's "no session yet").
    #[must_use]
    pub const fn new(key: Seed, host: u64) -> Self {
        Self {
            key,
            host: if host == 0 { 1 } else { host },
            open: None,
            announced: [0; ANNOUNCED],
            len: 0,
            next: 0,
            rejected: 0,
        }
    }

    /// The open session, if a WELCOME opened one.
    #[must_use]
    pub const fn session(&self) -> Option<Session> {
        self.open
    }

    /// The host nonce.
    #[must_use]
    pub const fn host_nonce(&self) -> u64 {
        self.host
    }

    /// The device nonces answered so far (at most [`ANNOUNCED`], the latest kept).
    #[must_use]
    pub fn announced(&self) -> &[u64] {
        self.announced.get(..self.len).unwrap_or(&[])
    }

    /// Frames refused so far.
    #[must_use]
    pub const fn rejected(&self) -> u32 {
        self.rejected
    }

    /// The HELLO answering the device nonce `device`, from `src`.
    #[must_use]
    pub fn hello(&self, src: [u8; 6], device: u64) -> [u8; 60] {
        let s = Session {
            device,
            host: self.host,
        };
        build(src, Control::with_nonce(OP_HELLO, self.host), &self.key, s)
    }

    /// A host frame `c` of the open session (SYNC, END), or `None` before one.
    #[must_use]
    pub fn sign(&self, src: [u8; 6], c: Control) -> Option<[u8; 60]> {
        self.open.map(|s| build(src, c, &self.key, s))
    }

    fn refuse(&mut self, e: ControlError) -> HostEvent {
        self.rejected = self.rejected.saturating_add(1);
        HostEvent::Refused(e)
    }

    /// What the firmware's `frame` (of the control EtherType) means; a refusal is
    /// counted.
    pub fn receive(&mut self, frame: &[u8]) -> HostEvent {
        let Some(c) = peek(frame) else {
            return self.refuse(ControlError::NotControl);
        };
        if let Some(s) = self.open {
            return match verify(frame, &self.key, s) {
                Ok(c) if !is_host_op(c.op) && c.op != OP_READY => HostEvent::Message(c),
                Ok(_) => self.refuse(ControlError::BadTag),
                Err(e) => self.refuse(e),
            };
        }
        match c.op {
            OP_READY => match verify(frame, &self.key, Session::announce(c.nonce())) {
                Ok(_) if self.announced().contains(&c.nonce()) => HostEvent::Repeat,
                Ok(_) => {
                    // The oldest answered nonce makes room (a ring of ANNOUNCED).
                    if let Some(slot) = self.announced.get_mut(self.next) {
                        *slot = c.nonce();
                    }
                    self.next = (self.next + 1) % ANNOUNCED;
                    self.len = (self.len + 1).min(ANNOUNCED);
                    HostEvent::Announced(c.nonce())
                }
                Err(e) => self.refuse(e),
            },
            OP_WELCOME if c.nonce() == self.host => {
                let host = self.host;
                let opened = self
                    .announced()
                    .iter()
                    .map(|&device| Session { device, host })
                    .find(|&s| verify(frame, &self.key, s).is_ok());
                match opened {
                    Some(s) => {
                        self.open = Some(s);
                        HostEvent::Open(s)
                    }
                    None => self.refuse(ControlError::BadTag),
                }
            }
            _ => self.refuse(
                verify(frame, &self.key, Session::announce(0))
                    .err()
                    .unwrap_or(ControlError::BadTag),
            ),
        }
    }
}

/// Ops only the host sends: one coming back is a reflection, never the firmware's.
const fn is_host_op(op: u8) -> bool {
    matches!(op, OP_HELLO | crate::OP_SYNC | crate::OP_END)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{OP_ACK, OP_SYNC};

    const KEY: Seed = Seed::new(0x686f_7374, 2);
    const SRC: [u8; 6] = [2, 0, 0, 0, 0, 1];

    fn ready(device: u64) -> [u8; 60] {
        build(
            SRC,
            Control::with_nonce(OP_READY, device),
            &KEY,
            Session::announce(device),
        )
    }

    #[test]
    fn announced_nonces_are_a_ring_of_the_latest() {
        let mut h = HostSession::new(KEY, 77);
        for d in 1..=ANNOUNCED as u64 + 1 {
            assert_eq!(h.receive(&ready(d)), HostEvent::Announced(d));
        }
        assert_eq!(h.receive(&ready(5)), HostEvent::Repeat);
        assert_eq!(h.announced().len(), ANNOUNCED);
        assert!(!h.announced().contains(&1), "the oldest made room");
        // A WELCOME under the evicted nonce no longer opens the session.
        let s = Session {
            device: 1,
            host: 77,
        };
        let w = build(SRC, Control::with_nonce(OP_WELCOME, 77), &KEY, s);
        assert!(matches!(h.receive(&w), HostEvent::Refused(_)));
        assert_eq!(h.session(), None);
        assert_eq!(h.rejected(), 1);
    }

    #[test]
    fn reflections_other_versions_and_stale_frames_are_refused() {
        let mut h = HostSession::new(KEY, 0);
        assert_eq!(h.host_nonce(), 1, "0 marks no session: never a host nonce");
        assert_eq!(
            h.sign(SRC, Control::default()),
            None,
            "nothing signed before"
        );
        let mut v1 = ready(9);
        v1[17] = 0;
        assert_eq!(h.receive(&v1), HostEvent::Refused(ControlError::Version(0)));
        assert_eq!(h.receive(&ready(9)), HostEvent::Announced(9));
        let s = Session { device: 9, host: 1 };
        let w = build(SRC, Control::with_nonce(OP_WELCOME, 1), &KEY, s);
        assert_eq!(h.receive(&w), HostEvent::Open(s));
        // Our own SYNC reflected back, a READY (announcement, not the session), an
        // ACK of another session: refused, counted.
        let sync = h
            .sign(
                SRC,
                Control {
                    op: OP_SYNC,
                    ..Control::default()
                },
            )
            .unwrap_or([0; 60]);
        assert!(matches!(h.receive(&sync), HostEvent::Refused(_)));
        assert!(matches!(h.receive(&ready(9)), HostEvent::Refused(_)));
        let ack = Control {
            op: OP_ACK,
            ..Control::default()
        };
        let other = Session { host: 2, ..s };
        assert!(matches!(
            h.receive(&build(SRC, ack, &KEY, other)),
            HostEvent::Refused(_)
        ));
        assert_eq!(
            h.receive(&build(SRC, ack, &KEY, s)),
            HostEvent::Message(ack)
        );
        assert_eq!(h.rejected(), 4);
    }
}
