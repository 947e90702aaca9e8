//! [`Participants`]: each epoch's DDoS participants — horizontal scanners (sources with
//! many distinct destinations), vertical scans (a source probing many ports of one
//! destination) and victims (destinations with many distinct sources) — with
//! estimates and bounds, from three spread sketches fed with the flows a
//! [`FlowMonitor`](crate::FlowMonitor) parses. Its report is in `report`.

use core::net::IpAddr;

use loxo_core::{mix64, HalfSipKey, KeyHash, Seed};
use loxo_spread::{HipSpreaders, SpreadSummary, Spreader, Spreaders};

use crate::{FlowKey, Theta};

mod report;
mod sampled;
#[cfg(test)]
mod tests;

pub use report::{Participant, ParticipantsReport, Role, DEFAULT_PARTICIPANTS, NOISE_Z};
pub use sampled::{FirmwareParticipants, SampledParticipants};

/// The key of the vertical-scan sketch: (source, destination).
pub type Endpoints = (IpAddr, IpAddr);

/// How far below the threshold a participant's estimate may be and still be
/// reported, in standard errors of a spread at the threshold: `z` of
/// [`Spreaders::report`]. 0.5 trades a little precision for recall near the
/// threshold, as `tests/spread_accuracy.rs` measures it.
pub const REPORT_Z: f64 = 0.5;

/// The width of a participant's `[lower, upper]` bounds, in standard errors: the
/// true spread lies outside them with the normal tail's probability (≈ 6·10⁻⁵).
pub const BOUNDS_Z: f64 = 4.0;

/// `loxo top`'s layout: one stream per run, so the sketches count their candidates'
/// spreads as the stream goes ([`HipSpreaders`], 64 counters each): fan-out and
/// fan-in `HipSpreaders<IpAddr, 1024, 18, 500, 64>` (32 560 bytes each) and the
/// vertical-scan `HipSpreaders<Endpoints, 1024, 12, 512, 64>` (35 416 bytes: 34-byte
/// keys, fewer registers); 100 600 bytes in all ([`Participants::MEMORY_BYTES`]).
/// 1 024 registers per key rather than `loxo-spread`'s 2 048 at the same bytes: a
/// 16 384-frame epoch's 1 % threshold is a few dozen elements, and deeper registers
/// carry more noise there (`tests/participants.rs`: precision 0.39 at 2 048, 0.93 at
/// 1 024). Nothing merges participants' sketches; a device uses
/// [`DeviceParticipants`] (an insert without a loop).
pub type HostParticipants = Participants<
    1024,
    18,
    500,
    12,
    512,
    HipSpreaders<IpAddr, 1024, 18, 500, 64>,
    HipSpreaders<Endpoints, 1024, 12, 512, 64>,
>;

/// A device's layout: ≈ 5 KiB per direction (`Spreaders<IpAddr, 128, 16, 128>`,
/// 5 264 bytes each — `loxo-spread`'s device layout) and 5 088 bytes of
/// vertical-scan sketch (`Spreaders<Endpoints, 128, 16, 72>`: as many columns as
/// the fan sketches, fewer cells for its 34-byte keys); 15 680 bytes in all.
/// Usable from a 2 % threshold (`tests/participants.rs` measures it on the
/// firmware's 16 384-frame epochs).
pub type DeviceParticipants = Participants<128, 16, 128, 16, 72>;

/// Configuration of [`Participants`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct ParticipantsConfig {
    /// Hash seed: the monitor's [`Config::seed`](crate::Config::seed) (the address
    /// digests are HalfSipHash-1-3 under its [`HalfSipKey`], as the monitor's).
    pub seed: Seed,
    /// The threshold as a share of the epoch's distinct pairs: a source is a scanner
    /// when its distinct destinations reach `share` of the epoch's distinct (source,
    /// destination) pairs, a destination a victim when its distinct sources do, a
    /// (source, destination) a vertical scan when its distinct destination ports
    /// reach `share` of the distinct (source, destination, port) triples.
    pub share: Theta,
    /// The smallest spread reported, whatever the share: keeps a few pairs from
    /// being "1 % of an epoch" when an epoch has almost no traffic. 0 = off.
    pub min_spread: u32,
}

