//! The private tool caches in a bwrap plan: what bwrap binds and what the helper mounts.

use std::path::PathBuf;

use sandspawn_helper::protocol::Overlay;

use super::{HostContent, Mode, ToolCaches};
use crate::error::Result;
use crate::plan::path_arg;

/// bwrap's and the helper's share of the private caches.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Mounts {
    /// `--bind SRC DEST` pairs, after every other mount of the plan.
    pub binds: Vec<(PathBuf, PathBuf)>,
    /// Mounted by the helper, which bwrap then lets keep `plan::bwrap::HELPER_MOUNT_CAPS`.
    pub overlays: Vec<Overlay>,
    /// Binds the helper detaches after mounting the overlays.
    pub unmount: Vec<String>,
    /// The cache locations mounted over (an overlay or a bind each): mount points, whose parents
    /// the plan pins where they lie in a writable root (`plan::pins`).
    pub covered: Vec<PathBuf>,
}

/// The mounts of a run's caches, once `RunGuard::prepare` filled in their layers and directories
/// (a cache without them is left out: plans for other spawners have no run to publish their writes).
pub fn plan(tc: &ToolCaches) -> Result<Mounts> {
    let mut m = Mounts::default();
    let (Mode::Private | Mode::Shared, Some(store)) = (tc.mode, tc.store.as_ref()) else { return Ok(m) };
    let ready: Vec<_> = tc.caches.iter().filter(|c| c.upper.is_some() && c.work.is_some()).collect();
    if ready.is_empty() {
        return Ok(m);
    }
    m.covered = ready.iter().map(|c| c.path.clone()).collect();
    match tc.host_content {
        Some(HostContent::Visible) => {
            // The store is writable only until the helper has mounted the overlays from it.
            m.binds.push((store.clone(), store.clone()));
            m.unmount.push(path_arg(store)?);
            for c in ready {
                let (Some(upper), Some(work)) = (&c.upper, &c.work) else { continue };
                let layers = c.layers.iter().map(|l| path_arg(l)).collect::<Result<Vec<_>>>()?;
                m.overlays.push(Overlay { target: path_arg(&c.path)?, upper: path_arg(upper)?, work: path_arg(work)?, layers });
            }
        }
        _ => {
            // No overlayfs in user namespaces: the base layer itself, shared by the workspace's
            // runs like any cache directory (no upper directory to fold).
            for c in ready {
                if let Some(base) = c.layers.last() {
                    m.binds.push((base.clone(), c.path.clone()));
                }
            }
        }
    }
    Ok(m)
}
