//! The helper's command line: what the plan builder writes after bwrap's `--`, and what the helper
//! parses. The first word names the protocol, so a plan from one sandspawn version and a helper
//! from another refuse each other with a clear message instead of misreading flags.
//!
//! ```text
//! sandspawn-helper v1 [--null-fds=N,...] [--controlling-tty] [--block-unix-sockets] [--report-fd=N] [--net-listen=N] -- COMMAND [ARG...]
//! sandspawn-helper --version
//! ```

use std::ffi::OsString;

/// The first argument of every invocation.
pub const PROTOCOL_TAG: &str = "v1";

/// The helper's version: the workspace's, so the addon and its helper are released together.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Embedded in the helper binary (`main.rs` keeps it with `#[used]`) and searched for by the addon:
/// it checks that the file it is about to run inside every sandbox is the helper it was built
/// with, without executing that file on the host.
pub const MARKER: &str = concat!("\0sandspawn-helper:protocol=v1:version=", env!("CARGO_PKG_VERSION"), "\0");

/// What the helper does before it execs the command, in this order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Steps {
    /// Open `/dev/null` at each of these descriptors first. This is the helper's host-side use:
    /// run as the plan's program in front of bwrap, it gives bwrap the empty `--ro-bind-data`
    /// sources that mask denied files, so the spawner need not provide any descriptor.
    pub null_fds: Vec<i32>,
    /// Make the command a session leader whose controlling terminal is the terminal on descriptor
    /// 0 (pty runs). bwrap's `--new-session` leaves the command without one, so job control,
    /// Ctrl-C and `/dev/tty` need this step inside the sandbox; on macOS posix_spawn cannot do it
    /// either (its file actions run before its setsid), so the helper runs in front of sandbox-exec.
    pub controlling_tty: bool,
    /// Install the seccomp filter that refuses `socket(AF_UNIX)` and io_uring (with no_new_privs).
    pub block_unix_sockets: bool,
    /// A descriptor on which a failure before the command runs is reported (see `report`). The
    /// helper marks it close-on-exec, so the command never sees it. Only the runner passes one:
    /// plans for other spawners are self-contained and report on stderr and by exit code.
    pub report_fd: Option<i32>,
    /// The network allow-list bridge: bind a TCP listener on the sandbox's own loopback, send it to
    /// the host's proxy over this inherited `AF_UNIX` descriptor (SCM_RIGHTS), close it, and set the
    /// proxy variables (see `proxy_env`) for the command. Runner only: the proxy lives in the host.
    pub net_listen_fd: Option<i32>,
}

impl Steps {
    /// The helper's arguments up to and including the `--` that precedes the command.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![PROTOCOL_TAG.to_string()];
        if !self.null_fds.is_empty() {
            let list: Vec<String> = self.null_fds.iter().map(i32::to_string).collect();
            args.push(format!("--null-fds={}", list.join(",")));
        }
        if self.controlling_tty {
            args.push("--controlling-tty".into());
        }
        if self.block_unix_sockets {
            args.push("--block-unix-sockets".into());
        }
        if let Some(fd) = self.report_fd {
            args.push(format!("--report-fd={fd}"));
        }
        if let Some(fd) = self.net_listen_fd {
            args.push(format!("--net-listen={fd}"));
        }
        args.push("--".into());
        args
    }

    /// Parse the helper's arguments (without `argv[0]`): the steps and the command after `--`.
    pub fn parse(args: &[OsString]) -> Result<(Steps, &[OsString]), String> {
        let Some(tag) = args.first() else {
            return Err(format!("no arguments; expected `{PROTOCOL_TAG} [flags] -- COMMAND`"));
        };
        if tag != PROTOCOL_TAG {
            return Err(format!(
                "this helper speaks protocol {PROTOCOL_TAG} (sandspawn {VERSION}) but was called with {:?}: the plan \
                 was built by another sandspawn version; reinstall sandspawn so the addon and its helper match",
                tag.to_string_lossy()
            ));
        }
        let mut steps = Steps::default();
        for (i, arg) in args.iter().enumerate().skip(1) {
            let text = arg.to_string_lossy();
            match text.as_ref() {
                "--" => {
                    let command = &args[i + 1..];
                    if command.is_empty() {
                        return Err("no command after `--`".into());
                    }
                    return Ok((steps, command));
                }
                "--block-unix-sockets" => steps.block_unix_sockets = true,
                "--controlling-tty" => steps.controlling_tty = true,
                _ => {
                    let bad = || format!("unknown or malformed argument {text:?}");
                    if let Some(fd) = text.strip_prefix("--report-fd=") {
                        steps.report_fd = Some(descriptor(fd).ok_or_else(bad)?);
                    } else if let Some(fd) = text.strip_prefix("--net-listen=") {
                        steps.net_listen_fd = Some(descriptor(fd).ok_or_else(bad)?);
                    } else if let Some(list) = text.strip_prefix("--null-fds=") {
                        steps.null_fds = list.split(',').map(descriptor).collect::<Option<_>>().ok_or_else(bad)?;
                    } else {
                        return Err(bad());
                    }
                }
            }
        }
        Err("missing `--` before the command".into())
    }
}

