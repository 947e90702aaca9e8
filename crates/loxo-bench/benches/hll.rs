//! Benchmark of the `hll` family (to be written by its issue).

fn main() {}
