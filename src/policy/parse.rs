//! Step one of resolving a policy: the user's JSON `sandbox` option, type-checked field by field.
//! Nothing here touches the filesystem; every error names the offending field.

use serde_json::{Map, Value};

use super::{SandboxMode, TmpMode};
use crate::error::{Result, SandboxError};

/// `allowUnixSockets` as written: a boolean or a list of socket paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RawUnixSockets {
    Bool(bool),
    List(Vec<String>),
}

/// The policy object exactly as given; `None` means "not given" so defaults can depend on the mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RawPolicy {
    pub mode: SandboxMode,
    pub writable_roots: Option<Vec<String>>,
    pub read_only_paths: Option<Vec<String>>,
    pub protect_git: Option<bool>,
    pub deny_read: Option<Vec<String>>,
    pub network: Option<bool>,
    /// `network` given as a `NetworkPolicy` object (then `network` is `Some(false)`: the command
    /// keeps its empty namespace and reaches out only through the proxy).
    pub network_proxy: Option<crate::network::NetworkPolicy>,
    pub allow_unix_sockets: Option<RawUnixSockets>,
    pub tmp: Option<TmpMode>,
    /// Checked and resolved by `tool_caches`, which owns the option.
    pub tool_caches: Option<Value>,
    /// Validated by `planted::names`; `None` when not given (the defaults apply).
    pub protected_names: Option<Vec<String>>,
    /// The report-only tier, validated by `planted::names`; `None`: the defaults.
    pub reported_names: Option<Vec<String>>,
    /// `workspace: 'review'` (with `changeSet`, `maxChanges`), validated by `review::option`.
    pub review: Option<crate::review::option::ReviewOption>,
}

impl RawPolicy {
    fn of_mode(mode: SandboxMode) -> RawPolicy {
        RawPolicy {
            mode,
            writable_roots: None,
            read_only_paths: None,
            protect_git: None,
            deny_read: None,
            network: None,
            network_proxy: None,
            allow_unix_sockets: None,
            tmp: None,
            tool_caches: None,
            protected_names: None,
            reported_names: None,
            review: None,
        }
    }
}

const FIELDS: &[&str] = &[
    "mode",
    "writableRoots",
    "readOnlyPaths",
    "protectGit",
    "denyRead",
    "network",
    "allowUnixSockets",
    "tmp",
    "toolCaches",
    "protectedNames",
    "reportedNames",
    "workspace",
    "changeSet",
    "maxChanges",
];

pub(crate) fn parse(value: Option<&Value>) -> Result<RawPolicy> {
    match value {
        None | Some(Value::Null) => Ok(RawPolicy::of_mode(SandboxMode::ReadOnly)),
        Some(Value::String(s)) => Ok(RawPolicy::of_mode(parse_mode("sandbox", s)?)),
        Some(Value::Object(map)) => parse_object(map),
        Some(other) => Err(SandboxError::invalid(
            "sandbox",
            format!("must be a mode string or a policy object, got {}", type_name(other)),
        )),
    }
}

fn parse_object(map: &Map<String, Value>) -> Result<RawPolicy> {
    // Unknown names are errors, not ignored: a typo like `writeableRoots` must not silently run
    // the command with less access (or worse, with protections the user thinks are on missing).
    if let Some(unknown) = map.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(SandboxError::invalid(
            &format!("sandbox.{unknown}"),
            format!("unknown field (known fields: {})", FIELDS.join(", ")),
        ));
    }
    // `undefined` never reaches us; an explicit `null` means "not given", as in JS option bags.
    let field = |name: &str| map.get(name).filter(|v| !v.is_null());
    let mode = match field("mode") {
        None => SandboxMode::ReadOnly,
        Some(Value::String(s)) => parse_mode("sandbox.mode", s)?,
        Some(v) => return Err(wrong_type("mode", "a string", v)),
    };
    let tmp = match field("tmp") {
        None => None,
        Some(Value::String(s)) => Some(match s.as_str() {
            "writable" => TmpMode::Writable,
            "private" => TmpMode::Private,
            "read-only" => TmpMode::ReadOnly,
            _ => {
                return Err(SandboxError::invalid(
                    "sandbox.tmp",
                    format!("must be 'writable', 'private' or 'read-only', got {s:?}"),
                ))
            }
        }),
        Some(v) => return Err(wrong_type("tmp", "a string", v)),
    };
    let allow_unix_sockets = match field("allowUnixSockets") {
        None => None,
        Some(Value::Bool(b)) => Some(RawUnixSockets::Bool(*b)),
        Some(v @ Value::Array(_)) => Some(RawUnixSockets::List(string_list("allowUnixSockets", v)?)),
        Some(v) => return Err(wrong_type("allowUnixSockets", "a boolean or an array of strings", v)),
    };
    // `network` is a boolean or a NetworkPolicy object, which `network::policy` validates.
    let (network, network_proxy) = match field("network") {
        Some(v @ Value::Object(_)) => (Some(false), Some(crate::network::NetworkPolicy::parse("sandbox.network", v)?)),
        Some(v) => (Some(boolean("network", v).map_err(|_| wrong_type("network", "a boolean or a NetworkPolicy object", v))?), None),
        None => (None, None),
    };
    Ok(RawPolicy {
        mode,
        writable_roots: field("writableRoots").map(|v| string_list("writableRoots", v)).transpose()?,
        read_only_paths: field("readOnlyPaths").map(|v| string_list("readOnlyPaths", v)).transpose()?,
        protect_git: field("protectGit").map(|v| boolean("protectGit", v)).transpose()?,
        deny_read: field("denyRead").map(|v| string_list("denyRead", v)).transpose()?,
        network,
        network_proxy,
        allow_unix_sockets,
        tmp,
        tool_caches: field("toolCaches").cloned(),
        protected_names: field("protectedNames").map(|v| crate::planted::names::parse(Some(v))).transpose()?,
        reported_names: field("reportedNames").map(|v| crate::planted::names::parse_reported(Some(v))).transpose()?,
        review: crate::review::option::parse(field)?,
    })
}

