//! The frame builders: Ethernet (untagged, 802.1Q, QinQ) over IPv4 (with options)
//! or IPv6 (with an extension chain, AH/ESP), TCP/UDP/ICMP, and non-IP frames. Each
//! returns the [`Layout`] it wrote, for the oracle.

use loxo_flow::{FlowKey, MAX_IPV6_EXTENSIONS};

use super::flows::{ExtType, Extensions, FlowSpec, V6End, AH, ESP};
pub(super) use super::truth::Layout;
use super::truth::{ExtHeader, Link, Net};

/// How to build a frame of a flow.
#[derive(Clone, Copy)]
pub(super) struct Shape {
    pub(super) size: usize,
    /// A non-first fragment.
    pub(super) fragment: bool,
    /// IP length = the headers only, the rest Ethernet padding.
    pub(super) padded: bool,
    /// An IPv6 chain of `MAX_IPV6_EXTENSIONS + 1` destination-options headers.
    pub(super) long_chain: bool,
}

/// Builds one frame of the flow into `out`; returns its layout and the key it
/// carries.
pub(super) fn build(spec: &FlowSpec, shape: Shape, out: &mut Vec<u8>) -> (Layout, FlowKey) {
    out.clear();
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1]);
    let link = match spec.tags {
        1 => {
            out.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a]);
            Link::Vlan
        }
        2 => {
            out.extend_from_slice(&[0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x00, 0x0a]);
            Link::QinQ
        }
        _ => Link::Untagged,
    };
    let l4len = spec.transport_len();
    let l3 = out.len() + 2;
    if spec.v6 {
        build_v6(spec, shape, l3, link, out)
    } else {
        out.extend_from_slice(&[0x08, 0x00]);
        let opts = match spec.ext {
            Extensions::V4Options(w) => 4 * usize::from(w),
            _ => 0,
        };
        let ihl = 20 + opts;
        // A non-first fragment carries no transport header, but as many payload bytes
        // (the classic sizes are ≥ 64 ≥ 22 + 20 + 20, so its frames are unchanged; a
        // `MinSize` frame of 60 bytes grows to its headers).
        let size = shape.size.max(l3 + ihl + l4len);
        let total = if shape.padded { ihl + l4len } else { size - l3 };
        out.push(0x40 | (ihl / 4) as u8);
        out.push(0);
        out.extend_from_slice(&(total as u16).to_be_bytes());
        out.extend_from_slice(&[0, 1]);
        out.extend_from_slice(if shape.fragment {
            &[0x00, 0xb9]
        } else {
            &[0x40, 0x00]
        });
        out.extend_from_slice(&[64, spec.proto, 0, 0]);
        out.extend_from_slice(&spec.src[..4]);
        out.extend_from_slice(&spec.dst[..4]);
        if opts > 0 {
            // Router alert, then no-operations.
            out.extend_from_slice(&[0x94, 0x04, 0, 0]);
            out.resize(out.len() + opts - 4, 0x01);
        }
        if !shape.fragment {
            push_l4(spec, out);
        }
        out.resize(size, 0);
        let layout = Layout {
            len: size,
            link,
            net: Net::V4 {
                version: 4,
                ihl,
                total,
                fragment: shape.fragment,
                transport: l4len,
            },
        };
        (layout, spec.key(shape.fragment, spec.proto))
    }
}

