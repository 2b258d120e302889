//! `limits: { memory?, processes?, cpuTime?, fileSize?, openFiles? }`: positive integers within
//! range; unknown names and other types are `ERR_SANDBOX_INVALID_OPTIONS` naming the field.

use serde_json::Value;

use super::{Limit, Limits};
use crate::error::{Result, SandboxError};
use crate::describe::describe;

/// JavaScript's largest exact integer: byte counts and milliseconds above it cannot be passed exactly.
const MAX_SAFE: u64 = (1 << 53) - 1;

/// The largest accepted value of each limit, and what it counts (for messages).
fn range(limit: Limit) -> (u64, &'static str) {
    match limit {
        Limit::Memory => (MAX_SAFE, "a positive integer number of bytes"),
        // Linux's PID_MAX_LIMIT: no more tasks can exist at once.
        Limit::Processes => (4_194_304, "a positive integer number of processes"),
        Limit::CpuTime => (MAX_SAFE, "a positive integer number of milliseconds of CPU time"),
        Limit::FileSize => (MAX_SAFE, "a positive integer number of bytes"),
        // Linux's default fs.nr_open: no process may have more descriptors.
        Limit::OpenFiles => (1_048_576, "a positive integer number of descriptors"),
    }
}

pub fn parse(value: Option<&Value>) -> Result<Limits> {
    let mut limits = Limits::default();
    let map = match value {
        None | Some(Value::Null) => return Ok(limits),
        Some(Value::Object(m)) => m,
        Some(v) => return Err(SandboxError::invalid("limits", format!("must be an object like {{ memory: 268435456 }}, got {}", describe(v)))),
    };
    for (key, v) in map {
        let Some(limit) = Limit::ALL.into_iter().find(|l| l.as_str() == key) else {
            return Err(SandboxError::invalid(
                &format!("limits.{key}"),
                "unknown limit (known: memory, processes, cpuTime, fileSize, openFiles)",
            ));
        };
        if v.is_null() {
            continue;
        }
        let (max, what) = range(limit);
        let n = whole_number(v).filter(|n| (1..=max).contains(n)).ok_or_else(|| {
            SandboxError::invalid(&format!("limits.{key}"), format!("must be {what} from 1 to {max}, got {}", describe(v)))
        })?;
        let slot = match limit {
            Limit::Memory => &mut limits.memory,
            Limit::Processes => &mut limits.processes,
            Limit::CpuTime => &mut limits.cpu_time_ms,
            Limit::FileSize => &mut limits.file_size,
            Limit::OpenFiles => &mut limits.open_files,
        };
        *slot = Some(n);
    }
    Ok(limits)
}

/// An integer, also when JavaScript sent it as a double (`2 ** 30`, `1e6`).
fn whole_number(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| v.as_f64().filter(|f| f.fract() == 0.0 && *f >= 0.0 && *f <= MAX_SAFE as f64).map(|f| f as u64))
}
