//! The monitor's configuration: [`Config`], what shares are of ([`ShareOf`]) and what
//! happens at epoch end ([`EpochPolicy`]).

use core::fmt;

use loxo_core::Seed;

use crate::{ByteWeight, Theta};
#[cfg(doc)]
use crate::{FlowMonitor, Report};

/// What an elephant's share is measured in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum ShareOf {
    /// Share of the epoch's bytes.
    #[default]
    Bytes,
    /// Share of the epoch's packets.
    Packets,
}

/// What happens to the elephant state at epoch end.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum EpochPolicy {
    /// Start the next epoch empty: every figure is of this epoch's frames.
    #[default]
    Reset,
    /// Halve the candidates' counts and both Count-Min sketches (aging): elephants are
    /// then of exponentially decayed traffic, and bounds hold for the halved weights
    /// up to ±1 rounding per halving. Distinct counters are always reset.
    Halve,
}

/// Monitor configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Config {
    /// Hash seed (one keyed hash per frame, shared by every structure).
    pub seed: Seed,
    /// Elephant threshold θ: share ≥ θ (inclusive, exact).
    pub theta: Theta,
    /// Minimum absolute volume of an elephant, in the ranking measure (bytes or
    /// packets, [`share_of`](Self::share_of)) within the epoch; 0 = off. An elephant
    /// must hold both θ of the epoch *and* at least this much: the report lists the
    /// flows whose upper bound reaches `max(⌈θ·T⌉, min_volume)` (certain when the lower
    /// bound does), and [`Report::elephants_complete`] certifies that threshold. θ alone
    /// is a share of the epoch's IP traffic, so when almost nothing in an epoch is IP
    /// (garbage, non-IP floods) a few one-frame flows each hold a large share of a
    /// tiny total; `min_volume` keeps them out. Recall 1 is kept for every flow at both
    /// thresholds (a higher threshold only drops flows below it).
    pub min_volume: u64,
    /// Share measured in bytes or packets.
    pub share_of: ShareOf,
    /// What a byte is: the frame on the wire or its IP packet.
    pub byte_weight: ByteWeight,
    /// Close an epoch after this many frames (all frames, malformed included); 0 = only
    /// on the caller's [`FlowMonitor::end_epoch`] (timer tick).
    pub epoch_packets: u32,
    /// Candidate policy at epoch end.
    pub policy: EpochPolicy,
}

/// θ = 1 %.
pub(super) const ONE_PERCENT: Theta = match Theta::new(1, 100) {
    Some(t) => t,
    None => panic!("1/100 is a valid threshold"),
};

impl Config {
    /// The usual configuration under `seed` (`const`, for `static` monitors): θ = 1 %
    /// of bytes, no minimum volume (it depends on the epoch's length and the link: the
    /// caller knows them), epochs closed by the caller, [`EpochPolicy::Reset`].
    ///
    /// There is no default seed, on purpose: the guarantees against crafted keys
    /// (an attacker choosing flows that collide in the sketches to hide an elephant)
    /// hold only for a seed the attacker does not know, and a seed written in the
    /// source is public. Provision one per device or fleet: a firmware at build time
    /// (the sample firmware's `LOXO_DEVICE_SEED`, or its TRNG at boot), a host tool from
    /// the OS's entropy or a key file (`loxo top --seed FILE`, else a random seed it
    /// prints where it saved). Devices whose sketches are merged share one seed.
    ///
    /// ```
    /// use loxo_core::Seed;
    /// use loxo_flow::{Config, FlowMonitor};
    /// // A test's fixed seed; a device's comes from provisioning, never from the source.
    /// const CONFIG: Config = Config { epoch_packets: 1024, ..Config::with_seed(Seed::new(1, 2)) };
    /// static M: FlowMonitor<128> = FlowMonitor::with_candidates(CONFIG);
    /// assert_eq!(M.config().seed, Seed::new(1, 2));
    /// ```
    ///
    /// Nothing hashes with a seed the source picked: neither a configuration nor a
    /// monitor has a `Default`.
    ///
    /// ```compile_fail,E0599
    /// let m = loxo_flow::FlowMonitor::default();
    /// ```
    ///
    /// ```compile_fail,E0599
    /// let c = loxo_flow::Config::default();
    /// ```
    ///
    /// ```compile_fail,E0599
    /// let c = loxo_flow::ParticipantsConfig::default();
    /// ```
    #[must_use]
    pub const fn with_seed(seed: Seed) -> Self {
        Self {
            seed,
            theta: ONE_PERCENT,
            min_volume: 0,
            share_of: ShareOf::Bytes,
            byte_weight: ByteWeight::Wire,
            epoch_packets: 0,
            policy: EpochPolicy::Reset,
        }
    }
}

/// Why a monitor refused a [`Config`] ([`FlowMonitor::try_new`],
/// [`FlowMonitor::try_with_candidates`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
#[non_exhaustive]
pub enum ConfigError {
    /// [`Config::theta`] is below the monitor's `θ_min = 1/N`
    /// ([`FlowMonitor::THETA_MIN`]): with `N` candidates a flow holding θ of an epoch
    /// could go untracked, and the report's `N` rows could not hold every flow
    /// reaching θ. Take a larger θ, or a monitor with more candidates (`N ≥ 1/θ`).
    ThetaBelowMin {
        /// The θ asked for.
        theta: Theta,
        /// The smallest θ the monitor accepts, `1/N`.
        theta_min: Theta,
    },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::ThetaBelowMin { theta, theta_min } => write!(
                f,
                "theta {theta} is below theta_min {theta_min} (1/{n}): a monitor with {n} \
                 candidates lists every elephant only at theta >= 1/{n}",
                n = theta_min.den()
            ),
        }
    }
}

impl core::error::Error for ConfigError {}

impl Default for Theta {
    fn default() -> Self {
        ONE_PERCENT
    }
}
