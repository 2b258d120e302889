//! What a command may touch: the user's `sandbox` option, validated and resolved against the real
//! filesystem (canonical paths, existing roots, `.git` carve-outs). Launch plans are built from a
//! `ResolvedPolicy` only, so every check happens once, here.

pub(crate) mod held_links;
mod held_links_shared;
#[cfg(target_os = "linux")]
mod deny_views;
mod hidden;
#[cfg(target_os = "linux")]
mod home_views;
mod host_code;
mod kernel_fs;
mod parse;
pub(crate) mod path_walk;
pub(crate) mod paths;
mod policy_links;
pub(crate) mod procfs;
mod resolve;
mod resolved;
mod system_paths;
mod terms;
#[cfg(target_os = "linux")]
mod tree_identity;

pub use resolve::{planned_identity, resolve_policy, resolve_policy_named};
pub use resolved::{PolicyContext, ResolvedPolicy};
pub use terms::{MissingReadOnly, PlaceholderKind, SandboxMode, TmpMode, UnixSockets, WritableRoot};
pub(crate) use terms::sort_carve_outs;

