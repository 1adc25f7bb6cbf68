//! Schemathesis (PyPI) against a live rm and nodemanager: every operation `rm/openapi.json`
//! documents, fed what the document allows (and what it forbids), answers without a 5xx, with a
//! status, content type and body the document gives for it. So the document says what the
//! server does, route by route, field by field.
//!
//! The run is reproducible: the seed is fixed (printed; `YARD_SCHEMATHESIS_SEED` overrides it)
//! and the examples per operation are bounded (`YARD_SCHEMATHESIS_EXAMPLES`), so CI spends
//! about a minute here. Requests carry the admin token, so they reach the handlers, not only
//! the 401 in front of them; `tests/schemathesis/hooks.py` turns every generated master command
//! into `true` before it is sent (the nodemanager would run it).
//!
//! Schemathesis goes into a virtualenv: `YARD_SCHEMATHESIS_VENV` names one prepared beforehand
//! (`.ci/run` makes it), else one is made in a temporary directory. Without python3, venv or
//! pip the test says so loudly and passes, except under CI (`CI=true`), where it fails
//! (`support/venv.rs`).

mod support;

use std::path::Path;
use std::process::Command;

use support::venv::{LiveRm, live_rm, unavailable, venv_with};
use support::*;

const SCHEMATHESIS: &str = "schemathesis==4.32.5";

/// The checks that hold the server to the document (schemathesis's names).
const CHECKS: &str = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance";

const SEED: &str = "30";

/// Cases per operation and phase: with ~55 operations, under a minute (3,500 cases).
const EXAMPLES: &str = "20";

#[test]
fn schemathesis_finds_the_rm_as_its_openapi_document_says() {
    let dir = work_dir("schemathesis");
    let venv = match venv_with(&dir, "YARD_SCHEMATHESIS_VENV", SCHEMATHESIS) {
        Ok(venv) => venv,
        Err(why) => return unavailable("schemathesis", &why),
    };
    let LiveRm { rm, nm, url, token } = live_rm(&dir);
    let seed = std::env::var("YARD_SCHEMATHESIS_SEED").unwrap_or_else(|_| SEED.into());
    let examples = std::env::var("YARD_SCHEMATHESIS_EXAMPLES").unwrap_or_else(|_| EXAMPLES.into());
    eprintln!("schemathesis: seed {seed}, {examples} examples per operation");
    let hooks = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/schemathesis/hooks.py");
    let out = Command::new(venv.join("bin/st"))
        .args([
            "run",
            &format!("{url}/ws/v1/yard/openapi.json"),
            "--url",
            &url,
        ])
        .args([
            "--checks",
            CHECKS,
            "--seed",
            &seed,
            "--max-examples",
            &examples,
        ])
        // One worker: with two, hypothesis describing a filter in a second thread hits
        // CPython 3.11's "AST constructor recursion depth mismatch" now and then.
        .args(["--workers", "1", "--request-timeout", "30", "--no-color"])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        // No example database: the seed alone says what runs, and nothing is left behind.
        .args(["--generation-database", "none"])
        .current_dir(&dir)
        .env("SCHEMATHESIS_HOOKS", &hooks)
        .env("NO_COLOR", "1")
        .output()
        .expect("the virtualenv's schemathesis runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    // Its summary (operations, phases, cases) says what was checked, pass or fail.
    let summary = stdout.find("SUMMARY").map_or(&*stdout, |at| &stdout[at..]);
    eprintln!("{summary}");
    assert!(
        out.status.success(),
        "schemathesis found the rm unlike its document (seed {seed}, \
         YARD_SCHEMATHESIS_SEED={seed} to run it again):\n{stdout}\n{stderr}"
    );
    drop(nm);
    drop(rm);
    let _ = std::fs::remove_dir_all(&dir);
}
