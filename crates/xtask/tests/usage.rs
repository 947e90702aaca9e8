//! The command line's refusals, through the built binary. (Its being an integration
//! test also makes `cargo test --workspace` build `target/<profile>/xtask`, which the
//! firmware tests of `tests/` run instead of a release build of their own.)

use std::process::Command;

#[test]
fn an_unknown_command_prints_the_usage_and_fails() {
    for args in [&[][..], &["dmeo"][..], &["decode"][..]] {
        let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run xtask: {e}"));
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("usage: cargo xtask demo"), "{args:?}: {err}");
    }
}

#[test]
fn a_missing_capture_or_host_tool_is_refused_before_any_build() {
    let cases: [(&[&str], Option<&str>, &str); 2] = [
        (
            &["demo", "--pcap", "/nonexistent/capture.pcap"],
            None,
            "--pcap /nonexistent/capture.pcap: no such file",
        ),
        (
            &["demo", "--frames", "10"],
            Some("/nonexistent/loxo"),
            "LOXO_HOST_TOOL=/nonexistent/loxo: no such file",
        ),
    ];
    for (args, tool, want) in cases {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
        cmd.args(args).env_remove("LOXO_HOST_TOOL");
        if let Some(t) = tool {
            cmd.env("LOXO_HOST_TOOL", t);
        }
        let out = cmd
            .output()
            .unwrap_or_else(|e| panic!("cannot run xtask: {e}"));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("xtask: building"), "{args:?}: {err}");
    }
}
