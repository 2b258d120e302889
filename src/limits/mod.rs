//! Resource limits (`limits` option): what was asked (`parse`), how this host enforces each limit or
//! why it cannot (`decide`), and what the run used (`usage`, `sample`) and which limit ended it.
//!
//! Mechanisms, strongest first: a cgroup v2 covering the whole tree, then an rlimit per process set
//! by `sandspawn-helper` inside the sandbox just before it execs the command. This version sets
//! rlimits only; a limit whose rlimit does not mean what the option promises on this host (the
//! process count for root, memory and processes on macOS) is `ERR_SANDBOX_UNSUPPORTED`, never a
//! weaker stand-in.

pub mod core_dump;
mod decide;
mod kinds;
mod parse;
mod sample;
mod usage;

pub use decide::{decide, host_report, HostFacts, LimitPlan};
pub use kinds::{Limit, Limits, Mechanism};
pub use parse::parse;
pub use sample::sample_sandbox;
pub use usage::{exceeded, host_peak_rss_bytes, own_usage, ResourceUsage};

#[cfg(test)]
mod tests;
