//! sandspawn: run a command inside the operating system's own sandbox (bubblewrap on Linux,
//! Seatbelt on macOS), own its process tree, capture its output and classify sandbox denials.
//!
//! Everything except `binding` is the napi-free core, unit-tested with `cargo test`; `binding` only
//! converts between JavaScript values and the core's types.

pub mod api;
pub mod capabilities;
pub(crate) mod canonical_memo;
pub mod child_fds;
pub mod denial;
pub mod describe;
pub mod digest;
pub(crate) mod dir_names;
pub mod error;
pub mod helper;
pub mod network;
pub mod no_symlinks;
pub mod limits;
pub mod mounts_below;
pub mod options;
pub mod own_files;
pub mod own_links;
pub mod pidns;
pub mod placeholders;
pub mod plan;
pub mod planted;
pub mod platform;
pub mod policy;
pub mod program;
pub mod signals;
pub mod state_dir;
pub mod pty;
pub mod remove_tree;
pub mod review;
pub mod runner;
pub mod path_split;
pub mod presence;
pub mod search_blocker;
pub mod tool_caches;
pub mod whole_file;
#[cfg(all(test, target_os = "linux"))]
mod test_capabilities;
#[cfg(test)]
mod test_mount_table;

mod binding;

pub use error::{ErrorCode, Result, SandboxError};
