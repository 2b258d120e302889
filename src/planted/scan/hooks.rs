//! Steps of a read where a test can change the tree (this thread's walks only).

use std::cell::RefCell;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// The directory is open and watched, not yet listed.
    Watched,
    /// Listed, its descriptor closed.
    Listed,
}

type Hook = Box<dyn FnMut(Step, &Path)>;

thread_local! {
    static HOOK: RefCell<Option<Hook>> = RefCell::new(None);
}

// `set` and `clear` serve the watch tests, which exist where inotify does.
#[cfg(target_os = "linux")]
pub fn set(hook: impl FnMut(Step, &Path) + 'static) {
    HOOK.with(|h| *h.borrow_mut() = Some(Box::new(hook)));
}

#[cfg(target_os = "linux")]
pub fn clear() {
    HOOK.with(|h| *h.borrow_mut() = None);
}

pub fn at(step: Step, path: &Path) {
    HOOK.with(|h| {
        if let Some(hook) = h.borrow_mut().as_mut() {
            hook(step, path);
        }
    });
}
