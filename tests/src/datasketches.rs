//! The Python interpreter with Apache DataSketches (the PyPI package) that the
//! interop tests drive.

use std::process::Command;

/// The Python interpreter to use (`LOXO_PYTHON`, else `python3`), or `None` when it
/// cannot import `datasketches` and `LOXO_SKIP_COLLECTORS=1` or
/// `LOXO_SKIP_DATASKETCHES=1` (`crate::collectors`).
///
/// # Panics
/// When it cannot import `datasketches` and skipping was not asked for, with a
/// message that says how to set it up.
#[must_use]
pub fn python() -> Option<String> {
    let py = std::env::var("LOXO_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&py)
        .args(["-c", "import datasketches"])
        .output();
    let problem = match probe {
        Ok(out) if out.status.success() => return Some(py),
        // The traceback's last line says why (`ModuleNotFoundError: …`).
        Ok(out) => String::from_utf8_lossy(&out.stderr)
            .lines()
            .last()
            .unwrap_or_default()
            .trim()
            .to_string(),
        Err(e) => e.to_string(),
    };
    crate::collectors::missing(
        &format!("`{py} -c 'import datasketches'`"),
        &problem,
        "a virtualenv with `pip install datasketches`, LOXO_PYTHON set to its python",
        Some("LOXO_SKIP_DATASKETCHES"),
    );
    None
}
