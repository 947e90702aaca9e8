//! Any bytes as a Redis server's reply to the RESP client of `loxo export --redis`
//! (`loxo_cli::resp::read_reply`): never a panic or an unbounded allocation, and a
//! reply it accepts re-encodes to bytes that read back as the same reply.
#![no_main]

use libfuzzer_sys::fuzz_target;
use loxo_cli::resp::{read_reply, Reply};

fn encode(r: &Reply, out: &mut Vec<u8>) {
    match r {
        Reply::Status(s) => out.extend_from_slice(format!("+{s}\r\n").as_bytes()),
        Reply::Error(s) => out.extend_from_slice(format!("-{s}\r\n").as_bytes()),
        Reply::Integer(i) => out.extend_from_slice(format!(":{i}\r\n").as_bytes()),
        Reply::Bulk(None) => out.extend_from_slice(b"$-1\r\n"),
        Reply::Bulk(Some(b)) => {
            out.extend_from_slice(format!("${}\r\n", b.len()).as_bytes());
            out.extend_from_slice(b);
            out.extend_from_slice(b"\r\n");
        }
        Reply::Array(items) => {
            out.extend_from_slice(format!("*{}\r\n", items.len()).as_bytes());
            for i in items {
                encode(i, out);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut input = data;
    if let Ok(reply) = read_reply(&mut input) {
        let mut again = Vec::new();
        encode(&reply, &mut again);
        let back = read_reply(&mut &again[..]).expect("own encoding reads");
        assert_eq!(back, reply);
    }
});