/// θ = 1 %.
const ONE_PERCENT: Theta = match Theta::new(1, 100) {
    Some(t) => t,
    None => panic!("1/100 is a valid share"),
};

/// θ = 2 %.
const TWO_PERCENT: Theta = match Theta::new(2, 100) {
    Some(t) => t,
    None => panic!("2/100 is a valid share"),
};

impl ParticipantsConfig {
    /// The host's usual configuration under `seed` (the monitor's, a secret: see
    /// [`Config::with_seed`](crate::Config::with_seed) — there is no default seed):
    /// 1 % of the distinct pairs ([`HostParticipants`] reaches recall ≥ 0.99 and
    /// precision ≥ 0.97 there), no minimum spread.
    #[must_use]
    pub const fn host(seed: Seed) -> Self {
        Self {
            seed,
            share: ONE_PERCENT,
            min_spread: 0,
        }
    }

    /// A device's usual configuration under `seed`: 2 % ([`DeviceParticipants`] is
    /// below its noise at 1 %).
    #[must_use]
    pub const fn device(seed: Seed) -> Self {
        Self {
            share: TWO_PERCENT,
            ..Self::host(seed)
        }
    }
}

/// The participants of a DDoS in each epoch, in fixed memory: the sources with the
/// most distinct destinations and the (source, destination) pairs with the most
/// distinct destination ports (**scanners**, horizontal and vertical), and the
/// destinations with the most distinct sources (**victims**) — each with an
/// estimate, its standard error, `[lower, upper]` bounds and a saturation flag
/// ([`ParticipantsReport`]).
///
/// A companion of a [`FlowMonitor`](crate::FlowMonitor), fed with the same parsed
/// flows ([`observe`](Self::observe)) and closed with it
/// ([`end_epoch`](Self::end_epoch)); it keeps no frame count of its own. Three
/// [`Spreaders`] sketches (see `loxo-spread` for the design and its accuracy):
///
/// | sketch | key | element | geometry |
/// |---|---|---|---|
/// | fan-out | source address | destination address | `Spreaders<IpAddr, S, W, C>` |
/// | fan-in | destination address | source address | `Spreaders<IpAddr, S, W, C>` |
/// | vertical | (source, destination) | destination port | `Spreaders<Endpoints, S, VW, VC>` |
///
/// Addresses are keys as addresses: an IPv4 and an IPv6 address are different keys
/// ([`IpAddr`]: 16 bytes and the family, 17 bytes in a cell).
///
/// # Thresholds
///
/// At epoch end every sketch estimates its distinct pairs from its cells (relative
/// standard error `1/√C`): the fan-out sketch's distinct (source, destination) pairs
/// (the fan-in sketch's are the same: one pair digest feeds both) are the base of
/// the scanners' and the victims' threshold, `max(share · pairs, min_spread)`, the vertical sketch's
/// distinct (source, destination, port) triples that of the vertical scans
/// ([`ParticipantsConfig`]). A key is reported when its estimate reaches the threshold
/// minus [`REPORT_Z`] standard errors of a spread at the threshold.
///
/// # Memory
///
/// The three sketches inline, `2·(S·W + 25·C + 16) + S·VW + 42·VC + 16` bytes with
/// [`Spreaders`] (`F`, `V` by default), `24·T + 72` more per [`HipSpreaders`], plus 64
/// (the digest key, the configuration, the epoch): [`HostParticipants`] 100 600
/// bytes, [`DeviceParticipants`] 15 680 ([`MEMORY_BYTES`](Self::MEMORY_BYTES),
/// pinned by a test).
///
/// # Sketches
///
/// `F` (fan-out, fan-in) and `V` (vertical) are [`Spreaders`] unless named:
/// mergeable, an insert without a loop — a device's. [`HostParticipants`] names
/// [`HipSpreaders`], which count each candidate's spread as the stream goes (one
/// stream: `loxo top`'s): every participant at ≥ 2× the threshold within 7 % on the
/// attack classes of `tests/participants.rs`, against 22 % for the registers' estimate.
///
/// # Cost
///
/// [`observe`](Self::observe): two 32-bit address digests (HalfSipHash-1-3, the first
/// output word: `words + 4` rounds each, 5 for an IPv4 address and 8 for IPv6), one
/// 64-bit mix of both into the (source, destination) digest (shared by the three
/// sketches: it is the fan-out and fan-in pair digest and the vertical key's
/// digest), one more for the (source, destination, port) digest, then three sketch
/// updates (a register and a cell each, no division, no loop). Counted in the
/// disassembly of a `thumbv7em-none-eabihf` release build of [`DeviceParticipants`]
/// (the common path: no register raised, no cell won; a scratch wrapper, not the
/// firmware): 61 Cortex-M4 instructions per IPv4 address digest (101 for IPv6),
/// 206 for [`observe_digests`](Self::observe_digests), ≈ 345 per IPv4 `observe` and
/// ≈ 425 per IPv6 one, plus about 7 for each register raised and 15 for each cell
/// won. A caller that has the source's digest passes it to `observe_digests`: a
/// [`FlowMonitor`](crate::FlowMonitor) finishes it on a flow's first frame for its
/// distinct-source sketch (the first output word of the HalfSipHash state after the
/// source's words, `FlowKey::hash_and_source`), which saves one address digest. On
/// the host (`cargo run --release --example participants_cost -p loxo-flow`): 30–45
/// ns per `observe`, about 380 x86-64 instructions (callgrind).
///
/// A repeated flow changes nothing in any sketch (every element derives from the
/// flow's key, and the sketches count distinct pairs only), so a caller may feed only
/// each flow's first frame of the epoch — the frames a monitor's new-flow filter
/// calls new — and get the same report, but for the filter's false positives (about
/// 1 % of the flows at its design load).
///
/// [`end_epoch`](Self::end_epoch): three `Spreaders::report`s (each reads its pool
/// once and estimates its candidates), three `Spreaders::sigma_at` (one more read of
/// each pool) for [`ParticipantsReport::noisy`], and clears the sketches.
///
/// ```
/// use loxo_flow::{FlowKey, Participants, ParticipantsConfig, ParticipantsReport, Role, Theta};
///
/// let seed = loxo_core::Seed::new(0x5eed, 2); // the device's secret, provisioned
/// let config = ParticipantsConfig { share: Theta::new(5, 100).unwrap(), ..ParticipantsConfig::host(seed) };
/// let mut p = Participants::<128, 16, 128, 8, 96>::new(config);
/// // A scanner: 198.51.100.1 sends one SYN to each of 3 000 destinations.
/// for i in 0..3000u32 {
///     let [a, b, c, d] = (0x0a00_0000 + i).to_be_bytes();
///     p.observe(&FlowKey::v4([198, 51, 100, 1], [a, b, c, d], 40000, 22, 6));
/// }
/// // Ordinary traffic: 500 clients talk to a server, two flows each.
/// for i in 0..1000u32 {
///     let [a, b, c, d] = (0xc0a8_0000 + i / 2).to_be_bytes();
///     p.observe(&FlowKey::v4([a, b, c, d], [192, 0, 2, 80], 50000 + i as u16, 443, 6));
/// }
/// let mut r = ParticipantsReport::<8>::new();
/// p.end_epoch(&mut r);
/// let s = &r.scanners[0];
/// assert_eq!((s.role, s.address.to_string()), (Role::HorizontalScan, "198.51.100.1".into()));
/// assert!(s.lower <= 3000.0 && 3000.0 <= s.upper);
/// // The server has 500 distinct sources of 3 500 pairs: a victim at 5 % (a busy
/// // server is one, by this definition).
/// assert_eq!(r.victims[0].address.to_string(), "192.0.2.80");
/// assert_eq!((r.scanners_left_out, r.victims_left_out), (0, 0));
/// ```
#[derive(Clone, PartialEq)]
pub struct Participants<
    const S: usize,
    const W: usize,
    const C: usize,
    const VW: usize,
    const VC: usize,
    F = Spreaders<IpAddr, S, W, C>,
    V = Spreaders<Endpoints, S, VW, VC>,
