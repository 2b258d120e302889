//! The mount points the sandbox has when the read-only carve-outs are copied (`read_only`): those
//! of the table bwrap left, read once by the helper's first checks (`note_table`), and those the
//! helper mounted since that can lie in a writable root (the reviewed workspace's overlays,
//! `note`). Asked whether a carve-out has mounts below it: only one without may have its copy made
//! read-only whole in one call. A mount missed here (one the helper made elsewhere: `/dev`, `/proc`)
//! would only be made read-only with the copy: stricter, never weaker. Nothing noted (a plan
//! without bwrap's table): every path is taken to have mounts below it.

use std::sync::Mutex;

use sandspawn_helper::mount_points::MountPoints;

static KNOWN: Mutex<Option<MountPoints>> = Mutex::new(None);

/// Every point of `table`, the mount table as bwrap left it.
pub fn note_table(table: &[u8]) {
    if let Ok(mut k) = KNOWN.lock() {
        *k = Some(MountPoints::of_table(table));
    }
}

/// A mount the helper made at `point` since `note_table`.
pub fn note(point: &[u8]) {
    if let Ok(mut k) = KNOWN.lock() {
        if let Some(points) = k.as_mut() {
            points.add(point);
        }
    }
}

/// Whether a mount may lie below `path` (strictly): true unless the table was noted and shows none.
pub fn any_below(path: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    KNOWN.lock().ok().and_then(|k| k.as_ref().map(|points| points.any_below(path.as_os_str().as_bytes()))).unwrap_or(true)
}
