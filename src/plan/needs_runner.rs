//! The refusals of what a plan the runner does not run cannot keep.

/// A plan for another spawner (`buildSandboxCommand`) cannot include the allow-list's proxy, which
/// lives in the host process that runs the plan: refused rather than run with no network or all
/// of it.
pub(crate) fn proxy_needs_runner() -> crate::error::SandboxError {
    crate::error::SandboxError::unsupported(
        "sandbox.network as a NetworkPolicy (allow-list) needs the proxy that spawnSandboxed/startSandboxed run in \
         their own process; a launch plan for another spawner cannot include it. Run the command with \
         spawnSandboxed or startSandboxed, or build the plan with network: true or false",
    )
}

/// Nor can it keep a `timeout`: the runner's timer ends the tree, and a plan has no timer (its
/// helper execs the command as its last step). Taken, it was dropped, and the command outlived it
/// for good (found by an attacker's review, mode32). The spawner's own timeout ends the whole
/// tree: killing the plan's program kills bwrap's pid 1 and its namespace with it.
pub(crate) fn timeout_needs_runner() -> crate::error::SandboxError {
    crate::error::SandboxError::unsupported(
        "options.timeout: a launch plan cannot end the command after a time (spawnSandboxed and startSandboxed \
         keep the timer in their own process); leave it out and give the timeout to the spawner that runs the plan \
         (child_process's timeout, or kill the plan's program: the whole sandbox ends with it), or run the command \
         with spawnSandboxed",
    )
}
