//! The change sets' JSON-level entry points (what the binding passes through): apply, discard,
//! read, diff, list, show. Each takes the set's lock for what it does.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::apply::{apply_sealed, Request};
use super::store;
use crate::describe::describe;
use crate::error::{Result, SandboxError};

fn object<'a>(options: &'a Value, known: &[&str]) -> Result<Option<&'a serde_json::Map<String, Value>>> {
    match options {
        Value::Null => Ok(None),
        Value::Object(m) => {
            if let Some(k) = m.keys().find(|k| !known.contains(&k.as_str())) {
                return Err(SandboxError::invalid(k, format!("unknown option (accepted: {})", known.join(", "))));
            }
            Ok(Some(m))
        }
        other => Err(SandboxError::invalid("options", format!("expected an object, got {}", describe(other)))),
    }
}

fn absolute(option: &str, v: &Value) -> Result<PathBuf> {
    match v.as_str() {
        Some(s) if s.starts_with('/') && !s.contains('\0') => Ok(PathBuf::from(s)),
        _ => Err(SandboxError::invalid(option, format!("must be an absolute path, got {}", describe(v)))),
    }
}

/// `applyChangeSet(id, { paths?, force?, revision? })`: with `revision`, only while the set is still
/// what was shown; returns what was done and the revision of what is left (`null`: nothing is).
pub fn apply_change_set(id: &str, options: &Value) -> Result<Value> {
    let m = object(options, &["paths", "force", "revision"])?;
    let field = |k: &str| m.and_then(|m| m.get(k)).filter(|v| !v.is_null());
    let paths = match field("paths") {
        None => None,
        Some(Value::Array(items)) => Some(items.iter().enumerate().map(|(i, v)| absolute(&format!("paths[{i}]"), v)).collect::<Result<Vec<_>>>()?),
        Some(v) => return Err(SandboxError::invalid("paths", format!("must be an array of absolute paths, got {}", describe(v)))),
    };
    let force = match field("force") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(v) => return Err(SandboxError::invalid("force", format!("must be a boolean, got {}", describe(v)))),
    };
    let revision = match field("revision") {
        None => None,
        Some(Value::String(r)) if !r.is_empty() => Some(r.as_str()),
        Some(v) => return Err(SandboxError::invalid("revision", format!("must be the revision showChangeSet (or a run's changeSet) gave, a non-empty string, got {}", describe(v)))),
    };
    let (set, lock) = store::open_locked(id)?;
    // Before the check: a file changed after it (through a descriptor a run passed on) never lands.
    let sealed = super::clock_floor::sealed_now();
    // Checked under the lock, held to the end of the apply: no run continues the set in between.
    if let Some(shown) = revision {
        super::revision::check(&set, &lock, shown)?;
    }
    let paths = match paths {
        None => None,
        Some(ps) => Some(ps.iter().enumerate().map(|(i, p)| pending_at(&set, p, &format!("paths[{i}]"))).collect::<Result<Vec<_>>>()?),
    };
    let outcome = apply_sealed(&set, &lock, &Request { paths: paths.as_deref(), force }, sealed)?;
    let mut v = serde_json::to_value(outcome).unwrap_or(Value::Null);
    let left = set.dir.join("meta.json").exists().then(|| super::revision::of(&set, &lock));
    if let Value::Object(m) = &mut v {
        m.insert("revision".into(), json!(left));
    }
    Ok(v)
}

/// A path `applyChangeSet` was given (shown, as a change's `path`), by its real names: refused when
/// it could name more than one entry, or when nothing of the set is at or below it.
fn pending_at(set: &store::ChangeSet, path: &std::path::Path, option: &str) -> Result<PathBuf> {
    let r = super::content::resolve(set, path, option)?;
    let real = set.meta.roots[r.root].join(&r.rel);
    if r.rel.as_os_str().is_empty() || r.in_upper || super::content::is_listed(set, &r).map_err(|e| SandboxError::setup_failed(format!("reading change set {} failed: {e}", set.meta.id), ""))? {
        return Ok(real);
    }
    Err(SandboxError::invalid(option, format!("{} is not in the change set {}: nothing of it is pending there (applied already, or never changed)", path.display(), set.meta.id)))
}

/// `discardChangeSet(id)`.
pub fn discard_change_set(id: &str) -> Result<()> {
    let set = store::open(id)?;
    let lock = store::lock(&set)?;
    store::remove(&set, &lock)
}

/// `readChange(id, path)`: the new content, `None` when deleted.
pub fn read_change(id: &str, path: &Value) -> Result<Option<Vec<u8>>> {
    let path = absolute("path", path)?;
    let (set, _lock) = store::open_locked(id)?;
    set.touch();
    super::content::read(&set, &path)
}

/// A unified diff of one path (the CLI's `diff`).
pub fn diff_change(id: &str, path: &Value) -> Result<String> {
    let path = absolute("path", path)?;
    let (set, _lock) = store::open_locked(id)?;
    super::content::diff(&set, &path)
}

/// `sandspawn review show ID`: the set described, as in a result.
pub fn show_change_set(id: &str, max_changes: usize) -> Result<Value> {
    let (set, lock) = store::open_locked(id)?;
    let mut v = serde_json::to_value(super::summary::summarize(&set, &lock, max_changes)?).unwrap_or(Value::Null);
    if let Value::Object(m) = &mut v {
        m.insert("cwd".into(), json!(set.meta.cwd));
        m.insert("created".into(), json!(set.meta.created));
    }
    Ok(v)
}

/// `listChangeSets({ cwd? })`: the pending sets, oldest first; with `cwd`, those whose roots hold it.
pub fn list_change_sets(options: &Value) -> Result<Value> {
    let m = object(options, &["cwd"])?;
    let cwd = match m.and_then(|m| m.get("cwd")).filter(|v| !v.is_null()) {
        None => None,
        Some(v) => Some(std::fs::canonicalize(absolute("cwd", v)?).map_err(|e| SandboxError::invalid("cwd", format!("does not exist: {e}")))?),
    };
    let Some(root) = store::root() else { return Ok(json!([])) };
    store::check_root(&root)?;
    store::evict_unused(&root, store::UNUSED_FOR);
    let mut out = Vec::new();
    for id in store::ids(&root) {
        // A set that cannot be opened or described is listed with why, never failing the list.
        let set = match store::open(&id) {
            Ok(set) => set,
            Err(e) => {
                out.push((0, json!({ "id": id, "cwd": null, "created": null, "counts": null, "error": e.message })));
                continue;
            }
        };
        if cwd.as_ref().is_some_and(|c| set.locate(c).is_none()) {
            continue;
        }
        let mut entry = json!({ "id": set.meta.id, "cwd": set.meta.cwd, "created": set.meta.created, "counts": null });
        // A set a run holds right now is listed without counts (its upper is mounted).
        if let Ok(l) = store::lock(&set) {
            match super::summary::summarize(&set, &l, 0) {
                Ok(s) => {
                    entry["counts"] = serde_json::to_value(&s.counts).unwrap_or(Value::Null);
                    if let Some(r) = s.host_risks.iter().find(|r| r.kind == crate::planted::RiskKind::ScanIncomplete) {
                        entry["error"] = json!(format!("counts incomplete: {}", r.detail));
                    }
                }
                Err(e) => entry["error"] = json!(e.message),
            }
        }
        out.push((set.meta.created, entry));
    }
    out.sort_by_key(|(created, _)| *created);
    Ok(Value::Array(out.into_iter().map(|(_, v)| v).collect()))
}
