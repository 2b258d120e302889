//! The limits by name (`Limit`), their validated values (`Limits`) and what enforces one
//! (`Mechanism`): the words every step of `limits` shares.

use serde::Serialize;

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