> {
    fan_out: F,
    fan_in: F,
    vertical: V,
    hash: HalfSipKey,
    config: ParticipantsConfig,
    epoch: u32,
}

/// Salt of the (source, destination) digest: `mix64` is a bijection, so distinct
/// pairs of address digests get distinct pair digests.
const PAIR_SALT: u64 = 0x7061_6972_7370_6472;

/// Odd multiplier spreading a destination port over 64 bits (the vertical sketch's
/// element digest; the pair digest it is mixed with is keyed).
const PORT_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

impl<const S: usize, const W: usize, const C: usize, const VW: usize, const VC: usize>
    Participants<S, W, C, VW, VC>
{
    /// Empty sketches hashing with `config.seed`, epoch 0.
    #[must_use]
    pub const fn new(config: ParticipantsConfig) -> Self {
        Self {
            fan_out: Spreaders::new(config.seed),
            fan_in: Spreaders::new(config.seed),
            vertical: Spreaders::new(config.seed),
            hash: HalfSipKey::new(config.seed),
            config,
            epoch: 0,
        }
    }
}

impl<
        const S: usize,
        const W: usize,
        const C: usize,
        const VW: usize,
        const VC: usize,
        const T: usize,
    >
    Participants<
        S,
        W,
        C,
        VW,
        VC,
        HipSpreaders<IpAddr, S, W, C, T>,
        HipSpreaders<Endpoints, S, VW, VC, T>,
    >
{
    /// Empty sketches hashing with `config.seed`, epoch 0 — counting `T` candidates
    /// of each sketch as the stream goes ([`HostParticipants`]).
    #[must_use]
    pub const fn new(config: ParticipantsConfig) -> Self {
        Self {
            fan_out: HipSpreaders::new(config.seed),
            fan_in: HipSpreaders::new(config.seed),
            vertical: HipSpreaders::new(config.seed),
            hash: HalfSipKey::new(config.seed),
            config,
            epoch: 0,
        }
    }
}

