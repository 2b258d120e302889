//! The refusal of an allow-list in a plan the runner does not run.

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
