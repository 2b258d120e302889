//! How a JSON value is named in an error message ("got number 3", "got an array"): one wording for
//! every option parser, each of which lives with its capability.

use serde_json::Value;

/// A short description of a value for error messages.
pub fn describe(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => format!("boolean {b}"),
        Value::Number(n) => format!("number {n}"),
        Value::String(s) if s.len() > 40 => format!("string {:?}…", &s[..s.char_indices().nth(40).map(|(i, _)| i).unwrap_or(s.len())]),
        Value::String(s) => format!("string {s:?}"),
        Value::Array(_) => "an array".into(),
        Value::Object(_) => "an object".into(),
    }
}