impl<
        const S: usize,
        const W: usize,
        const C: usize,
        const VW: usize,
        const VC: usize,
        F: SpreadSummary<IpAddr>,
        V: SpreadSummary<Endpoints>,
    > Participants<S, W, C, VW, VC, F, V>
{
    /// The structure's size in bytes: `size_of::<Self>()`.
    pub const MEMORY_BYTES: usize = core::mem::size_of::<Self>();

    /// The configuration.
    #[must_use]
    pub const fn config(&self) -> &ParticipantsConfig {
        &self.config
    }

    /// The running epoch's number, from 0.
    #[must_use]
    pub const fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The fan-out sketch (source → distinct destinations).
    #[must_use]
    pub const fn fan_out(&self) -> &F {
        &self.fan_out
    }

    /// The fan-in sketch (destination → distinct sources).
    #[must_use]
    pub const fn fan_in(&self) -> &F {
        &self.fan_in
    }

    /// The vertical sketch ((source, destination) → distinct destination ports).
    #[must_use]
    pub const fn vertical(&self) -> &V {
        &self.vertical
    }

    /// The digest [`observe_digests`](Self::observe_digests) takes for an address
    /// (4 or 16 bytes, network order; 0 for another length): the first 32-bit output
    /// word of its HalfSipHash-1-3 digest under the seed's [`HalfSipKey`] — the low
    /// half of [`FlowKey::address_hash`], in `words + 4` rounds.
    ///
    /// ```
    /// use loxo_flow::{FlowKey, HostParticipants, ParticipantsConfig};
    /// let c = ParticipantsConfig::host(loxo_core::Seed::new(1, 2));
    /// let p = Box::new(HostParticipants::new(c));
    /// for a in [&[10u8, 0, 0, 1][..], &[0x20; 16][..]] {
    ///     let full = FlowKey::address_hash(&c.seed, a).get();
    ///     assert_eq!(u64::from(p.address_digest(a)), full & 0xffff_ffff);
    /// }
    /// ```
    #[inline]
    #[must_use]
    pub fn address_digest(&self, address: &[u8]) -> u32 {
        if let Ok(b) = <&[u8; 4]>::try_from(address) {
            self.hash.prefix([u32::from_le_bytes(*b)]).finish_lo()
        } else if let Ok(b) = <&[u8; 16]>::try_from(address) {
            let w: [u32; 4] = core::array::from_fn(|i| {
                let at = 4 * i;
                u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
            });
            self.hash.prefix(w).finish_lo()
        } else {
            0
        }
    }

    /// Counts a parsed flow (any of its frames; repeats change nothing): its
    /// destination for its source, its source for its destination, its destination
    /// port for (source, destination). Computes both address digests
    /// ([`address_digest`](Self::address_digest)); see the type's docs for the cost.
    #[inline]
    pub fn observe(&mut self, key: &FlowKey) {
        let src = self.address_digest(key.src_bytes());
        let dst = self.address_digest(key.dst_bytes());
        self.observe_digests(key, src, dst);
    }

    /// [`observe`](Self::observe) with the address digests given: `src` and `dst`
    /// must be [`address_digest`](Self::address_digest) of the key's source and
    /// destination (a monitor has the source's: the first output word of the
    /// HalfSipHash state after the source's words, `FlowKey::hash_and_source`'s
    /// prefix).
    #[inline]
    pub fn observe_digests(&mut self, key: &FlowKey, src: u32, dst: u32) {
        self.observe_parts(key, src, dst, true, true);
    }

    /// [`observe_digests`](Self::observe_digests) of the (source, destination) pair
    /// (the fan-out and fan-in sketches) when `pair`, of the (source, destination,
    /// port) triple (the vertical sketch) when `triple`.
    #[inline(always)]
    pub(crate) fn observe_parts(
        &mut self,
        key: &FlowKey,
        src: u32,
        dst: u32,
        pair: bool,
        triple: bool,
    ) {
        let (Some(s), Some(d)) = (ip(key.src_bytes()), ip(key.dst_bytes())) else {
            return;
        };
        let pair_hash =
            KeyHash::from_u64(mix64((u64::from(src) << 32 | u64::from(dst)) ^ PAIR_SALT));
        if pair {
            self.fan_out.insert_pair_hash(&s, widen(src), pair_hash);
            self.fan_in.insert_pair_hash(&d, widen(dst), pair_hash);
        }
        if triple {
            let port = KeyHash::from_u64(u64::from(key.dst_port()).wrapping_mul(PORT_MUL));
            self.vertical.insert_hashed(&(s, d), pair_hash, port);
        }
    }

    /// Closes the epoch: fills `out` with its scanners and victims (see
    /// [`ParticipantsReport`]), then empties the sketches for the next epoch.
    ///
    /// Stack: two lists of `R` sketch rows besides `loxo-spread`'s report (about
    /// `100·R` bytes on a Cortex-M4: 40-byte rows of addresses, 56-byte rows of
    /// address pairs).
    pub fn end_epoch<const R: usize>(&mut self, out: &mut ParticipantsReport<R>) {
        self.report(out);
        self.fan_out.clear();
        self.fan_in.clear();
        self.vertical.clear();
        self.epoch = self.epoch.wrapping_add(1);
    }

    /// Empties the sketches and counts the epoch closed (after a report).
    pub(crate) fn end_epoch_cleared(&mut self) {
        self.clear();
        self.epoch = self.epoch.wrapping_add(1);
    }

    /// The running epoch's report so far, without closing it.
    pub fn report<const R: usize>(&self, out: &mut ParticipantsReport<R>) {
        self.report_sampled(out, 0, 1);
    }

    /// [`report`](Self::report) of sketches fed a sample of the pairs, each kept with
    /// probability `2^−level` ([`SampledParticipants`]): the thresholds are found
    /// among the sampled pairs (the share is a share of them too; `min_spread` is
    /// divided by `2^level`), then every figure is scaled up by `2^level` and its
    /// standard error gains the sampling's binomial variance, `n̂·(2^level − 1)` for
    /// an estimate `n̂` (a spread `n` sampled at `p` keeps `Bin(n, p)` pairs).
    /// `sampled` stays the count of sampled pairs the cells hold, an exact minimum.
    /// Candidates holding fewer than `min_cells` cells are skipped
    /// ([`Spreaders::report_screened`]).
    pub(crate) fn report_sampled<const R: usize>(
        &self,
        out: &mut ParticipantsReport<R>,
        level: u8,
        min_cells: u32,
    ) {
        for phase in 0..REPORT_PHASES {
            self.report_phase(out, level, min_cells, phase);
        }
    }

    /// One of the [`REPORT_PHASES`] parts of [`report_sampled`](Self::report_sampled),
    /// in order from 0 (`out` carries the figures from one to the next): the
    /// thresholds; their standard errors; the victims; the horizontal scans; the
    /// vertical scans merged in and, when sampled, the figures scaled. A device runs
    /// one per frame, so that no part keeps it from its receive FIFO for long.
    pub(crate) fn report_phase<const R: usize>(
        &self,
        out: &mut ParticipantsReport<R>,
        level: u8,
        min_cells: u32,
        phase: u8,
    ) {
        let scale = f64::from(1u32 << level.min(31));
        match phase {
            0 => {
                // The fan-out and fan-in sketches see the same (source, destination)
                // pairs through one pair digest, so the same cells and priorities:
                // one estimate.
                let pairs = self.fan_out.distinct_pairs();
                let triples = self.vertical.distinct_pairs();
                out.clear();
                out.epoch = self.epoch;
                out.share = self.config.share;
                out.pairs = pairs;
                out.triples = triples;
                out.threshold = self.threshold(pairs.value, scale);
                out.port_threshold = self.threshold(triples.value, scale);
            }
            1 => {
                out.threshold_sigma = self
                    .fan_out
                    .sigma_at(out.threshold)
                    .max(self.fan_in.sigma_at(out.threshold));
                out.port_threshold_sigma = self.vertical.sigma_at(out.port_threshold);
            }
            2 => {
                let mut found = heapless::Vec::<Spreader<IpAddr>, R>::new();
                let n = self
                    .fan_in
                    .report_screened(out.threshold, REPORT_Z, min_cells, &mut found);
                for s in &found {
                    let _ = out
                        .victims
                        .push(Participant::of(Role::Victim, s.key, None, s));
                }
                out.victims_left_out = left_out(n, found.len());
            }
            3 => {
                let mut found = heapless::Vec::<Spreader<IpAddr>, R>::new();
                let n =
                    self.fan_out
                        .report_screened(out.threshold, REPORT_Z, min_cells, &mut found);
                for s in &found {
                    let _ =
                        out.scanners
                            .push(Participant::of(Role::HorizontalScan, s.key, None, s));
                }
                // The horizontal scans that qualified, until phase 4 counts the
                // left-out.
                out.scanners_left_out = u32::try_from(n).unwrap_or(u32::MAX);
            }
            4 => {
                let mut vertical = heapless::Vec::<Spreader<Endpoints>, R>::new();
                let nv = self.vertical.report_screened(
                    out.port_threshold,
                    REPORT_Z,
                    min_cells,
                    &mut vertical,
                );
                let horizontal = core::mem::replace(&mut out.scanners, heapless::Vec::new());
                let (threshold, port_threshold) = (out.threshold, out.port_threshold);
                // Both kinds in one list, by how far each is above its own threshold:
                // the `R` largest of the up to `2·R` found.
                let mut h = horizontal.iter().peekable();
                let mut v = vertical.iter().peekable();
                let ratio = |x: f64, t: f64| if t > 0.0 { x / t } else { f64::INFINITY };
                let vertical_of = |s: &Spreader<Endpoints>| {
                    Participant::of(Role::VerticalScan, s.key.0, Some(s.key.1), s)
                };
                loop {
                    let next = match (h.peek(), v.peek()) {
                        (Some(a), Some(b)) => {
                            if ratio(a.spread.value, threshold)
                                >= ratio(b.spread.value, port_threshold)
                            {
                                h.next().copied()
                            } else {
                                v.next().map(vertical_of)
                            }
                        }
                        (Some(_), None) => h.next().copied(),
                        (None, Some(_)) => v.next().map(vertical_of),
                        (None, None) => None,
                    };
                    match next {
                        Some(p) if out.scanners.push(p).is_ok() => {}
                        _ => break,
                    }
                }
                let qualified = (out.scanners_left_out as usize).saturating_add(nv);
                out.scanners_left_out = left_out(qualified, out.scanners.len());
                if level > 0 {
                    scale_up(out, scale);
                }
            }
            _ => {}
        }
    }

    /// `max(share · base, min_spread / scale)`.
    fn threshold(&self, base: f64, scale: f64) -> f64 {
        (self.config.share.to_f64() * base).max(f64::from(self.config.min_spread) / scale)
    }

    /// Empties the sketches (the epoch number stays).
    pub fn clear(&mut self) {
        self.fan_out.clear();
        self.fan_in.clear();
        self.vertical.clear();
    }
}

