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
# tests inside loxo-flow's parser and loxo-lan9118 are selected by name. Selected
# with `--workspace`, as `cargo test --workspace` builds them: the same features, so
# nothing is rebuilt after that run (per-package `-p` runs unify features apart and
# rebuilt most of the workspace: 128 s of CI's 33 minutes, cold). Each name below
# is one target of the workspace (target names are unique but `participants`).
cargo test "$@" --workspace \
    --test bloom_properties --test bloom_wire --test cms_properties --test cms_wire \
    --test hll_properties --test hll_wire --test topk_gated --test topk_properties \
    --test parse --test properties --test round_trip --test monitor_invariants
cargo test "$@" --workspace --lib -- a_cut_frame_is_the_whole_frame_or_snapped fifo_stays_in_step
echo "property tests passed with LOXO_PROPTEST_SEED=$seed"
