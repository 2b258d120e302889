//! `pty?: boolean | { cols?, rows?, term? }`: parsed and validated here, so every mistake is an
//! `ERR_SANDBOX_INVALID_OPTIONS` that names the field.

use serde::Serialize;
use serde_json::Value;

use crate::error::{Result, SandboxError};
use crate::describe::describe;
use crate::platform::Platform;

/// node-pty's defaults, which is what users of a terminal API expect.
pub const DEFAULT_COLS: u16 = 80;
pub const DEFAULT_ROWS: u16 = 24;
pub const DEFAULT_TERM: &str = "xterm-256color";

/// A terminal size in character cells (`SpawnResult.pty`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PtySize {
    pub cols: u16,
    pub rows: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtyOptions {
    pub size: PtySize,
    /// `TERM` for the command, if `pty.term` gave one (else `env.TERM`, else the default).
    pub term: Option<String>,
}

/// One dimension: an integer cell count the kernel's `struct winsize` can hold, at least 1.
pub fn parse_dimension(option: &str, value: &Value) -> Result<u16> {
    match value.as_f64() {
        Some(f) if f.fract() == 0.0 && (1.0..=65535.0).contains(&f) => Ok(f as u16),
        _ => Err(SandboxError::invalid(option, format!("must be an integer from 1 to 65535, got {}", describe(value)))),
    }
}

/// `None` when there is no terminal (`pty` absent, null or false).
pub fn parse_pty(value: Option<&Value>, platform: Platform) -> Result<Option<PtyOptions>> {
    let mut opts = PtyOptions { size: PtySize { cols: DEFAULT_COLS, rows: DEFAULT_ROWS }, term: None };
    match value {
        None | Some(Value::Bool(false)) => return Ok(None),
        Some(Value::Bool(true)) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                match (k.as_str(), v) {
                    (_, Value::Null) => {}
                    ("cols", v) => opts.size.cols = parse_dimension("pty.cols", v)?,
                    ("rows", v) => opts.size.rows = parse_dimension("pty.rows", v)?,
                    ("term", Value::String(s)) if !s.is_empty() && !s.contains('\0') => opts.term = Some(s.clone()),
                    ("term", v) => return Err(SandboxError::invalid("pty.term", format!("must be a non-empty string without NUL bytes such as 'xterm-256color', got {}", describe(v)))),
                    (other, _) => return Err(SandboxError::invalid(&format!("pty.{other}"), "unknown option (known: cols, rows, term)")),
                }
            }
        }
        Some(v) => return Err(SandboxError::invalid("pty", format!("must be a boolean or an object like {{ cols: 80, rows: 24 }}, got {}", describe(v)))),
    }
    if platform == Platform::Other {
        return Err(SandboxError::unsupported(format!("pty is not supported on {} (only Linux and macOS have one here)", platform.as_str())));
    }
    Ok(Some(opts))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<Option<PtyOptions>> {
        parse_pty(Some(&v), Platform::Linux)
    }

    #[test]
    fn defaults_and_sizes() {
        assert_eq!(parse_pty(None, Platform::Linux).unwrap(), None);
        assert_eq!(parse(json!(false)).unwrap(), None);
        let d = parse(json!(true)).unwrap().unwrap();
        assert_eq!(d, PtyOptions { size: PtySize { cols: 80, rows: 24 }, term: None });
        let o = parse(json!({"cols": 132, "rows": 50, "term": "vt100"})).unwrap().unwrap();
        assert_eq!(o, PtyOptions { size: PtySize { cols: 132, rows: 50 }, term: Some("vt100".into()) });
        assert_eq!(parse(json!({"cols": null})).unwrap().unwrap().size.cols, 80);
    }

    #[test]
    fn mistakes_name_the_field() {
        for (v, needle) in [
            (json!("yes"), "options.pty:"),
            (json!(1), "options.pty:"),
            (json!({"cols": 0}), "options.pty.cols"),
            (json!({"cols": 80.5}), "options.pty.cols"),
            (json!({"rows": 70000}), "options.pty.rows"),
            (json!({"rows": "24"}), "options.pty.rows"),
            (json!({"term": ""}), "options.pty.term"),
            (json!({"term": "a\u{0}b"}), "options.pty.term"),
            (json!({"columns": 80}), "options.pty.columns"),
        ] {
            let e = parse(v.clone()).unwrap_err();
            assert_eq!(e.code, crate::ErrorCode::InvalidOptions, "{v}");
            assert!(e.message.starts_with(needle), "{v}: {}", e.message);
        }
    }

    #[test]
    fn windows_is_unsupported() {
        let e = parse_pty(Some(&json!(true)), Platform::Other).unwrap_err();
        assert_eq!(e.code, crate::ErrorCode::Unsupported);
        assert_eq!(parse_pty(Some(&json!(false)), Platform::Other).unwrap(), None);
    }
}
