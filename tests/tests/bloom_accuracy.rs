//! Measured false-positive rates and health estimates of the loxo-bloom filters
//! against their theory, seeded. Print the table with
//! `cargo test --release -p loxo-tests --test bloom_accuracy -- --nocapture`.
//!
//! Tolerances: a rate `p` measured on `q = 10^6` absent keys has standard error
//! `√(p(1−p)/q)`: 1 % relative at `p = 1 %`, 3.2 % at `p = 0.1 %`, so the ±10 %
//! relative band the issue asks for is ≥ 3 standard errors.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_bloom::{
    blocked_blocks, bloom_fpr, bloom_k, bloom_words, cuckoo_buckets, optimal_k, register_words,
    BlockedBloom, Bloom, CountingBloom, Cuckoo, Fingerprint, RegisterBloom,
};
use loxo_core::Seed;

const N: u64 = 1_000_000;
const QUERIES: u64 = 1_000_000;
/// Absent keys start here (inserted keys are 0..N).
const ABSENT: u64 = 1 << 40;

/// Runs `f` on a thread with a large stack: the filters are built by value.
fn big_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

fn measured(contains: impl Fn(&[u8]) -> bool) -> f64 {
    let fp = (ABSENT..ABSENT + QUERIES)
        .filter(|k| contains(&k.to_le_bytes()))
        .count();
    fp as f64 / QUERIES as f64
}

fn classic<const M: usize, const K: u32>(p: f64) {
    let mut f = Box::new(Bloom::<M, K>::new(Seed::new(0xb100, 0x0f17)));
    for k in 0..N {
        f.insert(&k.to_le_bytes());
        if k + 1 == N / 10 || k + 1 == N / 2 {
            // estimated_len within 5 % along the way.
            let n = (k + 1) as f64;
            assert!(
                (f.estimated_len() - n).abs() < 0.05 * n,
                "{} at {n}",
                f.estimated_len()
            );
        }
    }
    let m = 32 * M as u64;
    let theory = bloom_fpr(m, K, N);
    let fpr = measured(|k| f.contains(k));
    println!(
        "Bloom p={p}: m={m} bits ({:.2} bits/key), k={K}: measured FPR {fpr:.5}, theory {theory:.5}, fill {:.4}, estimated_fpr {:.5}, estimated_len {:.0}",
        m as f64 / N as f64,
        f.fill_ratio(),
        f.estimated_fpr(),
        f.estimated_len()
    );
    assert!(
        (fpr - theory).abs() <= 0.10 * theory,
        "FPR {fpr} vs theory {theory}"
    );
    assert!(
        (f.fill_ratio() - 0.5).abs() <= 0.02,
        "fill {}",
        f.fill_ratio()
    );
    assert!((f.estimated_fpr() - theory).abs() <= 0.10 * theory);
    assert!((f.estimated_len() - N as f64).abs() < 0.05 * N as f64);

    // 10× the design load: the health estimate reports the degradation.
    for k in N..10 * N {
        f.insert(&k.to_le_bytes());
    }
    let over = measured(|k| f.contains(k));
    println!(
        "Bloom p={p} at 10x load: measured FPR {over:.4}, estimated_fpr {:.4}",
        f.estimated_fpr()
    );
    assert!(f.estimated_fpr() > 50.0 * p, "{}", f.estimated_fpr());
    assert!((f.estimated_fpr() - over).abs() < 0.05 * over);
}

#[test]
fn classic_one_percent() {
    big_stack(|| classic::<{ bloom_words(N, 0.01) }, { bloom_k(N, 0.01) }>(0.01));
}

#[test]
fn classic_one_per_mille() {
    big_stack(|| classic::<{ bloom_words(N, 0.001) }, { bloom_k(N, 0.001) }>(0.001));
}

