//! Resource limits (`limits` option): what was asked (`parse`), how this host enforces each limit or
//! why it cannot (`decide`), and what the run used (`usage`, `sample`) and which limit ended it.
//!
//! Mechanisms, strongest first: a cgroup v2 covering the whole tree, then an rlimit per process set
//! by `sandspawn-helper` inside the sandbox just before it execs the command. This version sets
//! rlimits only; a limit whose rlimit does not mean what the option promises on this host (the
//! process count for root, memory and processes on macOS) is `ERR_SANDBOX_UNSUPPORTED`, never a
//! weaker stand-in.

mod decide;
mod parse;
mod sample;
mod usage;

use serde::Serialize;

pub use decide::{decide, host_report, HostFacts, LimitPlan};
pub use parse::parse;
pub use sample::sample_sandbox;
pub use usage::{exceeded, host_peak_rss_bytes, own_usage, ResourceUsage};

/// One limit, named as in the option and in `SpawnResult.limitExceeded`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Limit {
    Memory,
    Processes,
    CpuTime,
    FileSize,
    OpenFiles,
}

impl Limit {
    pub const ALL: [Limit; 5] = [Limit::Memory, Limit::Processes, Limit::CpuTime, Limit::FileSize, Limit::OpenFiles];

    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Memory => "memory",
            Limit::Processes => "processes",
            Limit::CpuTime => "cpuTime",
            Limit::FileSize => "fileSize",
            Limit::OpenFiles => "openFiles",
        }
    }
}

/// What enforces a limit (`SpawnResult.appliedLimits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mechanism {
    /// A cgroup v2 around the whole tree.
    Cgroup,
    /// An rlimit on each process, inherited from the helper.
    Rlimit,
}

/// The validated `limits` option: bytes, tasks, milliseconds of CPU, bytes, descriptors.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    pub memory: Option<u64>,
    pub processes: Option<u64>,
    pub cpu_time_ms: Option<u64>,
    pub file_size: Option<u64>,
    pub open_files: Option<u64>,
}

impl Limits {
    pub fn get(&self, limit: Limit) -> Option<u64> {
        match limit {
            Limit::Memory => self.memory,
            Limit::Processes => self.processes,
            Limit::CpuTime => self.cpu_time_ms,
            Limit::FileSize => self.file_size,
            Limit::OpenFiles => self.open_files,
        }
    }

    pub fn is_empty(&self) -> bool {
        Limit::ALL.iter().all(|l| self.get(*l).is_none())
    }
}

#[cfg(test)]
mod tests;
