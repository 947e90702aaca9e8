//! Benchmark of the `cms` family (to be written by its issue).

fn main() {}
