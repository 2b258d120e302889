//! The descriptor numbers the runner hands a sandboxed child, defined once for every plan kind
//! and for the runner that wires them (stdio is 0..=2). A plan for another spawner uses none of
//! them: its own descriptors start at 3.

/// bwrap's `--json-status-fd` (bwrap plans).
pub const STATUS: i32 = 3;
/// The helper's failure report: written only when the command never ran (every plan with a helper).
pub const REPORT: i32 = 4;
/// The sandbox end of the network bridge's socket pair (a `NetworkPolicy`, bwrap plans).
pub const BRIDGE: i32 = 5;
/// The Landlock supervisor's control pipe: its end of file kills the tree.
pub const CONTROL: i32 = 6;
/// The read end of the pipe the runner sends the in-sandbox helper's arguments on, once its walk
/// is done (`runner::overlap`; bwrap plans). The number of Landlock's `CONTROL`: no plan has both.
pub const HELPER_ARGS: i32 = 6;
/// A copy of the read end of bwrap's status pipe (`STATUS`), for the helper: once the host closed
/// its write end (right after the spawn), only bwrap itself holds one (its sandbox child closes
/// `--json-status-fd` after the clone, its monitor keeps it until the sandbox's init has ended),
/// so the helper refuses to start the command once that pipe has no writer: bwrap is gone
/// (`Steps::bwrap_alive`; given whenever the plan has `STATUS`).
pub const BWRAP_ALIVE: i32 = 7;
/// The first descriptor above the runner's: plans number their data descriptors from here, and the
/// runner lifts its own ends above it, so no `dup2` in the child clobbers a source before use.
pub const FIRST_FREE: i32 = 8;
/// Where a plan for another spawner starts numbering its data descriptors.
pub const FIRST_FREE_WITHOUT_RUNNER: i32 = 3;
