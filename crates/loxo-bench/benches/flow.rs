//! Benchmark of the `flow` family (to be written by its issue).

fn main() {}
