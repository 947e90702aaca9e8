//! Cross-check of `loxo_hll::Ull` against a second implementation: hash4j's
//! `UltraLogLog` (the paper author's reference implementation, Java), fed the very
//! same 64-bit digests. `tests/golden/ull_hash4j/ull_hash4j.csv` holds its register
//! bytes (FNV-1a 64 of the state) and its three estimates at checkpoints from
//! `n = 1` to `1000·m` at `P` = 4, 8, 12, 14, three streams each, written by
//! `tests/golden/ull_hash4j/UllOracle.java` (build and run commands in its header).
//!
//! What must agree, and how closely:
//! * the register bytes: exactly (the same contract, byte for byte);
//! * FGRA: to `10^−9` relative. Both compute the same formula; loxo sums the
//!   mid-range terms in fixed point (`2^59`), hash4j in `f64` from a table, so they
//!   differ by rounding only (measured: 1.1·10^−13 at most);
//! * martingale: to `10^−9` relative (loxo's state-change probability is an exact
//!   integer, hash4j subtracts `f64` decrements; measured: bit-identical);
//! * ML: to `2·10^−3·0.761/√m` relative: hash4j stops its solver once a step is
//!   below `10^−3` of the theoretical standard error `0.761/√m` (loxo iterates to
//!   `10^−13`), so its root is that close and no closer (measured: under 1 % of
//!   that tolerance).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use loxo_core::{KeyHash, Seed};
use loxo_hll::{Precision, SupportedPrecision, Ull};
use loxo_tests::DistinctKeys;

struct Row {
    p: u8,
    stream: u64,
    n: u64,
    state: u64,
    fgra: f64,
    ml: f64,
    martingale: f64,
}

fn rows() -> Vec<Row> {
    let text =
        std::fs::read_to_string(loxo_tests::golden::path("ull_hash4j/ull_hash4j.csv")).unwrap();
    text.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Row {
                p: f[0].parse().unwrap(),
                stream: f[1].parse().unwrap(),
                n: f[2].parse().unwrap(),
                state: f[3].parse().unwrap(),
                fgra: f[4].parse().unwrap(),
                ml: f[5].parse().unwrap(),
                martingale: f[6].parse().unwrap(),
            }
        })
        .collect()
}

fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Largest relative differences seen: FGRA, martingale, ML.
type Worst = [f64; 3];

fn check<const P: u8>(rows: &[Row], worst: &mut Worst) -> usize
where
    Precision<P>: SupportedPrecision,
{
    let mut checked = 0;
    let ml_tol = 2e-3 * 0.761 / f64::from(1u32 << P).sqrt();
    for stream in 0..3 {
        let mut ull = Ull::<P>::new(Seed::new(1, 2));
        let mut keys = DistinctKeys::new(0x4c4f_584f_554c_4c00 + stream);
        let mut n = 0;
        for row in rows.iter().filter(|r| r.p == P && r.stream == stream) {
            for key in keys.by_ref().take((row.n - n) as usize) {
                ull.insert_hash(KeyHash::from_u64(key));
            }
            n = row.n;
            let at = format!("P = {P}, stream {stream}, n = {n}");
            assert_eq!(fnv1a64(ull.registers()), row.state, "{at}: register bytes");
            let rel = |a: f64, b: f64| (a / b - 1.0).abs();
            let (fgra, hip, ml) = (
                ull.estimate(),
                ull.estimate_martingale().unwrap(),
                ull.estimate_ml(),
            );
            for (w, d) in worst.iter_mut().zip([
                rel(fgra, row.fgra),
                rel(hip, row.martingale),
                rel(ml, row.ml) / ml_tol,
            ]) {
                *w = w.max(d);
            }
            assert!(
                rel(fgra, row.fgra) < 1e-9,
                "{at}: FGRA {fgra} vs {}",
                row.fgra
            );
            assert!(
                rel(hip, row.martingale) < 1e-9,
                "{at}: martingale {hip} vs {}",
                row.martingale
            );
            assert!(rel(ml, row.ml) < ml_tol, "{at}: ML {ml} vs {}", row.ml);
            checked += 1;
        }
    }
    checked
}

#[test]
fn same_registers_and_estimates_as_hash4j() {
    let rows = rows();
    let mut worst = [0.0; 3];
    let checked = check::<4>(&rows, &mut worst)
        + check::<8>(&rows, &mut worst)
        + check::<12>(&rows, &mut worst)
        + check::<14>(&rows, &mut worst);
    println!(
        "{checked} checkpoints; largest relative difference: FGRA {:.1e}, martingale {:.1e}, \
         ML {:.2} of hash4j's solver tolerance",
        worst[0], worst[1], worst[2]
    );
    assert_eq!(checked, rows.len());
    assert!(checked >= 100);
}
