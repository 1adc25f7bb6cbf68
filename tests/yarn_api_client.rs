//! yarn-api-client (the common Python client of YARN's REST API, 1.0.3 from PyPI, unpatched)
//! against a live rm and nodemanager: every ResourceManager call for the routes yard serves
//! succeeds with YARN's shapes (tests/yarn_api_client/check.py says what it checks).
//!
//! The client goes into a virtualenv: `YARD_YARN_API_CLIENT_VENV` names one prepared beforehand
//! (`.ci/run` makes it), else one is made in a temporary directory. Without python3, venv or
//! pip the test says so loudly and passes, except under CI (`CI=true`), where it fails.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::*;

const CLIENT: &str = "yarn-api-client==1.0.3";

/// Why the client cannot be set up here, to skip (locally) or fail (in CI) with.
fn unavailable(why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("yarn-api-client cannot be set up in CI: {why}");
    }
    eprintln!(
        "\n*** SKIPPED: yarn_api_client: {why}. Install python3 with venv and pip (apt-get install python3-venv) to run it. ***\n"
    );
}

/// A virtualenv's python with the client installed, or why there is none.
fn client_python(scratch: &Path) -> Result<PathBuf, String> {
    if let Ok(venv) = std::env::var("YARD_YARN_API_CLIENT_VENV") {
        let python = Path::new(&venv).join("bin/python");
        if python.exists() {
            return Ok(python);
        }
        return Err(format!(
            "YARD_YARN_API_CLIENT_VENV={venv} has no bin/python"
        ));
    }
    let venv = scratch.join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .map_err(|e| format!("python3 does not run ({e})"))?;
    if !made.status.success() {
        return Err(format!(
            "python3 -m venv failed: {}",
            String::from_utf8_lossy(&made.stderr).trim()
        ));
    }
    let installed = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check", CLIENT])
        .output()
        .map_err(|e| format!("pip does not run ({e})"))?;
    if !installed.status.success() {
        return Err(format!(
            "pip install {CLIENT} failed: {}",
            String::from_utf8_lossy(&installed.stderr).trim()
        ));
    }
    Ok(venv.join("bin/python"))
}

#[test]
fn yarn_api_client_works_against_yard_without_a_patch() {
    let dir = work_dir("yarn-api-client");
    let python = match client_python(&dir) {
        Ok(p) => p,
        Err(why) => return unavailable(&why),
    };
    let rm = rm_in(&dir, &[]);
    let url = format!("http://{}", rm.addr);
    let nm = nm(&rm, &dir.join("nm"));
    await_running(&rm, 1);
    let token = admin_token(&url).expect("the rm left its local credentials");
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