#[test]
fn blocked_against_its_own_bound() {
    big_stack(|| {
        const B: usize = blocked_blocks(N, 0.01);
        let mut f = Box::new(BlockedBloom::<B, 7>::new(Seed::new(0xb10c, 1)));
        for k in 0..N {
            f.insert(&k.to_le_bytes());
        }
        let fpr = measured(|k| f.contains(k));
        let theory = BlockedBloom::<B, 7>::theoretical_fpr(N);
        let classic = bloom_fpr(512 * B as u64, 7, N);
        println!(
            "BlockedBloom: {B} blocks ({:.2} bits/key), k=7: measured FPR {fpr:.5}, blocked theory {theory:.5}, classic at equal bits {classic:.5} (penalty {:.2}x), estimated_fpr {:.5}, estimated_len {:.0}",
            512.0 * B as f64 / N as f64,
            fpr / classic,
            f.estimated_fpr(),
            f.estimated_len()
        );
        assert!((fpr - theory).abs() <= 0.10 * theory, "{fpr} vs {theory}");
        assert!((f.estimated_fpr() - theory).abs() <= 0.10 * theory);
        assert!((f.estimated_len() - N as f64).abs() < 0.05 * N as f64);
    });
}

#[test]
fn register_against_its_own_bound() {
    big_stack(|| {
        const W: usize = register_words(N, 0.01);
        // K = 5 is the best K for this load (and the one the docs recommend).
        let at = |k: u32| match k {
            4 => RegisterBloom::<W, 4>::theoretical_fpr(N),
            5 => RegisterBloom::<W, 5>::theoretical_fpr(N),
            _ => RegisterBloom::<W, 6>::theoretical_fpr(N),
        };
        assert!(
            at(5) < at(4) && at(5) < at(6),
            "{} {} {}",
            at(4),
            at(5),
            at(6)
        );
        let mut f = Box::new(RegisterBloom::<W, 5>::new(Seed::new(0x4e6, 1)));
        // Checked at half, full and ten times the design load (overfill must show).
        for (from, to) in [(0, N / 2), (N / 2, N), (N, 10 * N)] {
            for k in from..to {
                f.insert(&k.to_le_bytes());
            }
            let fpr = measured(|k| f.contains(k));
            let theory = RegisterBloom::<W, 5>::theoretical_fpr(to);
            let bits = 64 * W as u64;
            let classic = bloom_fpr(bits, optimal_k(bits, to), to);
            println!(
                "RegisterBloom: {W} words ({:.2} bits/key), k=5, {to} keys: measured FPR {fpr:.5}, exact theory {theory:.5}, classic at equal bits, optimal k {classic:.5} (penalty {:.2}x), estimated_fpr {:.5}, estimated_len {:.0}",
                64.0 * W as f64 / to as f64,
                fpr / classic,
                f.estimated_fpr(),
                f.estimated_len()
            );
            assert!((fpr - theory).abs() <= 0.10 * theory, "{fpr} vs {theory}");
            assert!((f.estimated_fpr() - theory).abs() <= 0.10 * theory);
            if to <= N {
                assert!((f.estimated_len() - to as f64).abs() < 0.01 * to as f64);
            } else {
                assert!(f.estimated_fpr() > 0.9, "overfill visible");
            }
        }
    });
}

#[test]
fn register_reaches_one_percent_at_12_5_bits_per_key() {
    big_stack(|| {
        const W: usize = (N as usize * 25).div_ceil(128); // 12.5 bits/key
        let mut f = Box::new(RegisterBloom::<W, 5>::new(Seed::new(0x4e6, 2)));
        for k in 0..N {
            f.insert(&k.to_le_bytes());
        }
        let fpr = measured(|k| f.contains(k));
        let theory = RegisterBloom::<W, 5>::theoretical_fpr(N);
        println!("RegisterBloom: {W} words (12.5 bits/key), k=5: measured FPR {fpr:.5}, exact theory {theory:.5}");
        assert!((fpr - theory).abs() <= 0.10 * theory, "{fpr} vs {theory}");
        assert!(fpr < 0.01 && theory < 0.01);
    });
}

