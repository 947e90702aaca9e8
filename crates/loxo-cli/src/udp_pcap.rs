//! UDP datagrams as a pcap of Ethernet/IPv4/UDP frames on the loopback addresses:
//! what an export looks like on the wire, for a dissector that reads captures only
//! (`tshark -r`, `nfdump` via a replay). Used by the IPFIX interop tests.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use pcap_file::pcap::{PcapPacket, PcapWriter};

/// Writes `datagrams` to `path`, one frame each, from 127.0.0.1:40000 to
/// 127.0.0.1:`port`, a millisecond apart, IPv4 identification = the datagram's index,
/// header checksum filled in, no UDP checksum (allowed over IPv4).
///
/// # Errors
/// When the file cannot be written, or a datagram does not fit an IPv4 packet.
pub fn write_udp_datagrams(datagrams: &[Vec<u8>], port: u16, path: &Path) -> anyhow::Result<()> {
    let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    let mut w = PcapWriter::new(BufWriter::new(file)).context("cannot write the pcap header")?;
    for (i, d) in datagrams.iter().enumerate() {
        let udp_len = u16::try_from(8 + d.len()).context("datagram too long for UDP")?;
        let ip_len = udp_len
            .checked_add(20)
            .context("datagram too long for IPv4")?;
        let mut f = vec![0x02, 0, 0, 0, 0, 1, 0x02, 0, 0, 0, 0, 2, 0x08, 0x00];
        let mut ip = vec![0x45, 0];
        ip.extend(ip_len.to_be_bytes());
        ip.extend((i as u16).to_be_bytes());
        ip.extend([0x40, 0, 64, 17, 0, 0, 127, 0, 0, 1, 127, 0, 0, 1]);
        let sum = ip
            .chunks_exact(2)
            .map(|c| u32::from(u16::from_be_bytes([c[0], c[1]])))
            .sum::<u32>();
        let sum = !(((sum & 0xffff) + (sum >> 16)) as u16);
        ip[10..12].copy_from_slice(&sum.to_be_bytes());
        f.extend(ip);
        f.extend(40_000u16.to_be_bytes());
        f.extend(port.to_be_bytes());
        f.extend(udp_len.to_be_bytes());
        f.extend([0, 0]);
        f.extend(d);
        let at = Duration::from_millis(i as u64);
        w.write_packet(&PcapPacket::new(at, f.len() as u32, &f))
            .context("cannot write a frame")?;
    }
    Ok(())
}
