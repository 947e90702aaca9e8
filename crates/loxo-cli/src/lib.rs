//! Library side of the `loxo` host tool: the seeded trace generator and the exact flow
//! counter, shared by `loxo gen` / `loxo top` and the tests.

pub mod capture;
pub mod chunks;
pub mod collect;
pub mod eval;
pub mod exact;
pub mod frequent;
pub mod gateway;
pub mod key;
pub mod participants;
pub mod resp;
pub mod sketch;
pub mod theta;
pub mod theta_ds;
pub mod trace;
pub mod udp_pcap;
