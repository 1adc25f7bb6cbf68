//! A Python tool from PyPI in a virtualenv, for the tests that run one against live daemons
//! (yarn-api-client, schemathesis). The rule is one for all of them: an env var names a
//! virtualenv prepared beforehand (`.ci/run` makes one), else one is made in the test's
//! scratch directory; a tool that cannot be set up fails the test under CI (`CI=true`) and
//! skips it loudly elsewhere.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use super::{Daemon, admin_token, await_running, nm, rm_in};

/// Why `tool` cannot be set up here: panics under CI, else says it is skipped.
pub fn unavailable(tool: &str, why: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("{tool} cannot be set up in CI: {why}");
    }
    eprintln!(
        "\n*** SKIPPED: {tool}: {why}. Install python3 with venv and pip (apt-get install python3-venv) to run it. ***\n"
    );
}

/// The virtualenv that `env_var` names, or a new one in `scratch` with `requirement` (a pip
/// requirement such as `name==1.2.3`) installed; or why there is none.
pub fn venv_with(scratch: &Path, env_var: &str, requirement: &str) -> Result<PathBuf, String> {
    if let Ok(venv) = std::env::var(env_var) {
        let venv = PathBuf::from(venv);
        if venv.join("bin/python").exists() {
            return Ok(venv);
        }
        return Err(format!("{env_var}={} has no bin/python", venv.display()));
    }
    let venv = scratch.join("venv");
    let python3 = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output();
    succeeded("python3 -m venv", python3)?;
    let pip = Command::new(venv.join("bin/pip"))
        .args(["install", "--quiet", "--disable-pip-version-check"])
        .arg(requirement)
        .output();
    succeeded(&format!("pip install {requirement}"), pip)?;
    Ok(venv)
}

/// Whether `what` ran and succeeded, or why not.
fn succeeded(what: &str, out: std::io::Result<Output>) -> Result<(), String> {
    let out = out.map_err(|e| format!("{what} does not run ({e})"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

/// What a tool runs against: an rm in `dir` with one running nodemanager, the rm's URL and
/// its admin token.
pub struct LiveRm {
    pub rm: Daemon,
    pub nm: Daemon,
    pub url: String,
    pub token: String,
}

pub fn live_rm(dir: &Path) -> LiveRm {
    let rm = rm_in(dir, &[]);
    let url = format!("http://{}", rm.addr);
    let nm = nm(&rm, &dir.join("nm"));
    await_running(&rm, 1);
    let token = admin_token(&url).expect("the rm left its local credentials");
    LiveRm { rm, nm, url, token }
}
