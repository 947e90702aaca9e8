#!/usr/bin/env bash
# Fuzzing smoke run: every cargo-fuzz target for a few seconds on stable
# (`-s none`: coverage-guided libFuzzer without sanitizers), starting from the
# corpus kept in the repository. Usage: tests/fuzz/smoke.sh [SECONDS]
# The targets are built in the dev profile (`--dev`: debug assertions and overflow
# checks on, as in the default release build, but unoptimised): on a fresh clone
# that build takes 80 s against 150 s, which a run of a few seconds per target does
# not win back. For a long fuzzing session use `cargo fuzz run -s none TARGET`.
set -euo pipefail
cd "$(dirname "$0")"
secs="${1:-10}"
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
for t in $(cargo fuzz list); do
    echo "--- fuzz $t (${secs}s)"
    mkdir -p "corpus/$t"
    # A scratch copy keeps CI runs from rewriting the committed corpus.
    scratch="$(mktemp -d)"
    cp -r "corpus/$t/." "$scratch/"
    log="$(mktemp)"
    if ! cargo fuzz run --dev -s none "$t" "$scratch" -- -max_total_time="$secs" -print_final_stats=1 >"$log" 2>&1; then
        tail -40 "$log" >&2
        echo "fuzz target $t failed (crash artifacts, if any, in tests/fuzz/artifacts/$t)" >&2
        exit 1
    fi
    grep -E "^(Done|stat::number_of_executed_units)" "$log" || true
    rm -rf "$scratch" "$log"
done
