#![allow(clippy::unwrap_used, clippy::expect_used)]

extern crate std;
use std::vec::Vec;

use crate::fake::Fake;
use crate::{Error, Lan9118, Reg, Registers, FRAME_BUF_LEN, MAC_CR_PRMS, MAC_CR_RXEN, MAC_CR_TXEN};

const MAC: [u8; 6] = [0x02, 0x4C, 0x4F, 0x58, 0x4F, 0x01];

fn up() -> Lan9118<Fake> {
    let mut nic = Lan9118::new(Fake::new());
    nic.init(MAC).unwrap();
    nic
}

fn frame(len: usize, tag: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31) ^ tag).collect()
}

#[test]
fn init_resets_sets_mac_and_enables_rx_tx_promiscuous() {
    let mut nic = up();
    assert_eq!(nic.mac_address().unwrap(), MAC);
    let fake = nic.release();
    assert_eq!(fake.resets, 1);
    assert_eq!(fake.mac, MAC);
    let want = MAC_CR_RXEN | MAC_CR_TXEN | MAC_CR_PRMS;
    assert_eq!(fake.mac_cr & want, want);
    assert_eq!(fake.tx_cfg & crate::TX_CFG_TX_ON, crate::TX_CFG_TX_ON);
}

#[test]
fn frames_before_init_are_lost_like_on_the_wire() {
    let mut fake = Fake::new();
    assert!(!fake.wire_rx(&frame(60, 1), false));
    let mut nic = Lan9118::new(fake);
    nic.init(MAC).unwrap();
    let mut buf = [0u8; FRAME_BUF_LEN];
    assert_eq!(nic.receive(&mut buf), None);
}

#[test]
fn receives_every_length_byte_exact() {
    let mut nic = up();
    let mut buf = [0u8; FRAME_BUF_LEN];
    // 14 (bare header, QEMU's minimum) through a VLAN-tagged maximum frame:
    // covers all four residues of len mod 4 against the FCS word split.
    for len in (14..=80).chain([1514, 1518, FRAME_BUF_LEN]) {
        let f = frame(len, len as u8);
        let mut fake = nic.release();
        assert!(fake.wire_rx(&f, false));
        nic = Lan9118::new(fake);
        assert_eq!(nic.receive(&mut buf), Some(len), "len {len}");
        assert_eq!(&buf[..len], &f[..], "len {len}");
        assert_eq!(nic.receive(&mut buf), None);
    }
}

#[test]
fn queued_frames_come_out_in_order_and_are_counted() {
    let mut fake = Fake::new();
    let mut nic = Lan9118::new(core::mem::take(&mut fake));
    nic.init(MAC).unwrap();
    let mut fake = nic.release();
    let frames: Vec<Vec<u8>> = (0..50).map(|i| frame(60 + i * 7, i as u8)).collect();
    for f in &frames {
        assert!(fake.wire_rx(f, false));
    }
    let mut nic = Lan9118::new(fake);
    let mut buf = [0u8; FRAME_BUF_LEN];
    for f in &frames {
        let n = nic.receive(&mut buf).unwrap();
        assert_eq!(&buf[..n], &f[..]);
    }
    assert_eq!(nic.receive(&mut buf), None);
    assert_eq!(nic.stats().frames, 50);
}

#[test]
fn error_and_oversized_frames_are_drained_counted_and_skipped() {
    let mut nic = up();
    let mut fake = nic.release();
    let good1 = frame(64, 1);
    let good2 = frame(99, 2);
    assert!(fake.wire_rx(&good1, false));
    assert!(fake.wire_rx(&frame(70, 3), true));
    assert!(fake.wire_rx(&frame(2000, 4), false));
    assert!(fake.wire_rx(&good2, false));
    nic = Lan9118::new(fake);
    let mut buf = [0u8; FRAME_BUF_LEN];
    assert_eq!(nic.receive(&mut buf), Some(64));
    assert_eq!(&buf[..64], &good1[..]);
    // The bad frames are skipped in one call and the FIFO stays in step.
    assert_eq!(nic.receive(&mut buf), Some(99));
    assert_eq!(&buf[..99], &good2[..]);
    assert_eq!(nic.receive(&mut buf), None);
    let s = nic.stats();
    assert_eq!((s.frames, s.errors, s.oversized), (2, 1, 1));
}

