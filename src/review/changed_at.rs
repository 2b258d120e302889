//! When one of the stores' entries last changed, for deciding what was not used for long: its
//! ctime, which the kernel stamps and no process sets. Not the mtime: any process of the user can
//! set that (`touch -d`), a Landlock command included (the mode does not govern file times), and a
//! command in another workspace set a pending change set's back to 2000 to have the next process
//! that listed the sets remove it (found by an attacker's review, cross31).

/// The ctime of the entry `m` describes.
pub(crate) fn changed_at(m: &std::fs::Metadata) -> std::time::SystemTime {
    use std::os::unix::fs::MetadataExt;
    let since = std::time::Duration::new(m.ctime().max(0) as u64, m.ctime_nsec().clamp(0, 999_999_999) as u32);
    std::time::UNIX_EPOCH + since
}

/// The ctime of the entry `m` describes, in nanoseconds since the epoch: what a set's beginning
/// (`Meta::begin_ns`) and an apply's moment (`clock_floor::sealed_now`) are compared with.
pub(crate) fn ctime_ns(m: &std::fs::Metadata) -> i64 {
    use std::os::unix::fs::MetadataExt;
    m.ctime() * 1_000_000_000 + m.ctime_nsec()
}
