//! A symlink a run made outside `node_modules` that leads to a directory inside one. Found by an
//! attacker's review (host25, nm_dirlink.js): the walk does not look in `node_modules`, so the
//! names there are neither protected nor reported; a run put `.cargo/config.toml` (a
//! `rustc-wrapper`) and `.envrc` in `node_modules/y` and made `tools -> node_modules/y`, a place
//! the user's shell goes, and the host's `cd tools && cargo build` ran the wrapper with no risk
//! said. Such a link is said whatever is there now: a later run may fill it (what it leads to is
//! not walked then either), and listing it would cost a read a link for nothing more certain.
//! Cheap: the walk after the run resolved the link already; one `stat` tells a file from a directory.

use std::path::Path;

/// What to say of a link holding `target` that leads to `resolved` (`None`: its way could not be
/// followed, which `links::judge` says; `detect` makes it a `scan-incomplete` at the link), if
/// that lies in a `node_modules` and is a directory, or nothing yet (a directory may be made there later). A link to a file there
/// (`bin/tool -> ../node_modules/.bin/tool`) brings no names anywhere.
pub fn said(target: &Path, resolved: Option<&Path>) -> Option<String> {
    let resolved = resolved?;
    if !in_node_modules(resolved) || std::fs::metadata(resolved).is_ok_and(|m| !m.is_dir()) {
        return None;
    }
    Some(format!(
        "is a symlink made during the run, to {}, that leads into node_modules ({}), where the walk does not look: the \
         protected and report-only names there (.envrc, .cargo/config.toml, .vscode, ...) are not protected and not \
         reported, now or when a later run puts them there, and a host tool run through this link (`cd` there, then \
         direnv, cargo, an editor) acts on them: look at what it leads to before running host tools through it",
        target.display(),
        resolved.display()
    ))
}

/// In any case, as `links_via` tells it: a case-insensitive filesystem's `Node_Modules` is the
/// same directory.
fn in_node_modules(p: &Path) -> bool {
    p.components().any(|c| c.as_os_str().as_encoded_bytes().eq_ignore_ascii_case(b"node_modules"))
}
