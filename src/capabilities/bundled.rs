//! The bwrap sandspawn ships: `sandspawn-bwrap`, built from upstream bubblewrap by
//! `scripts/build-bwrap.js` and installed beside the addon's `.node` file. This module finds it and
//! checks that it is the very binary this addon was built with: the build bakes its SHA-256 into
//! the addon (`build.rs`), and a file whose digest differs is refused, never run.
//!
//! The digest is computed over an fd of the canonical path and remembered per file identity
//! (device, inode, size, mtime, ctime), so a spawn costs a `stat`, and any rewrite of the file
//! (which changes mtime/ctime) is hashed again before it is used. The binary is then executed by
//! that canonical path (not a copy in a memfd), so a path-based AppArmor profile an administrator
//! writes for it applies.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The bundled binary's file name, beside the `.node` file.
pub const FILE_NAME: &str = "sandspawn-bwrap";

/// The digest baked in at build time; `None` in a build made without the bundled bwrap.
pub const BUILT_DIGEST: Option<&str> = option_env!("SANDSPAWN_BUNDLED_BWRAP_SHA256");

/// Where to look for a bundled bwrap, and the digest it must have.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BundledBwrap {
    /// `None` when the addon's own location is unknown.
    pub path: Option<PathBuf>,
    /// `None` when this build has no bundled bwrap.
    pub digest: Option<String>,
}

impl BundledBwrap {
    /// The one installed with this addon: `sandspawn-bwrap` in the directory of the loaded
    /// shared object, checked against the digest baked in at build time.
    pub fn installed() -> BundledBwrap {
        BundledBwrap { path: addon_dir().map(|d| installed_path(&d)), digest: BUILT_DIGEST.map(str::to_string) }
    }
}

fn installed_path(addon_dir: &Path) -> PathBuf {
    // `cargo test` binaries live in target/<profile>/deps, but scripts/build-bwrap.js puts the
    // binary beside Cargo.toml (where the addon is built): the runner's tests must find it there
    // to run on a host without a system bwrap, as the addon would.
    #[cfg(test)]
    if addon_dir.ends_with("deps") && !addon_dir.join(FILE_NAME).exists() {
        return Path::new(env!("CARGO_MANIFEST_DIR")).join(FILE_NAME);
    }
    addon_dir.join(FILE_NAME)
}

/// Why the bundled bwrap cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// This build of sandspawn has no bundled bwrap (no digest was baked in).
    NotBuilt,
    /// The file is not where it should be (or the addon's directory is unknown).
    Missing(Option<PathBuf>),
    /// Not an executable regular file, writable by others, or owned by another user.
    Unsafe(PathBuf, String),
    /// Its SHA-256 differs from the one baked in.
    DigestMismatch { path: PathBuf, expected: String, actual: String },
    Unreadable(PathBuf, String),
}

impl Problem {
    /// The attempt's cause id.
    pub fn cause(&self) -> &'static str {
        match self {
            Problem::NotBuilt => "bundled-bwrap-not-built",
            Problem::Missing(_) => "bundled-bwrap-missing",
            Problem::Unsafe(..) => "bundled-bwrap-unsafe",
            Problem::DigestMismatch { .. } => "bundled-bwrap-digest-mismatch",
            Problem::Unreadable(..) => "bundled-bwrap-unreadable",
        }
    }

    pub fn message(&self) -> String {
        match self {
            Problem::NotBuilt => "not available in this build (sandspawn was built without its bundled bwrap)".to_string(),
            Problem::Missing(Some(p)) => format!("{} is missing", p.display()),
            Problem::Missing(None) => "the directory of the sandspawn addon could not be determined".to_string(),
            Problem::Unsafe(p, why) => format!("{} is refused: {why}", p.display()),
            Problem::DigestMismatch { path, expected, actual } => format!(
                "{} is refused: its SHA-256 is {actual}, but this sandspawn was built with {expected} (the file was modified or replaced)",
                path.display()
            ),
            Problem::Unreadable(p, e) => format!("{} cannot be read: {e}", p.display()),
        }
    }

    pub fn fix(&self) -> &'static str {
        match self {
            Problem::NotBuilt => "install a sandspawn build that includes its bundled bwrap (the npm linux packages do; from source, `node scripts/build-bwrap.js` before building the addon)",
            Problem::Unsafe(..) => "make it and every directory above it root's or yours and writable by nobody else (`chmod go-w` the entry named, `chown` one another user owns), or reinstall sandspawn (`npm install` / `npm ci`) where they are",
            _ => "reinstall sandspawn (`npm install` / `npm ci`) to restore its bundled bwrap",
        }
    }
}

/// The directory holding the shared object this code was loaded from (the `.node` file in the
/// addon; the test executable under `cargo test`).
pub fn addon_dir() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt;
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address (a function of this object) and fills `info`, whose
    // `dli_fname` points into the loader's own, still-loaded bookkeeping.
    let found = unsafe { libc::dladdr(addon_dir as *const libc::c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let file = PathBuf::from(std::ffi::OsStr::from_bytes(name.to_bytes()));
    let file = std::fs::canonicalize(&file).ok()?;
    file.parent().map(Path::to_path_buf)
}

/// The canonical path of the bundled bwrap when it may be run, else why not.
pub fn verify(b: &BundledBwrap) -> Result<PathBuf, Problem> {
    let Some(expected) = b.digest.as_deref() else { return Err(Problem::NotBuilt) };
    let Some(path) = b.path.as_deref() else { return Err(Problem::Missing(None)) };
    let canon = match std::fs::canonicalize(path) {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Problem::Missing(Some(path.to_path_buf()))),
        Err(e) => return Err(Problem::Unreadable(path.to_path_buf(), e.to_string())),
    };
    let mut file = std::fs::File::open(&canon).map_err(|e| Problem::Unreadable(canon.clone(), e.to_string()))?;
    let meta = file.metadata().map_err(|e| Problem::Unreadable(canon.clone(), e.to_string()))?;
    let mode = meta.permissions().mode();
    if !meta.is_file() {
        return Err(Problem::Unsafe(canon, "it is not a regular file".to_string()));
    }
    if mode & 0o111 == 0 {
        return Err(Problem::Unsafe(canon, "it is not executable".to_string()));
    }
    if mode & 0o022 != 0 {
        return Err(Problem::Unsafe(canon, format!("it is writable by group or others (mode {:o})", mode & 0o7777)));
    }
    let euid = unsafe { libc::geteuid() };
    if meta.uid() != 0 && meta.uid() != euid {
        return Err(Problem::Unsafe(canon, format!("it is owned by uid {}, neither root nor this user", meta.uid())));
    }
    // Hashed here, executed by its path later: no directory on its way may let another user
    // rename a program of theirs over it in between (the file's own mode and owner are above).
    match super::override_path::changeable_by_others(&canon) {
        Ok(Some(why)) => return Err(Problem::Unsafe(canon, format!("{why}, so another user could replace it between its check and its use"))),
        Err(e) => return Err(Problem::Unreadable(canon, e.to_string())),
        Ok(None) => {}
    }
    let actual = crate::digest::sha256(&canon, &mut file, &meta).map_err(|e| Problem::Unreadable(canon.clone(), e.to_string()))?;
    if !actual.eq_ignore_ascii_case(expected) {
        return Err(Problem::DigestMismatch { path: canon, expected: expected.to_string(), actual });
    }
    Ok(canon)
}
