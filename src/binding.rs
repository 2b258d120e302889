//! The only module that knows about JavaScript: converts napi values to core types and back.

use napi_derive::napi;

/// The sandspawn core version (for diagnostics).
#[napi]
pub fn native_version() -> String {
    env!("CARGO_PKG_VERSION").to_string()
}