fn parse_mode(option: &str, s: &str) -> Result<SandboxMode> {
    match s {
        "read-only" => Ok(SandboxMode::ReadOnly),
        "workspace-write" => Ok(SandboxMode::WorkspaceWrite),
        "danger-full-access" => Ok(SandboxMode::DangerFullAccess),
        _ => Err(SandboxError::invalid(
            option,
            format!("unknown sandbox mode {s:?} (expected 'read-only', 'workspace-write' or 'danger-full-access')"),
        )),
    }
}

fn boolean(name: &str, v: &Value) -> Result<bool> {
    v.as_bool().ok_or_else(|| wrong_type(name, "a boolean", v))
}

fn string_list(name: &str, v: &Value) -> Result<Vec<String>> {
    let items = v.as_array().ok_or_else(|| wrong_type(name, "an array of strings", v))?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str().map(str::to_owned).ok_or_else(|| {
                SandboxError::invalid(
                    &format!("sandbox.{name}[{i}]"),
                    format!("must be a string, got {}", type_name(item)),
                )
            })
        })
        .collect()
}

fn wrong_type(name: &str, expected: &str, got: &Value) -> SandboxError {
    SandboxError::invalid(&format!("sandbox.{name}"), format!("must be {expected}, got {}", type_name(got)))
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(v: Value) -> String {
        let e = parse(Some(&v)).unwrap_err();
        assert_eq!(e.code.as_str(), "ERR_SANDBOX_INVALID_OPTIONS");
        e.message
    }

    #[test]
    fn absent_and_null_are_read_only() {
        assert_eq!(parse(None).unwrap().mode, SandboxMode::ReadOnly);
        assert_eq!(parse(Some(&Value::Null)).unwrap().mode, SandboxMode::ReadOnly);
        assert_eq!(parse(Some(&json!({}))).unwrap(), RawPolicy::of_mode(SandboxMode::ReadOnly));
    }

    #[test]
    fn mode_shorthand() {
        assert_eq!(parse(Some(&json!("workspace-write"))).unwrap().mode, SandboxMode::WorkspaceWrite);
        assert_eq!(parse(Some(&json!("danger-full-access"))).unwrap().mode, SandboxMode::DangerFullAccess);
        assert!(err(json!("full")).starts_with("options.sandbox: unknown sandbox mode"));
        assert!(err(json!({"mode": "rw"})).starts_with("options.sandbox.mode:"));
    }

    #[test]
    fn full_object() {
        let p = parse(Some(&json!({
            "mode": "workspace-write", "writableRoots": ["/a"], "readOnlyPaths": ["/b"],
            "protectGit": false, "denyRead": ["/c"], "network": true,
            "allowUnixSockets": ["/s"], "tmp": "private"
        })))
        .unwrap();
        assert_eq!(p.writable_roots, Some(vec!["/a".to_string()]));
        assert_eq!(p.read_only_paths, Some(vec!["/b".to_string()]));
        assert_eq!(p.protect_git, Some(false));
        assert_eq!(p.deny_read, Some(vec!["/c".to_string()]));
        assert_eq!(p.network, Some(true));
        assert_eq!(p.allow_unix_sockets, Some(RawUnixSockets::List(vec!["/s".into()])));
        assert_eq!(p.tmp, Some(TmpMode::Private));
        let p = parse(Some(&json!({"allowUnixSockets": true, "tmp": "read-only", "network": null}))).unwrap();
        assert_eq!(p.allow_unix_sockets, Some(RawUnixSockets::Bool(true)));
        assert_eq!(p.tmp, Some(TmpMode::ReadOnly));
        assert_eq!(p.network, None);
    }

    #[test]
    fn errors_name_the_field() {
        assert!(err(json!({"writeableRoots": []})).starts_with("options.sandbox.writeableRoots: unknown field"));
        assert!(err(json!({"writableRoots": "/a"})).starts_with("options.sandbox.writableRoots: must be an array"));
        assert!(err(json!({"writableRoots": ["/a", 3]})).starts_with("options.sandbox.writableRoots[1]: must be a string"));
        assert!(err(json!({"network": "yes"})).starts_with("options.sandbox.network: must be a boolean or a NetworkPolicy object"));
        assert!(err(json!({"protectGit": 1})).starts_with("options.sandbox.protectGit:"));
        assert!(err(json!({"denyRead": {}})).starts_with("options.sandbox.denyRead:"));
        assert!(err(json!({"readOnlyPaths": [null]})).starts_with("options.sandbox.readOnlyPaths[0]:"));
        assert!(err(json!({"allowUnixSockets": "x"})).starts_with("options.sandbox.allowUnixSockets:"));
        assert!(err(json!({"tmp": "shared"})).starts_with("options.sandbox.tmp:"));
        assert!(err(json!({"tmp": 1})).starts_with("options.sandbox.tmp:"));
        assert!(err(json!({"mode": 1})).starts_with("options.sandbox.mode:"));
        assert!(err(json!(42)).starts_with("options.sandbox: must be a mode string"));
        assert!(err(json!([])).starts_with("options.sandbox:"));
    }
}
