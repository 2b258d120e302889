//! The review mode's fields of `SandboxPolicy`: `workspace: 'direct' | 'review'`, `changeSet: ID`
//! (continue that set) and `maxChanges` (how many changes a result lists).

use serde::Serialize;
use serde_json::Value;

use crate::error::{Result, SandboxError};

/// How many changes a result lists by default (the counts cover all of them).
pub const DEFAULT_MAX_CHANGES: usize = 10_000;

/// The review mode as asked for (`None` in a policy: `workspace: 'direct'`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewOption {
    /// The change set to continue; `None`: a new one.
    pub change_set: Option<String>,
    pub max_changes: usize,
}

/// Parse the three fields of a policy object (`field` gets one by name, null already dropped).
/// `changeSet` or `maxChanges` without `workspace: 'review'` is an error, not ignored.
pub fn parse<'a>(field: impl Fn(&str) -> Option<&'a Value>) -> Result<Option<ReviewOption>> {
    let review = match field("workspace") {
        None => false,
        Some(Value::String(s)) if s == "direct" => false,
        Some(Value::String(s)) if s == "review" => true,
        Some(v) => return Err(SandboxError::invalid("sandbox.workspace", format!("must be 'direct' or 'review', got {v}"))),
    };
    let change_set = match field("changeSet") {
        None => None,
        Some(Value::String(s)) => Some(super::id::check(s)?.to_string()),
        Some(v) => return Err(SandboxError::invalid("sandbox.changeSet", format!("must be a change set id (a string), got {v}"))),
    };
    let max_changes = match field("maxChanges") {
        None => DEFAULT_MAX_CHANGES,
        Some(Value::Number(n)) if n.as_u64().is_some() => n.as_u64().unwrap_or(0) as usize,
        Some(v) => return Err(SandboxError::invalid("sandbox.maxChanges", format!("must be a non-negative integer, got {v}"))),
    };
    if !review {
        let stray = [("changeSet", change_set.is_some()), ("maxChanges", field("maxChanges").is_some())];
        if let Some((name, _)) = stray.iter().find(|(_, given)| *given) {
            return Err(SandboxError::invalid(&format!("sandbox.{name}"), "needs workspace: 'review'"));
        }
        return Ok(None);
    }
    Ok(Some(ReviewOption { change_set, max_changes }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse_obj(v: Value) -> Result<Option<ReviewOption>> {
        let m = v.as_object().unwrap().clone();
        parse(move |k| m.get(k).filter(|v| !v.is_null()).map(|v| Box::leak(Box::new(v.clone())) as &Value))
    }

    #[test]
    fn fields() {
        assert_eq!(parse_obj(json!({})).unwrap(), None);
        assert_eq!(parse_obj(json!({"workspace": "direct"})).unwrap(), None);
        let r = parse_obj(json!({"workspace": "review"})).unwrap().unwrap();
        assert_eq!((r.change_set, r.max_changes), (None, DEFAULT_MAX_CHANGES));
        let r = parse_obj(json!({"workspace": "review", "changeSet": "cs-0123456789abcdef", "maxChanges": 3})).unwrap().unwrap();
        assert_eq!((r.change_set.as_deref(), r.max_changes), (Some("cs-0123456789abcdef"), 3));
        for bad in [
            json!({"workspace": "cow"}),
            json!({"workspace": true}),
            json!({"workspace": "review", "maxChanges": -1}),
            json!({"workspace": "review", "maxChanges": 1.5}),
            json!({"workspace": "review", "changeSet": "../../etc"}),
            json!({"workspace": "review", "changeSet": 7}),
            json!({"changeSet": "cs-0123456789abcdef"}),
            json!({"workspace": "direct", "maxChanges": 3}),
        ] {
            assert_eq!(parse_obj(bad.clone()).unwrap_err().code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS", "{bad}");
        }
    }
}

/// The review mode of a resolved policy: what was asked, and what it covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReviewPolicy {
    #[serde(flatten)]
    pub option: ReviewOption,
    /// The reviewed roots: the cwd and `writableRoots`, canonical, none inside another.
    pub roots: Vec<std::path::PathBuf>,
    /// Missing `readOnlyPaths` and `denyRead` entries under them (what a run creates there is held back).
    pub held: Vec<std::path::PathBuf>,
    /// The host's symlinks in them that `denyRead` paths are resolved through (`store::Meta::deny_links`).
    pub deny_links: Vec<std::path::PathBuf>,
    /// Filled in by the runner once the run's change set is open (`review::run`).
    #[serde(skip)]
    pub mounts: Option<Mounts>,
}

/// What a bwrap plan mounts for a change set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mounts {
    /// The set's directory: bound writable for the helper, detached once the overlays are up.
    pub set_dir: std::path::PathBuf,
    /// Per reviewed root: the root, the set's upper and work directories for it.
    pub overlays: Vec<sandspawn_helper::protocol::ReviewOverlay>,
    /// The helper's `--exec-after` for a run that began its set (see `store::Meta::begin_ns`).
    pub exec_after_ns: Option<i64>,
}
