//! yarn-api-client (the common Python client of YARN's REST API, 1.0.3 from PyPI, unpatched)
//! against a live rm and nodemanager: every ResourceManager call for the routes yard serves
//! succeeds with YARN's shapes (tests/yarn_api_client/check.py says what it checks).
//!
//! The client goes into a virtualenv: `YARD_YARN_API_CLIENT_VENV` names one prepared beforehand
//! (`.ci/run` makes it), else one is made in a temporary directory. Without python3, venv or
//! pip the test says so loudly and passes, except under CI (`CI=true`), where it fails
//! (`support/venv.rs`).

mod support;

use std::path::Path;
use std::process::Command;

use support::venv::{LiveRm, live_rm, unavailable, venv_with};
use support::*;

const CLIENT: &str = "yarn-api-client==1.0.3";

#[test]
fn yarn_api_client_works_against_yard_without_a_patch() {
    let dir = work_dir("yarn-api-client");
    let python = match venv_with(&dir, "YARD_YARN_API_CLIENT_VENV", CLIENT) {
        Ok(venv) => venv.join("bin/python"),
        Err(why) => return unavailable("yarn-api-client", &why),
    };
    let LiveRm { rm, nm, url, token } = live_rm(&dir);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/yarn_api_client/check.py");
    let out = Command::new(&python)
        .arg(&script)
        .env("YARD_RM", &url)
        .env("YARD_TOKEN", token)
        .env("YARD_NODE", &nm.addr)
        .output()
        .expect("the virtualenv's python runs");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("every call passed"), "{stdout}\n{stderr}");
    drop(nm);
    drop(rm);
    let _ = std::fs::remove_dir_all(&dir);
}
