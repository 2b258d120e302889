//! The network allow-list (`SandboxPolicy.network` as a `NetworkPolicy`): its option (`policy`),
//! the canonical form of hosts (`host`), the address guard (`guard`), the per-run proxy (`proxy`),
//! what it refused (`denials`), and where the proxy listens: on Linux the host half of the bridge
//! that brings the proxy's listener out of the sandbox (`bridge`; the in-sandbox half is the
//! helper's `--net-listen` step), on macOS the host's loopback with a per-run credential
//! (`loopback`, `credential`). `for_run` is what the runner calls; `command_env` keeps the user's
//! own proxy and its password out of the command's environment. `public_suffix` says when a
//! wildcard of the allow-list would span owners (`*.co.uk`). `pace` bounds how fast a run makes the
//! host work for it (lookups, refusals, questions).

pub mod ask;
pub mod bridge;
pub mod command_env;
pub mod credential;
pub mod denials;
pub mod for_run;
pub mod guard;
pub mod host;
pub mod loopback;
mod on_link;
pub mod pace;
pub mod policy;
pub mod proxy;
pub mod public_suffix;
pub mod upstream;

pub use denials::NetworkDenial;
pub use policy::NetworkPolicy;

#[cfg(test)]
mod tests_macos_wiring;