#[test]
fn overruns_are_counted_not_fatal() {
    let mut nic = up();
    let mut fake = nic.release();
    fake.status_capacity = 4;
    let accepted = (0..10)
        .filter(|&i| fake.wire_rx(&frame(60, i), false))
        .count();
    assert_eq!(accepted, 4);
    nic = Lan9118::new(fake);
    nic.update_drop_counter();
    assert_eq!(nic.stats().overruns, 6);
    let mut buf = [0u8; FRAME_BUF_LEN];
    let mut n = 0;
    while nic.receive(&mut buf).is_some() {
        n += 1;
    }
    assert_eq!(n, 4);
    nic.update_drop_counter();
    assert_eq!(
        nic.stats().overruns,
        6,
        "flag was cleared, counter read once"
    );
}

#[test]
fn transmit_packs_words_little_endian() {
    let mut nic = up();
    let frames: Vec<Vec<u8>> = (1..=9).map(|len| frame(len * 7, 9)).collect();
    for f in &frames {
        nic.transmit(f).unwrap();
    }
    assert_eq!(nic.transmit(&[]), Err(Error::FrameLength));
    assert_eq!(nic.transmit(&[0; 1519]), Err(Error::FrameLength));
    assert_eq!(nic.release().sent, frames);
}

#[test]
fn missing_device_is_an_error() {
    struct Absent;
    impl Registers for Absent {
        fn read(&mut self, _: Reg) -> u32 {
            0xFFFF_FFFF
        }
        fn write(&mut self, _: Reg, _: u32) {}
    }
    let err = Lan9118::new(Absent).init(MAC).unwrap_err();
    assert_eq!(
        err,
        Error::NotPresent {
            byte_test: 0xFFFF_FFFF
        }
    );
    assert_eq!(
        std::format!("{err}"),
        "no lan9118 found (byte test read 0xffffffff)"
    );
}

#[test]
fn stuck_reset_times_out() {
    struct Stuck;
    impl Registers for Stuck {
        fn read(&mut self, reg: Reg) -> u32 {
            match reg {
                Reg::ByteTest => crate::BYTE_TEST_VALUE,
                Reg::HwCfg => crate::HW_CFG_SRST,
                _ => 0,
            }
        }
        fn write(&mut self, _: Reg, _: u32) {}
    }
    assert_eq!(Lan9118::new(Stuck).init(MAC), Err(Error::ResetTimeout));
}

mod props {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(7), ..ProptestConfig::default() })]

        /// Any interleaving of good, errored and oversized frames comes out
        /// as exactly the good frames, in order, byte for byte, and the
        /// counters add up: nothing lost, nothing invented, FIFOs in step.
        #[test]
        fn fifo_stays_in_step(spec in proptest::collection::vec((14usize..2047, any::<u8>(), 0u8..10), 1..60)) {
            let mut nic = up();
            let mut fake = nic.release();
            let mut want = Vec::new();
            let (mut errors, mut oversized) = (0, 0);
            for (len, tag, kind) in &spec {
                let f = frame(*len, *tag);
                let error = *kind == 0;
                prop_assert!(fake.wire_rx(&f, error));
                if error {
                    errors += 1;
                } else if *len > FRAME_BUF_LEN {
                    oversized += 1;
                } else {
                    want.push(f);
                }
            }
            nic = Lan9118::new(fake);
            let mut buf = [0u8; FRAME_BUF_LEN];
            for f in &want {
                let n = nic.receive(&mut buf);
                prop_assert_eq!(n, Some(f.len()));
                prop_assert_eq!(&buf[..f.len()], &f[..]);
            }
            prop_assert_eq!(nic.receive(&mut buf), None);
            let s = nic.stats();
            prop_assert_eq!((s.frames as usize, s.errors, s.oversized), (want.len(), errors, oversized));
        }
    }
}
