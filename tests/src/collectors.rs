//! The rule for tests that need an outside collector (nfdump / tshark, `redis-server`,
//! the DataSketches Python package): a missing collector **fails** the test, unless
//! `LOXO_SKIP_COLLECTORS=1` (every collector) or the collector's own variable
//! (`LOXO_SKIP_REDIS=1`, `LOXO_SKIP_DATASKETCHES=1`) is set; then the test prints a
//! `SKIPPED` line that `cargo test` does not capture, and returns.

use std::io::Write;

/// Set to `1` to let every collector test skip when its collector is missing.
pub const SKIP_COLLECTORS: &str = "LOXO_SKIP_COLLECTORS";

/// Whether skipping was asked for: [`SKIP_COLLECTORS`] or `own` (a collector's own
/// variable, if it has one) set to `1`.
#[must_use]
pub fn skip_allowed(own: Option<&str>) -> bool {
    let set = |v: &str| std::env::var(v).as_deref() == Ok("1");
    set(SKIP_COLLECTORS) || own.is_some_and(set)
}

/// Collector `what` cannot run (`problem`): prints a visible `SKIPPED` line and returns
/// if skipping was asked for ([`skip_allowed`]`(own)`); panics otherwise, naming
/// `install` (how to get the collector).
///
/// # Panics
/// Unless skipping was asked for.
pub fn missing(what: &str, problem: &str, install: &str, own: Option<&str>) {
    let how = own.map_or_else(
        || format!("{SKIP_COLLECTORS}=1"),
        |v| format!("{SKIP_COLLECTORS}=1 or {v}=1"),
    );
    assert!(
        skip_allowed(own),
        "{what} cannot run ({problem}); install it ({install}) or set {how} to skip"
    );
    // Straight to stderr: the test harness captures `eprintln!`, not this.
    let _ = writeln!(
        std::io::stderr(),
        "SKIPPED: {what} cannot run ({problem}); {how} is set"
    );
}