#[test]
fn counting_matches_classic_theory() {
    big_stack(|| {
        // 8·M counters sized like a 1 % classic filter: 4× the memory.
        const M: usize = bloom_words(N, 0.01) * 4;
        let mut f = Box::new(CountingBloom::<M, 7>::new(Seed::new(0xc0, 0x47)));
        for k in 0..N {
            f.insert(&k.to_le_bytes());
        }
        // Remove half: the FPR falls back to that of N/2 keys.
        for k in 0..N / 2 {
            assert!(f.remove(&k.to_le_bytes()));
        }
        let fpr = measured(|k| f.contains(k));
        let theory = bloom_fpr(8 * M as u64, 7, N / 2);
        println!(
            "CountingBloom: {} counters, k=7, after N inserts and N/2 removes: measured FPR {fpr:.5}, theory {theory:.5}, saturated {}",
            8 * M,
            f.count_saturated()
        );
        assert!((fpr - theory).abs() <= 0.10 * theory + 3.0 * (theory / QUERIES as f64).sqrt());
        assert_eq!(f.count_saturated(), 0);
        for k in N / 2..N {
            assert!(f.contains(&k.to_le_bytes()), "false negative {k}");
        }
    });
}

fn cuckoo<F: Fingerprint + Send + 'static>() {
    big_stack(|| {
        const B: usize = cuckoo_buckets(N);
        let mut f = Box::new(Cuckoo::<B, F>::new(Seed::new(0xc0c0, 7)));
        // Fill to 95 % of the slots.
        let n = (0.95 * (4 * B) as f64) as u64;
        for k in 0..n {
            f.insert(&k.to_le_bytes())
                .expect("no failure below 95 % load");
        }
        assert!(!f.is_full());
        let fpr = measured(|k| f.contains(k));
        let bound = f.estimated_fpr();
        let bits_per_key = (f.memory_bytes() * 8) as f64 / n as f64;
        // The classic filter's bits/key for the same rate: −log2(p)/ln 2.
        let bloom_bpk = -fpr.log2() / std::f64::consts::LN_2;
        println!(
            "Cuckoo<{B}, {}-bit>: {n} keys at load {:.3}: measured FPR {fpr:.6}, bound {bound:.6}, {bits_per_key:.2} bits/key (classic Bloom at this FPR: {bloom_bpk:.2})",
            F::BITS,
            f.load_factor()
        );
        assert!(fpr <= 1.10 * bound, "{fpr} vs {bound}");
        for k in (0..n).step_by(97) {
            assert!(f.contains(&k.to_le_bytes()));
        }
        if F::BITS == 16 {
            assert!(bits_per_key < bloom_bpk, "cuckoo must beat Bloom below 3 %");
        }
    });
}

#[test]
fn cuckoo_8_bit() {
    cuckoo::<u8>();
}

#[test]
fn cuckoo_16_bit() {
    cuckoo::<u16>();
}

#[test]
fn cuckoo_fills_up_and_reports_full_without_losing_keys() {
    let mut f = Cuckoo::<64, u16>::new(Seed::new(5, 5));
    let mut inserted = Vec::new();
    for k in 0u64..10_000 {
        match f.insert(&k.to_le_bytes()) {
            Ok(()) => inserted.push(k),
            Err(loxo_bloom::Full) => break,
        }
    }
    assert!(f.is_full());
    assert!(
        inserted.len() <= 256 + 1 && inserted.len() > 200,
        "{}",
        inserted.len()
    );
    for k in &inserted {
        assert!(f.contains(&k.to_le_bytes()), "lost {k}");
    }
    // A refused insert changes nothing; a removal makes room again.
    let before = f.clone();
    assert_eq!(f.insert(b"refused"), Err(loxo_bloom::Full));
    assert_eq!(f, before);
    assert!(f.remove(&inserted[0].to_le_bytes()));
    for k in &inserted[1..] {
        assert!(f.contains(&k.to_le_bytes()), "lost {k} after remove");
    }
}
