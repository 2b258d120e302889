//! What the sandspawn addon and its in-sandbox helper share: the helper's versioned command line
//! (`protocol`), the seccomp filter generator (`seccomp`) and the failure report the helper sends
//! back (`report`), the proxy variables of the network allow-list (`proxy_env`). Pure code: the binary in `main.rs` does the system calls.

pub mod protocol;
pub mod proxy_env;
pub mod report;
pub mod seccomp;