/// A sampled report's figures at full scale (see `report_sampled`).
fn scale_up<const R: usize>(out: &mut ParticipantsReport<R>, scale: f64) {
    let up = |e: &mut loxo_spread::Estimate| {
        e.value *= scale;
        e.sigma = sampled_sigma(e.sigma, e.value, scale);
    };
    up(&mut out.pairs);
    up(&mut out.triples);
    out.threshold_sigma = sampled_sigma(out.threshold_sigma, out.threshold * scale, scale);
    out.port_threshold_sigma =
        sampled_sigma(out.port_threshold_sigma, out.port_threshold * scale, scale);
    out.threshold *= scale;
    out.port_threshold *= scale;
    for p in out.scanners.iter_mut().chain(out.victims.iter_mut()) {
        up(&mut p.spread);
        let (v, s) = (p.spread.value, p.spread.sigma);
        p.lower = (v - BOUNDS_Z * s).max(f64::from(p.sampled));
        p.upper = (v + BOUNDS_Z * s).max(p.lower);
    }
}

/// The standard error of `scale·X̂` for a sketch estimate `X̂` of standard error
/// `sigma` over a `1/scale` sample of a spread estimated at `value`: the sketch's
/// error scaled, plus the binomial `value·(scale − 1)`.
fn sampled_sigma(sigma: f64, value: f64, scale: f64) -> f64 {
    let s = sigma * scale;
    libm::sqrt(s * s + value.max(0.0) * (scale - 1.0))
}

