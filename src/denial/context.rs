//! What a policy allowed, as the classifier needs it: which paths were writable, which were carved
//! out read-only, which were unreadable, whether the network was on. Built from a `ResolvedPolicy`
//! (exact, canonical) or leniently from the raw JSON a user hands to `classifySandboxDenial`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::path::{is_under, normalize};
use crate::policy::{ResolvedPolicy, SandboxMode};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DenialContext {
    pub mode: SandboxMode,
    /// Directories the command could write (absolute).
    pub writable_roots: Vec<PathBuf>,
    /// Paths that stayed read-only even inside a writable root (`.git`, `readOnlyPaths`).
    pub read_only: Vec<PathBuf>,
    /// Paths the command could neither read nor list (they read as missing on Linux).
    pub deny_read: Vec<PathBuf>,
    pub network: bool,
    /// The run's working directory, to resolve relative paths in messages.
    pub cwd: Option<PathBuf>,
    /// `.git` of every writable root is read-only (used when the cwd is added as a root).
    pub protect_git: bool,
    /// The placeholders over missing protected names (empty read-only directories): writing a
    /// file of that name fails with "Is a directory", the policy's doing. Known only from a
    /// resolved policy.
    pub placeholders: Vec<PathBuf>,
    /// The Landlock mode's grants (`ResolvedPolicy::landlock_writable_dirs`): when known, a path
    /// was writable only strictly inside one of these directories. Creating, removing or renaming
    /// an entry needs rights on the directory holding it, which a root split around a read-only
    /// path does not have.
    pub landlock_dirs: Option<Vec<PathBuf>>,
}

impl From<&ResolvedPolicy> for DenialContext {
    fn from(p: &ResolvedPolicy) -> Self {
        let mut read_only = Vec::new();
        for root in &p.writable_roots {
            read_only.extend(root.read_only.iter().cloned());
            read_only.extend(root.missing_read_only.iter().map(|m| m.path.clone()));
        }
        read_only.extend(p.read_only_paths.iter().cloned());
        DenialContext {
            mode: p.mode,
            writable_roots: p.writable_roots.iter().map(|r| r.root.clone()).collect(),
            read_only,
            deny_read: p.deny_read.clone(),
            network: p.network,
            cwd: None,
            protect_git: p.protect_git,
            placeholders: p
                .writable_roots
                .iter()
                .flat_map(|r| r.missing_read_only.iter())
                .filter(|m| m.kind == crate::policy::PlaceholderKind::Dir)
                .map(|m| m.path.clone())
                .collect(),
            landlock_dirs: p.landlock_writable_dirs.clone(),
        }
    }
}

fn parse_mode(s: &str) -> Result<SandboxMode, String> {
    match s {
        "read-only" => Ok(SandboxMode::ReadOnly),
        "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
        "danger-full-access" => Ok(SandboxMode::DangerFullAccess),
        other => Err(format!("unknown sandbox mode {other:?} (expected read-only, workspace-write or danger-full-access)")),
    }
}

/// Absolute paths from a JSON array of strings (or of `{ root | path }` objects); anything else,
/// and relative paths, are skipped.
fn abs_paths(v: Option<&Value>) -> Vec<PathBuf> {
    let Some(Value::Array(items)) = v else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|item| match item {
            Value::String(s) => Some(s.as_str()),
            Value::Object(o) => o
                .get("root")
                .or_else(|| o.get("path"))
                .and_then(Value::as_str),
            _ => None,
        })
        .map(Path::new)
        .filter(|p| p.is_absolute())
        .map(normalize)
        .collect()
}

impl DenialContext {
    /// A context for `mode` with nothing else known.
    pub fn new(mode: SandboxMode) -> Self {
        DenialContext {
            mode,
            writable_roots: Vec::new(),
            read_only: Vec::new(),
            deny_read: Vec::new(),
            network: mode == SandboxMode::DangerFullAccess,
            cwd: None,
            protect_git: true,
            placeholders: Vec::new(),
            landlock_dirs: None,
        }
    }

