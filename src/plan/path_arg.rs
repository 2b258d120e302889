//! Paths as argv strings, refusing what a string cannot name exactly.

/// A path as an argv string. Paths reach the plan canonicalized, so a symlink could lead to a name
/// that is not UTF-8; `args` are strings, and a lossy conversion would name another path.
pub(crate) fn path_arg(p: &std::path::Path) -> crate::Result<String> {
    p.to_str().map(str::to_owned).ok_or_else(|| {
        crate::error::SandboxError::unsupported(format!("path {} is not valid UTF-8", p.display()))
    })
}
