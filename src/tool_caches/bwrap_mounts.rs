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
}

pub fn plan(tc: &ToolCaches) -> Result<Mounts> {
    let mut m = Mounts::default();
    let (Mode::Private, Some(store)) = (tc.mode, tc.store.as_ref()) else { return Ok(m) };
    if tc.caches.is_empty() {
        return Ok(m);
    }
    match tc.host_content {
        Some(HostContent::Visible) => {
            // The store is writable only until the helper has mounted the overlays from it.
            m.binds.push((store.clone(), store.clone()));
            m.unmount.push(path_arg(store)?);
            for c in &tc.caches {
                let (Some(upper), Some(work)) = (tc.upper(c), tc.work(c)) else { continue };
                m.overlays.push(Overlay { target: path_arg(&c.path)?, upper: path_arg(&upper)?, work: path_arg(&work)? });
            }
        }
        _ => {
            for c in &tc.caches {
                if let Some(upper) = tc.upper(c) {
                    m.binds.push((upper, c.path.clone()));
                }
            }
        }
    }
    Ok(m)
}
