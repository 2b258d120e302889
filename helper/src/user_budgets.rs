//! The sandbox's share of the per-user kernel budgets that user namespaces can bound: inotify
//! instances and watches, fanotify groups and marks.
//!
//! Why: the kernel charges each of them to the user in every user namespace up to the host's
//! (`inc_ucount`), and checks each level against that namespace's own maximum
//! (`/proc/sys/user/max_*`). On the host the maximum is the user's whole budget (often 128 inotify
//! instances): found by an attacker's review, one run took 127 of them, and while it lived the
//! user's editors and `fs.watch` got `EMFILE`. Set here, in the sandbox's namespace, above the
//! command's own, the maximum bounds what every process of the sandbox takes together, whatever
//! namespaces they make below it, to a quarter of the host's budget.
//!
//! Not every per-user budget has such a knob: epoll watches (`fs.epoll.max_user_watches`) and pipe
//! pages are counted per user with no namespace in between (see the README's per-user budgets).

use sandspawn_helper::report::{setup, Failure};

use crate::describe;
use crate::private_mounts::write_file;

/// Each budget: the sysctl of this namespace that bounds it, and the host's global one it shares.
const BUDGETS: [(&str, &str); 4] = [
    ("user/max_inotify_instances", "fs/inotify/max_user_instances"),
    ("user/max_inotify_watches", "fs/inotify/max_user_watches"),
    ("user/max_fanotify_groups", "fs/fanotify/max_user_groups"),
    ("user/max_fanotify_marks", "fs/fanotify/max_user_marks"),
];

/// The sandbox's share of a host budget: a quarter, so that one run leaves the user's own programs
/// most of it (and at least one).
fn share(host: u64) -> u64 {
    (host / 4).max(1)
}

/// Write each budget's share under `sys` (a writable proc's `sys` of this namespace). A kernel
/// without the counter (fanotify's before 5.13) has nothing to bound: it is passed over.
pub fn limit(sys: &str) -> Result<(), Failure> {
    for (ours, hosts) in BUDGETS {
        let host = match std::fs::read_to_string(format!("{sys}/{hosts}")) {
            Ok(text) => text.trim().parse::<u64>().map_err(|_| setup(0, format!("{sys}/{hosts} holds no number: {text:?}")))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(0);
                return Err(setup(errno, format!("reading {sys}/{hosts} failed: {}", describe(errno))));
            }
        };
        let path = format!("{sys}/{ours}");
        if std::path::Path::new(&path).exists() {
            write_file(&path, &share(host).to_string())?;
        }
    }
    Ok(())
}
