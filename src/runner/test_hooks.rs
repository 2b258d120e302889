//! Test-only: a function a test registers for its workspace, called by the runner after each
//! plan is made and before the sandbox is spawned, to change the workspace in that window
//! (what a concurrent process can do) deterministically; and one called as its preparation
//! begins, on the blocking thread that prepares it (to make it slow).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

type Hook = Box<dyn FnMut() + Send>;

static HOOKS: Mutex<Option<HashMap<PathBuf, Hook>>> = Mutex::new(None);
static PREPARING: Mutex<Option<HashMap<PathBuf, fn()>>> = Mutex::new(None);

/// Call `hook` after every plan of a run whose cwd is `cwd`, until `clear`.
pub fn after_plan(cwd: &Path, hook: impl FnMut() + Send + 'static) {
    HOOKS.lock().unwrap().get_or_insert_with(HashMap::new).insert(cwd.to_path_buf(), Box::new(hook));
}

pub fn clear(cwd: &Path) {
    if let Some(m) = HOOKS.lock().unwrap().as_mut() {
        m.remove(cwd);
    }
    if let Some(m) = PREPARING.lock().unwrap().as_mut() {
        m.remove(cwd);
    }
}

pub(super) fn planned(cwd: &Path) {
    if let Some(hook) = HOOKS.lock().unwrap().as_mut().and_then(|m| m.get_mut(cwd)) {
        hook();
    }
}

/// Call `hook` as every preparation of a run whose cwd is `cwd` begins (on its blocking thread).
pub fn before_prepare(cwd: &Path, hook: fn()) {
    PREPARING.lock().unwrap().get_or_insert_with(HashMap::new).insert(cwd.to_path_buf(), hook);
}

pub(super) fn preparing(cwd: &Path) {
    let hook = PREPARING.lock().unwrap().as_ref().and_then(|m| m.get(cwd).copied());
    if let Some(hook) = hook {
        hook();
    }
}

static SENT: Mutex<Option<HashMap<PathBuf, Hook>>> = Mutex::new(None);

/// Call `hook` once a run whose cwd is `cwd` has sent the in-sandbox helper its arguments
/// (`overlap`), on the thread that sent them, until `clear_sent`.
pub fn after_send(cwd: &Path, hook: impl FnMut() + Send + 'static) {
    SENT.lock().unwrap().get_or_insert_with(HashMap::new).insert(cwd.to_path_buf(), Box::new(hook));
}

pub fn clear_sent(cwd: &Path) {
    if let Some(m) = SENT.lock().unwrap().as_mut() {
        m.remove(cwd);
    }
}

pub(super) fn sent(cwd: &Path) {
    if let Some(hook) = SENT.lock().unwrap().as_mut().and_then(|m| m.get_mut(cwd)) {
        hook();
    }
}
