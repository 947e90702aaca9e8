//! Hashes a few flow keys with a seed and prints the indices loxo derives from them.
//!
//! Run: `cargo run --release -p loxo --example hash_flows`

use loxo::Seed;

/// name, source, destination, source port, destination port, IP protocol.
type Flow = (&'static str, [u8; 4], [u8; 4], u16, u16, u8);

fn main() {
    // A fixed seed keeps the output reproducible; firmware draws it from its RNG.
    let seed = Seed::new(0x6c6f_786f_2d64_656d, 0x6f2d_7365_6564_2121);
    let flows: [Flow; 4] = [
        ("web", [10, 0, 0, 1], [93, 184, 216, 34], 51000, 443, 6),
        ("dns", [10, 0, 0, 1], [9, 9, 9, 9], 53001, 53, 17),
        ("ssh", [10, 0, 0, 7], [10, 0, 0, 2], 40022, 22, 6),
        ("ntp", [10, 0, 0, 9], [162, 159, 200, 1], 123, 123, 17),
    ];
    println!("seed {seed:?}");
    println!(
        "{:<5} {:>18}  bloom[k=7, m=9586]                            cms[d=5, w=272]",
        "flow", "hash"
    );
    for (name, src, dst, sport, dport, proto) in flows {
        // The canonical 13-byte IPv4 5-tuple: src, dst, sport, dport (big-endian), proto.
        let mut key = [0u8; 13];
        key[..4].copy_from_slice(&src);
        key[4..8].copy_from_slice(&dst);
        key[8..10].copy_from_slice(&sport.to_be_bytes());
        key[10..12].copy_from_slice(&dport.to_be_bytes());
        key[12] = proto;
        let h = seed.hash(&key);
        let bits: Vec<u32> = (0..7).map(|i| h.index(i, 9586)).collect();
        let cols: Vec<u32> = (0..5).map(|i| h.index(i, 272)).collect();
        let bits = format!("{bits:?}");
        println!("{name:<5} {:#018x}  {bits:<44}  {cols:?}", h.get());
    }
}
