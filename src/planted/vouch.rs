//! What the directory watcher (`watch`) says of a listing the walk (`scan`) read earlier: the
//! one word they share, so the walk uses the watcher and never the other way round.

/// What the watcher says of a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Vouch {
    /// No entry was added, removed or renamed in it since it was read.
    Unchanged,
    /// One was, or its watch is gone: read it again.
    Changed,
    /// Events may have been lost: the stat rule decides.
    Unknown,
}