fn build_v6(
    spec: &FlowSpec,
    shape: Shape,
    l3: usize,
    link: Link,
    out: &mut Vec<u8>,
) -> (Layout, FlowKey) {
    let l4len = spec.transport_len();
    // The headers to write, in order: (type, length, non-first fragment).
    let mut chain: Vec<ExtHeader> = Vec::new();
    let mut end = V6End::Transport;
    if shape.long_chain {
        chain = vec![
            ExtHeader {
                ty: ExtType::DestOpts,
                len: 8,
                last_fragment: false,
            };
            MAX_IPV6_EXTENSIONS + 1
        ];
    } else if let Extensions::V6Chain(hs, n, e) = spec.ext {
        end = e;
        for &(ty, len) in &hs[..usize::from(n)] {
            if shape.fragment && ty == ExtType::Fragment {
                // A non-first fragment keeps the unfragmentable part (the headers
                // before the fragment header) and ends at its own fragment header.
                break;
            }
            chain.push(ExtHeader {
                ty,
                len: usize::from(len),
                last_fragment: false,
            });
        }
    }
    // The fragment header of a non-first fragment names the transport (or AH/ESP)
    // as its next header: the key's protocol.
    let end_proto = match end {
        V6End::Transport => spec.proto,
        V6End::Ah => AH,
        V6End::Esp => ESP,
    };
    if shape.fragment {
        chain.push(ExtHeader {
            ty: ExtType::Fragment,
            len: 8,
            last_fragment: true,
        });
    }
    let chain_len: usize = chain.iter().map(|h| h.len).sum();
    let stops_at_ah_esp = end != V6End::Transport && !shape.fragment;
    let ah_esp_len = match end {
        V6End::Ah => 12,
        V6End::Esp => 8,
        V6End::Transport => 0,
    };
    let headers = chain_len + ah_esp_len + l4len;
    out.extend_from_slice(&[0x86, 0xdd]);
    let size = shape.size.max(l3 + 40 + headers);
    let plen = if shape.padded {
        headers
    } else {
        size - l3 - 40
    };
    out.extend_from_slice(&[0x60, 0, 0, 0]);
    out.extend_from_slice(&(plen as u16).to_be_bytes());
    let first = chain.first().map_or(end_proto, |h| h.ty as u8);
    out.push(first);
    out.push(64);
    out.extend_from_slice(&spec.src);
    out.extend_from_slice(&spec.dst);
    for (i, h) in chain.iter().enumerate() {
        let next = chain.get(i + 1).map_or(end_proto, |n| n.ty as u8);
        match h.ty {
            ExtType::Fragment if h.last_fragment => {
                out.extend_from_slice(&[next, 0, 0x05, 0xa8, 0, 0, 0, 1]);
            }
            ExtType::Fragment => out.extend_from_slice(&[next, 0, 0x00, 0x01, 0, 0, 0, 7]),
            ExtType::Routing => {
                // Type 4 (segment routing), no segments left.
                out.extend_from_slice(&[next, (h.len / 8 - 1) as u8, 4, 0]);
                out.resize(out.len() + h.len - 4, 0);
            }
            ExtType::HopByHop | ExtType::DestOpts => {
                // Hop-by-hop / destination options: Pad1 options.
                out.extend_from_slice(&[next, (h.len / 8 - 1) as u8]);
                out.resize(out.len() + h.len - 2, 0);
            }
        }
    }
    if !shape.fragment {
        match end {
            V6End::Ah => out.extend_from_slice(&[spec.proto, 1, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 1]),
            V6End::Esp => out.extend_from_slice(&[0, 0, 0x10, 0, 0, 0, 0, 1]),
            V6End::Transport => {}
        }
    }
    push_l4(spec, out);
    out.resize(size, 0);
    let key = spec.key(shape.fragment, end_proto);
    let layout = Layout {
        len: size,
        link,
        net: Net::V6 {
            version: 6,
            payload: plen,
            chain,
            stops_at_ah_esp,
            transport: l4len,
        },
    };
    (layout, key)
}

fn push_l4(spec: &FlowSpec, out: &mut Vec<u8>) {
    match spec.proto {
        1 | 58 => out.extend_from_slice(&[spec.sport as u8, spec.dport as u8, 0, 0, 0, 0, 0, 0]),
        p => {
            out.extend_from_slice(&spec.sport.to_be_bytes());
            out.extend_from_slice(&spec.dport.to_be_bytes());
            if p == 6 {
                // Data offset 5 words; flags ACK, or SYN.
                let flags = if spec.syn { 0x02 } else { 0x10 };
                out.extend_from_slice(&[
                    0, 0, 0, 1, 0, 0, 0, 0, 0x50, flags, 0xff, 0xff, 0, 0, 0, 0,
                ]);
            } else {
                out.extend_from_slice(&[0, 0, 0, 0]);
            }
        }
    }
}

/// A non-IP frame: ARP, or (`variant` 1..=3, with extensions) LLDP, ARP over
/// 802.1Q, IPv4 behind a lone 802.1ad S-tag.
pub(super) fn build_not_ip(variant: u64, out: &mut Vec<u8>) -> Layout {
    out.clear();
    out.extend_from_slice(&[0xff; 6]);
    out.extend_from_slice(&[0x02, 0, 0, 0, 0, 1]);
    let link = match variant {
        1 => {
            out.extend_from_slice(&[0x88, 0xcc]);
            Link::Untagged
        }
        2 => {
            out.extend_from_slice(&[0x81, 0x00, 0x00, 0x0a, 0x08, 0x06]);
            Link::Vlan
        }
        3 => {
            // An S-tag whose inner EtherType is IPv4, then a valid IPv4 header: not
            // an accepted tag stack, so not IP whatever follows.
            out.extend_from_slice(&[0x88, 0xa8, 0x00, 0x64, 0x08, 0x00]);
            out.extend_from_slice(&[0x45, 0, 0, 28, 0, 1, 0x40, 0, 64, 17, 0, 0]);
            out.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2, 0x30, 0x39, 0, 53, 0, 8, 0, 0]);
            Link::LoneSTag
        }
        _ => {
            out.extend_from_slice(&[0x08, 0x06]);
            Link::Untagged
        }
    };
    out.resize(60, 0);
    Layout {
        len: 60,
        link,
        net: Net::Other,
    }
}
