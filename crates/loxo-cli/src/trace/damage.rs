//! What the generator does to a built frame ([`Damage`]), keeping the frame's
//! [`Layout`] in step with its bytes.

use super::frames::Layout;
use super::gen::Rng;
use super::truth::Net;

/// What the generator did to a frame after building it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Damage {
    /// Left as built.
    None,
    /// Cut to a shorter length.
    Truncated,
    /// IPv4 IHL set to 2 (IPv6: the version field set to 4).
    BadIhl,
    /// IP version field swapped 4 ↔ 6.
    VersionSwap,
    /// IP length field set to 65 520.
    LengthField,
    /// IP length field cut to end inside the IP options/extension chain or the
    /// transport header (only with `extensions > 0`).
    LengthCut,
    /// An IPv6 chain of `MAX_IPV6_EXTENSIONS + 1` headers (only with
    /// `extensions > 0`; an IPv4 frame gets a [`Damage::LengthCut`] instead).
    LongChain,
}

impl Damage {
    /// Every damage, in the order of their names in the truth file.
    pub const ALL: [Self; 7] = [
        Self::None,
        Self::Truncated,
        Self::BadIhl,
        Self::VersionSwap,
        Self::LengthField,
        Self::LengthCut,
        Self::LongChain,
    ];

    /// Stable name used in the truth file.
    pub const fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Truncated => "truncated",
            Self::BadIhl => "bad_ihl",
            Self::VersionSwap => "version_swap",
            Self::LengthField => "length_field",
            Self::LengthCut => "length_cut",
            Self::LongChain => "long_chain",
        }
    }
}

/// Damages a built frame as the generator chose (`kinds` = 4 classic damages, 6 with
/// extensions), keeping its layout in step with the bytes. The RNG draws of the
/// classic damages are those of the generator before it kept a truth.
pub(super) fn damage(r: &mut Rng, kinds: u64, layout: &mut Layout, frame: &mut Vec<u8>) -> Damage {
    // Offset of the network header: for a non-IP frame, where an untagged one's
    // would be (the classic generator searched for an IP EtherType and fell back
    // to 14).
    let l3 = match layout.net {
        Net::Other => 14,
        _ => layout.link.header_len(),
    };
    let v6 = matches!(layout.net, Net::V6 { .. });
    match r.next() % kinds {
        0 => {
            let len = (r.next() % (l3 as u64 + 30)) as usize;
            frame.truncate(len);
            layout.len = layout.len.min(len);
            Damage::Truncated
        }
        1 => {
            if let Some(b) = frame.get_mut(l3) {
                *b = (*b & 0xf0) | 0x02;
                if *b >> 4 == 6 {
                    *b = 0x42;
                }
                set_version_ihl(layout, *b);
            }
            Damage::BadIhl
        }
        2 => {
            if let Some(b) = frame.get_mut(l3) {
                *b ^= 0x20; // 4 <-> 6 version swap
                set_version_ihl(layout, *b);
            }
            Damage::VersionSwap
        }
        3 => {
            let at = if v6 { l3 + 4 } else { l3 + 2 };
            if let Some(s) = frame.get_mut(at..at + 2) {
                s.copy_from_slice(&[0xff, 0xf0]);
                set_length(layout, 0xfff0);
            }
            Damage::LengthField
        }
        _ => {
            // 4: a length field cut inside the headers; 5 (IPv4: as 4) a long chain,
            // rebuilt by the caller.
            if v6 && r.next() % 2 == 1 {
                return Damage::LongChain;
            }
            let headers = match &layout.net {
                Net::V4 { ihl, transport, .. } => ihl + transport,
                Net::V6 {
                    chain,
                    stops_at_ah_esp,
                    transport,
                    ..
                } => {
                    chain.iter().map(|h| h.len).sum::<usize>()
                        + if *stops_at_ah_esp { 0 } else { *transport }
                }
                Net::Other => 0,
            };
            let cut = (r.next() % (headers as u64).max(1)) as usize;
            if let Some(at) = layout.length_field() {
                if let Some(s) = frame.get_mut(at..at + 2) {
                    s.copy_from_slice(&(cut as u16).to_be_bytes());
                    set_length(layout, cut);
                }
            }
            Damage::LengthCut
        }
    }
}

/// Records a rewritten version/IHL byte in the layout.
fn set_version_ihl(layout: &mut Layout, b: u8) {
    match &mut layout.net {
        Net::V4 { version, ihl, .. } => {
            *version = b >> 4;
            *ihl = usize::from(b & 0x0f) * 4;
        }
        Net::V6 { version, .. } => *version = b >> 4,
        Net::Other => {}
    }
}

/// Records a rewritten IP length field in the layout.
fn set_length(layout: &mut Layout, v: usize) {
    match &mut layout.net {
        Net::V4 { total, .. } => *total = v,
        Net::V6 { payload, .. } => *payload = v,
        Net::Other => {}
    }
}
