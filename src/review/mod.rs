//! `SandboxPolicy.workspace: 'review'`: a run's writes land in the real workspace only when the
//! caller accepts them.
//!
//! In review mode each workspace root (the cwd and `writableRoots`; not the shared temporary
//! directories) is covered, inside the sandbox only, by an overlay whose upper directory belongs to
//! a *change set* in sandspawn's state directory (`store`). The command reads and writes as usual;
//! the host's tree is not written. After the run the upper directory is the change set: read
//! against the host's tree (`entries`, `changes`), judged for planted configuration (`risks`),
//! summarized for the result (`summary`), and later applied path by path without following any
//! symlink (`apply`, `host_fs`), read (`content`) or discarded. A later run can continue an open
//! change set: it mounts the same upper directory again (one run at a time: `store::Lock`).
//!
//! Nothing is copied when a run starts (overlayfs copies a file up on its first write), so the
//! cost does not grow with the workspace; describing and applying a set is streamed directory by
//! directory, so a set of 10,000 files is never held in memory at once.
//!
//! Module map: `option` (the policy fields), `id`, `store` (where sets live, their metadata,
//! locks, expiry), `revision` (what a set holds, as a token an apply checks), `spare` (a new set's directories made ahead of time), `run` (one run's share:
//! open or create, the mounts, the result), `entries` (walking an upper directory), `changes` (an
//! entry against the host), `risks` (with `elsewhere`: what repositories run from outside their top, and `npx_bin`: what `npx sandspawn` runs), `summary`, `apply` (with `links`: a file under several names lands as one), `host_fs`, `sparse` (a file's data
//! without its holes, for comparing and applying), `content` (one file's new content, a diff, with `unseen`: what its lines cannot show), `api`
//! (the JSON entry points).

pub mod api;
pub mod apply;
pub mod changed_at;
pub mod changes;
pub mod clock_floor;
pub mod content;
pub mod diff_text;
pub mod dir_modes;
pub mod elsewhere;
pub mod entries;
pub mod git_layout;
pub mod held_open;
pub mod home_config;
pub mod home_links;
pub mod host_fs;
pub mod id;
pub mod links;
pub mod linked_configs;
pub mod npx_bin;
pub mod option;
pub mod own_modes;
pub mod revision;
pub mod risks;
pub mod run;
pub mod spare;
pub mod sparse;
pub mod unasked;
pub mod unseen;
pub mod store;
pub mod summary;

// Upper directories as Linux's overlayfs writes them (its xattrs).
#[cfg(all(test, target_os = "linux"))]
mod tests;