    /// Sets the working directory; in workspace-write mode it is also a writable root (with its
    /// `.git` read-only when `protect_git`), as the policy says.
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        let cwd = normalize(&cwd.into());
        if !cwd.is_absolute() {
            return self;
        }
        if self.mode == SandboxMode::WorkspaceWrite
            && !self.writable_roots.iter().any(|r| r == &cwd)
        {
            if self.protect_git {
                self.read_only.push(cwd.join(".git"));
            }
            self.writable_roots.push(cwd.clone());
        }
        self.cwd = Some(cwd);
        self
    }

    /// Leniently reads what a JavaScript user passes as the policy: a mode string, a `SandboxPolicy`
    /// object (`mode`, `writableRoots`, `readOnlyPaths`, `protectGit`, `denyRead`, `network`, `tmp`),
    /// a serialized `ResolvedPolicy`, or spawn options holding `sandbox` (and `cwd`). Unknown keys,
    /// wrong-typed values and relative paths are ignored; only an unknown mode or a value that is
    /// not a string or object is an error. No filesystem access.
    pub fn from_json(v: &Value) -> Result<DenialContext, String> {
        match v {
            Value::String(s) => Ok(DenialContext::new(parse_mode(s)?)),
            Value::Object(o) => {
                if !o.contains_key("mode") {
                    if let Some(inner) = o.get("sandbox").filter(|s| s.is_string() || s.is_object())
                    {
                        let ctx = DenialContext::from_json(inner)?;
                        return Ok(match o.get("cwd").and_then(Value::as_str) {
                            Some(cwd) => ctx.with_cwd(cwd),
                            None => ctx,
                        });
                    }
                }
                let mode = match o.get("mode").and_then(Value::as_str) {
                    Some(m) => parse_mode(m)?,
                    None => SandboxMode::ReadOnly,
                };
                let mut ctx = DenialContext::new(mode);
                if let Some(n) = o.get("network").and_then(Value::as_bool) {
                    ctx.network = n || mode == SandboxMode::DangerFullAccess;
                }
                ctx.protect_git = o.get("protectGit").and_then(Value::as_bool).unwrap_or(true);
                ctx.deny_read = abs_paths(o.get("denyRead"));
                ctx.read_only = abs_paths(o.get("readOnlyPaths"));
                if mode == SandboxMode::WorkspaceWrite {
                    ctx.writable_roots = abs_paths(o.get("writableRoots"));
                    // A serialized ResolvedPolicy carries its carve-outs per root.
                    if let Some(Value::Array(roots)) = o.get("writableRoots") {
                        for r in roots.iter().filter_map(Value::as_object) {
                            ctx.read_only.extend(abs_paths(r.get("readOnly")));
                            ctx.read_only.extend(abs_paths(r.get("missingReadOnly")));
                            if let Some(Value::Array(missing)) = r.get("missingReadOnly") {
                                let dirs = missing.iter().filter(|m| m.get("kind").and_then(Value::as_str) == Some("dir"));
                                ctx.placeholders.extend(abs_paths(Some(&Value::Array(dirs.cloned().collect()))));
                            }
                        }
                    }
                    if ctx.protect_git {
                        let gits: Vec<PathBuf> =
                            ctx.writable_roots.iter().map(|r| r.join(".git")).collect();
                        ctx.read_only.extend(gits);
                    }
                }
                if o.get("landlockWritableDirs").is_some() {
                    ctx.landlock_dirs = Some(abs_paths(o.get("landlockWritableDirs")));
                }
                let tmp = o.get("tmp").and_then(Value::as_str);
                let tmp_writable = match tmp {
                    Some("writable") | Some("private") => true,
                    Some(_) => false,
                    None => mode == SandboxMode::WorkspaceWrite,
                };
                if tmp_writable && mode != SandboxMode::DangerFullAccess {
                    ctx.writable_roots.push(PathBuf::from("/tmp"));
                }
                if let Some(cwd) = o.get("cwd").and_then(Value::as_str) {
                    ctx = ctx.with_cwd(cwd);
                }
                Ok(ctx)
            }
            other => Err(format!(
                "policy must be a sandbox mode string or a SandboxPolicy object, got {other}"
            )),
        }
    }

    /// The command could write `p` (absolute): inside a writable root, outside every read-only
    /// carve-out and deny-read path. For one question: a classification asks its `PathIndex`
    /// (built once, the same rule), whose cost does not grow with the policy's paths.
    pub fn is_writable(&self, p: &Path) -> bool {
        if self.mode == SandboxMode::DangerFullAccess {
            return true;
        }
        let granted = match &self.landlock_dirs {
            Some(dirs) => dirs.iter().any(|d| p != d && is_under(p, d)),
            None => self.writable_roots.iter().any(|r| is_under(p, r)),
        };
        granted
            && !self.read_only.iter().any(|r| is_under(p, r))
            && !self.is_deny_read(p)
    }

    /// `p` (absolute) is at or under a deny-read path.
    pub fn is_deny_read(&self, p: &Path) -> bool {
        self.deny_read.iter().any(|d| is_under(p, d))
    }
}
