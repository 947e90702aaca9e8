//! Any bytes as a capture file, read the way `loxo top` reads one
//! (`crates/loxo-cli/src/top.rs`: pcapng if the file starts with the section
//! header magic, else pcap, through pcap-file 2's readers over a buffered
//! reader) with every packet fed to `loxo_cli::eval::Evaluator`, as `top` does:
//! never a panic. The reading loop is top.rs's, copied: it lives in the binary,
//! not in a library the target could call.
#![no_main]

use std::io::{Cursor, Read};

use libfuzzer_sys::fuzz_target;
use loxo_cli::eval::Evaluator;
use loxo_flow::Config;
use pcap_file::pcap::PcapReader;
use pcap_file::pcapng::{Block, PcapNgReader};

fuzz_target!(|data: &[u8]| {
    let _ = read(data);
});

fn read(data: &[u8]) -> Result<(), ()> {
    let config = Config {
        epoch_packets: 64,
        ..Config::default()
    };
    let mut input = std::io::BufReader::new(Cursor::new(data));
    let mut magic = [0u8; 4];
    input.read_exact(&mut magic).map_err(|_| ())?;
    let input = Cursor::new(magic).chain(input);
    let mut ev = Evaluator::new(config);
    if magic == [0x0a, 0x0d, 0x0d, 0x0a] {
        let mut r = PcapNgReader::new(input).map_err(|_| ())?;
        while let Some(block) = r.next_block() {
            match block.map_err(|_| ())? {
                Block::EnhancedPacket(p) => ev.feed(&p.data),
                Block::SimplePacket(p) => ev.feed(&p.data),
                _ => {}
            }
        }
    } else {
        let mut r = PcapReader::new(input).map_err(|_| ())?;
        while let Some(p) = r.next_packet() {
            ev.feed(&p.map_err(|_| ())?.data);
        }
    }
    let _ = ev.finish();
    Ok(())
}