/// A descriptor number above stdio.
fn descriptor(text: &str) -> Option<i32> {
    text.parse::<i32>().ok().filter(|fd| *fd > 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn round_trip() {
        for steps in [
            Steps::default(),
            Steps { block_unix_sockets: true, ..Steps::default() },
            Steps { block_unix_sockets: true, report_fd: Some(4), ..Steps::default() },
            Steps { null_fds: vec![5, 6], ..Steps::default() },
            Steps { block_unix_sockets: true, report_fd: Some(4), net_listen_fd: Some(5), ..Steps::default() },
            Steps { controlling_tty: true, ..Steps::default() },
            Steps { controlling_tty: true, block_unix_sockets: true, report_fd: Some(4), ..Steps::default() },
        ] {
            let mut args = os(&steps.to_args().iter().map(String::as_str).collect::<Vec<_>>());
            args.extend(os(&["ls", "--", "-l"]));
            let (parsed, command) = Steps::parse(&args).unwrap();
            assert_eq!(parsed, steps);
            assert_eq!(command, os(&["ls", "--", "-l"]).as_slice(), "only the first `--` separates");
        }
    }

    #[test]
    fn pinned_format() {
        let steps = Steps { block_unix_sockets: true, report_fd: Some(4), ..Steps::default() };
        assert_eq!(steps.to_args(), ["v1", "--block-unix-sockets", "--report-fd=4", "--"]);
        let tty = Steps { controlling_tty: true, block_unix_sockets: true, report_fd: Some(4), ..Steps::default() };
        assert_eq!(tty.to_args(), ["v1", "--controlling-tty", "--block-unix-sockets", "--report-fd=4", "--"]);
        let outer = Steps { null_fds: vec![3, 4], ..Steps::default() };
        assert_eq!(outer.to_args(), ["v1", "--null-fds=3,4", "--"]);
        let net = Steps { report_fd: Some(4), net_listen_fd: Some(5), ..Steps::default() };
        assert_eq!(net.to_args(), ["v1", "--report-fd=4", "--net-listen=5", "--"]);
    }

    #[test]
    fn refuses_what_it_does_not_understand() {
        assert!(Steps::parse(&os(&[])).is_err());
        let other = Steps::parse(&os(&["v2", "--", "true"])).unwrap_err();
        assert!(other.contains("another sandspawn version"), "{other}");
        assert!(Steps::parse(&os(&["v1", "--unknown", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--report-fd=1", "--", "true"])).is_err(), "stdio is not a report fd");
        assert!(Steps::parse(&os(&["v1", "--report-fd=x", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--null-fds=3,x", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--null-fds=0", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--net-listen=2", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--net-listen=", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "true"])).is_err(), "missing --");
        assert!(Steps::parse(&os(&["v1", "--"])).is_err(), "missing command");
    }

    #[test]
    fn marker_names_this_protocol_and_version() {
        assert_eq!(MARKER, format!("\0sandspawn-helper:protocol={PROTOCOL_TAG}:version={VERSION}\0"));
    }
}
