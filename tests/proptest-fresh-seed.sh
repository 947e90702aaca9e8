#!/usr/bin/env bash
# Runs every property test (proptest) with a fresh random RNG seed, so that their
# "for all" is explored beyond the fixed seeds a plain `cargo test` replays.
# Prints the seed first: a failure reproduces with
#   LOXO_PROPTEST_SEED=<seed> tests/proptest-fresh-seed.sh
# (or the same variable on the one `cargo test` that failed). Usage:
#   tests/proptest-fresh-seed.sh [extra cargo test args, e.g. --release]
set -euo pipefail
cd "$(dirname "$0")/.."

seed="${LOXO_PROPTEST_SEED:-$(od -An -N8 -tu8 /dev/urandom | tr -d ' ')}"
export LOXO_PROPTEST_SEED="$seed"
echo "LOXO_PROPTEST_SEED=$seed"

# The property-test targets only (every file with a `proptest!` block); the unit
# tests inside loxo-flow's parser and loxo-lan9118 are selected by name.
cargo test "$@" -p loxo-tests \
    --test bloom_properties --test bloom_wire --test cms_properties --test cms_wire \
    --test hll_properties --test hll_wire --test topk_gated --test topk_properties
cargo test "$@" -p loxo-flow --test parse
cargo test "$@" -p loxo-flow --lib a_cut_frame_is_the_whole_frame_or_snapped
cargo test "$@" -p loxo-lan9118 --lib fifo_stays_in_step
cargo test "$@" -p loxo-interop --test properties
cargo test "$@" -p loxo-ipfix --test round_trip
cargo test "$@" -p loxo-cli --test monitor_invariants
echo "property tests passed with LOXO_PROPTEST_SEED=$seed"
