//! `loxo export --redis` against a hostile fake server: a `TcpListener` thread that
//! reads one command and answers with a huge bulk length, deeply nested arrays, a
//! truncated reply, garbage, an endless line, a reply trickled past the timeout, or
//! a closed connection. Every case must be a clean error from the RESP client that
//! `loxo export --redis` uses (`loxo_cli::resp`) — no abort, no stack overflow, no
//! allocation of what the server merely claims.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test: failing loudly is the point

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use loxo_cli::resp::{Client, Reply, MAX_DEPTH};

/// A one-connection fake server: accepts, reads the client's first command, then
/// runs `answer` on the stream.
fn fake_server(answer: impl FnOnce(&mut TcpStream) + Send + 'static) -> (String, JoinHandle<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let handle = std::thread::spawn(move || {
        let Ok((mut s, _)) = listener.accept() else {
            return;
        };
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut cmd = [0u8; 4096];
        let _ = s.read(&mut cmd);
        answer(&mut s);
    });
    (addr, handle)
}

/// Sends `bytes` then closes (errors ignored: the client may hang up first).
fn reply_then_close(bytes: Vec<u8>) -> impl FnOnce(&mut TcpStream) + Send + 'static {
    move |s| {
        let _ = s.write_all(&bytes);
        let _ = s.flush();
    }
}

/// One `PFCOUNT` against `answer`: the client's integer, or its error message.
fn pfcount_against(answer: impl FnOnce(&mut TcpStream) + Send + 'static) -> Result<i64, String> {
    let (addr, server) = fake_server(answer);
    let mut c = Client::connect_with_timeout(&addr, Duration::from_secs(2)).unwrap();
    let r = c.integer(&[b"PFCOUNT", b"k"]).map_err(|e| format!("{e:#}"));
    drop(c);
    server.join().unwrap();
    r
}

fn assert_clean_error(r: Result<i64, String>, what: &str, says: &str) {
    let msg = r.expect_err(what);
    assert!(msg.contains(says), "{what}: {msg:?} does not say {says:?}");
}

#[test]
fn huge_bulk_length_is_refused_without_allocating_it() {
    // The old client allocated vec![0; n + 2] up front: capacity overflow / OOM abort.
    assert_clean_error(
        pfcount_against(reply_then_close(b"$9223372036854775807\r\n".to_vec())),
        "i64::MAX bulk",
        "exceeds",
    );
    // Below the cap but never sent: an error once the server hangs up, and only
    // what arrived was allocated.
    assert_clean_error(
        pfcount_against(reply_then_close(b"$400000000\r\nabc".to_vec())),
        "400 MB bulk, 3 bytes sent",
        "mid-reply",
    );
}

#[test]
fn deeply_nested_arrays_are_refused_without_recursion() {
    // A million levels: the old recursive reader overflowed the stack (SIGSEGV).
    let mut bytes = b"*1\r\n".repeat(1_000_000);
    bytes.extend_from_slice(b":1\r\n");
    assert_clean_error(
        pfcount_against(reply_then_close(bytes)),
        "nested 10^6 deep",
        "deeper than",
    );
    // At the bound it reads (and is then not an integer).
    let mut bytes = b"*1\r\n".repeat(MAX_DEPTH);
    bytes.extend_from_slice(b":1\r\n");
    assert_clean_error(
        pfcount_against(reply_then_close(bytes)),
        "nested at the bound",
        "expected an integer",
    );
}

#[test]
fn huge_array_length_is_refused() {
    assert_clean_error(
        pfcount_against(reply_then_close(b"*9223372036854775807\r\n:1\r\n".to_vec())),
        "i64::MAX array",
        "exceeds",
    );
}

#[test]
fn truncated_reply_is_an_error() {
    for (bytes, says) in [
        (&b"$10\r\nabc"[..], "mid-reply"),
        (b":12", "mid-reply"),
        (b"*3\r\n:1\r\n:2\r\n", "closed the connection"),
    ] {
        assert_clean_error(
            pfcount_against(reply_then_close(bytes.to_vec())),
            &format!("truncated {:?}", String::from_utf8_lossy(bytes)),
            says,
        );
    }
}

#[test]
fn garbage_is_an_error() {
    for (bytes, says) in [
        (
            &b"HTTP/1.1 400 Bad Request\r\n\r\n"[..],
            "unexpected Redis reply",
        ),
        (b":12x\r\n", "bad integer"),
        (b"$abc\r\n", "bad bulk length"),
        (b"$3\r\nabcXY", "not terminated by CRLF"),
        (b"\r\n", "empty Redis reply line"),
        (&[0xff, 0xfe, 0x00, b'\n'], "not terminated by CRLF"),
    ] {
        assert_clean_error(
            pfcount_against(reply_then_close(bytes.to_vec())),
            &format!("garbage {bytes:?}"),
            says,
        );
    }
}

#[test]
fn endless_line_is_cut_at_the_bound() {
    // 8 MiB without a newline: refused after 64 KiB, not buffered whole.
    let answer = |s: &mut TcpStream| {
        let chunk = vec![b'a'; 64 << 10];
        let _ = s.write_all(b"+");
        for _ in 0..128 {
            if s.write_all(&chunk).is_err() {
                return;
            }
        }
    };
    assert_clean_error(pfcount_against(answer), "endless line", "longer than");
}

#[test]
fn closed_connection_is_an_error() {
    assert_clean_error(
        pfcount_against(|_| {}),
        "closed before replying",
        "closed the connection",
    );
}

#[test]
fn trickled_reply_times_out_as_a_whole() {
    // One byte every 100 ms: each read succeeds, the reply (1 000 bytes announced)
    // never ends. The server stops after `CAP` bytes (60 s: only a hang guard, far
    // past the client's 2 s): a client with per-read timeouts only would read all of
    // them and then fail on the closed connection. What is asserted is not the wall
    // clock but that the client gave up with a timeout (its own "not complete within
    // the timeout", or the OS's on the read the deadline cut short) while the server
    // was still trickling (fewer than `CAP` bytes), not on the server's hang-up.
    const CAP: usize = 600;
    let written = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&written);
    let answer = move |s: &mut TcpStream| {
        let _ = s.write_all(b"$1000\r\n");
        for _ in 0..CAP {
            if s.write_all(b"x").is_err() {
                return;
            }
            count.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let msg = pfcount_against(answer).expect_err("trickle");
    assert!(
        !msg.contains("closed") && !msg.contains("mid-reply"),
        "trickle: ended by the server's hang-up, not the timeout: {msg}"
    );
    let n = written.load(Ordering::Relaxed);
    assert!(
        n < CAP,
        "the server trickled all {n} bytes: the client never hung up"
    );
}

#[test]
fn honest_replies_still_read() {
    let (addr, server) = fake_server(reply_then_close(b":42\r\n".to_vec()));
    let mut c = Client::connect(&addr).unwrap();
    assert_eq!(c.integer(&[b"PFCOUNT", b"k"]).unwrap(), 42);
    server.join().unwrap();
    let (addr, server) = fake_server(reply_then_close(
        b"*2\r\n$3\r\nfoo\r\n*1\r\n$-1\r\n".to_vec(),
    ));
    let mut c = Client::connect(&addr).unwrap();
    assert_eq!(
        c.command(&[b"X"]).unwrap(),
        Reply::Array(vec![
            Reply::Bulk(Some(b"foo".to_vec())),
            Reply::Array(vec![Reply::Bulk(None)])
        ])
    );
    server.join().unwrap();
}
