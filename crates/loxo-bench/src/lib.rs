//! Benchmarks (`benches/`) and accuracy-chart tools (`src/bin/`) of the loxo
//! sketches; host only, never published.
