//! Test-only: a function a test registers for its workspace, called by the runner after each
//! plan is made and before the sandbox is spawned, to change the workspace in that window
//! (what a concurrent process can do) deterministically.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

type Hook = Box<dyn FnMut() + Send>;

static HOOKS: Mutex<Option<HashMap<PathBuf, Hook>>> = Mutex::new(None);

/// Call `hook` after every plan of a run whose cwd is `cwd`, until `clear`.
pub fn after_plan(cwd: &Path, hook: impl FnMut() + Send + 'static) {
    HOOKS.lock().unwrap().get_or_insert_with(HashMap::new).insert(cwd.to_path_buf(), Box::new(hook));
}

pub fn clear(cwd: &Path) {
    if let Some(m) = HOOKS.lock().unwrap().as_mut() {
        m.remove(cwd);
    }
}

pub(super) fn planned(cwd: &Path) {
    if let Some(hook) = HOOKS.lock().unwrap().as_mut().and_then(|m| m.get_mut(cwd)) {
        hook();
    }
}
