//! Benchmark of the `bloom` family (to be written by its issue).

fn main() {}