/// Phases of a report ([`Participants::report_phase`]).
pub(crate) const REPORT_PHASES: u8 = 5;

/// How many qualified but were not listed.
fn left_out(qualified: usize, listed: usize) -> u32 {
    u32::try_from(qualified.saturating_sub(listed)).unwrap_or(u32::MAX)
}

/// A 32-bit address digest as the sketches' 64-bit key digest: the same word in
/// both halves (the high half is the cells' tag, which locates the key's registers).
#[inline(always)]
const fn widen(d: u32) -> KeyHash {
    KeyHash::from_u64((d as u64) << 32 | d as u64)
}

/// The address in `b` (4 or 16 bytes).
#[inline(always)]
fn ip(b: &[u8]) -> Option<IpAddr> {
    if let Ok(a) = <[u8; 4]>::try_from(b) {
        Some(IpAddr::from(a))
    } else {
        <[u8; 16]>::try_from(b).ok().map(IpAddr::from)
    }
}

impl<
        const S: usize,
        const W: usize,
        const C: usize,
        const VW: usize,
        const VC: usize,
        F: core::fmt::Debug,
        V: core::fmt::Debug,
    > core::fmt::Debug for Participants<S, W, C, VW, VC, F, V>
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("Participants")
            .field("fan_out", &self.fan_out)
            .field("fan_in", &self.fan_in)
            .field("vertical", &self.vertical)
            .field("config", &self.config)
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}
