//! How the helper says why the command did not run. Two channels, because plans are used two ways:
//! - every spawner sees a line on stderr (`sandspawn-helper: ...`) and an exit code in the
//!   convention of env(1): 127 command not found, 126 found but not executable, 125 the helper's
//!   own setup failed;
//! - the runner, which must tell these apart from a command that exits 125..127 itself, also
//!   passes `--report-fd`: one line `<stage> <errno> <message>` there means the command never ran.
//!   The descriptor is close-on-exec, so a command that runs cannot write to it.

/// Where the helper stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Before exec: bad arguments, the seccomp filter could not be installed, ...
    Setup,
    /// `execvp` of the command failed (`errno` says why).
    Exec,
    /// Setup found the workspace changed since the host planned the sandbox: a read-only path is
    /// gone, or is not the entry the plan meant (another run in the same workspace renamed or
    /// removed it). Nothing ran; the runner plans again (`runner::supervise`).
    Changed,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub stage: Stage,
    /// The OS error, 0 when there is none.
    pub errno: i32,
    pub message: String,
}

/// An OS error in the OS's own words, without Rust's ` (os error N)` suffix (messages name the
/// errno once, in words). Shared by the helper's reports and the addon's.
/// The kernel's ENOTSUPP, which is not in the C libraries' tables (musl says "No error
/// information", glibc "Unknown error 524"), so it is named here.
const ENOTSUPP: i32 = 524;

pub fn os_words(e: &std::io::Error) -> String {
    if e.raw_os_error() == Some(ENOTSUPP) {
        return "ENOTSUPP (524)".to_string();
    }
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// Why the kernel refused to install a seccomp filter, in words. ENOTSUPP there comes from the
/// BPF JIT (with CONFIG_BPF_JIT_ALWAYS_ON a filter it cannot compile is refused): found by an
/// attacker's review, a run that used up the machine-wide JIT budget with socket filters made
/// every later run fail here with "No error information".
pub fn seccomp_refused(errno: i32) -> String {
    let words = os_words(&std::io::Error::from_raw_os_error(errno));
    match errno {
        ENOTSUPP => format!("{words}: the kernel refused to compile the filter: its machine-wide BPF JIT budget (net.core.bpf_jit_limit) may be exhausted"),
        // The kernel itself never answers EPERM here (no_new_privs is set first): a filter above
        // this process refuses filters, as sandspawn's own does for the commands it runs.
        libc::EPERM => format!("{words}: this process runs inside a sandbox that refuses seccomp filters (sandspawn's does), so sandspawn cannot run a sandbox from inside it"),
        _ => words,
    }
}

/// Why the kernel refused an SCM_RIGHTS send, in words: ETOOMANYREFS named with its cause (musl
/// has no words for it: found by an attacker's review, the network bridge's refused send said
/// only "No error information").
pub fn scm_rights_refused(errno: i32) -> String {
    let words = os_words(&std::io::Error::from_raw_os_error(errno));
    if errno != libc::ETOOMANYREFS {
        return words;
    }
    format!(
        "ETOOMANYREFS ({errno}): the user's programs hold more descriptors unreceived in Unix socket messages \
         (SCM_RIGHTS) than this process's RLIMIT_NOFILE allows: one outside sandspawn, or a run started with a higher limit"
    )
}

pub const EXIT_SETUP: i32 = 125;
pub const EXIT_NOT_EXECUTABLE: i32 = 126;
pub const EXIT_NOT_FOUND: i32 = 127;

/// A failure of the helper's own setup (the command never ran): what every setup step returns.
pub fn setup(errno: i32, message: String) -> Failure {
    Failure { stage: Stage::Setup, errno, message }
}

/// Setup found the workspace changed since the plan (`Stage::Changed`): the runner plans again.
pub fn changed(errno: i32, message: String) -> Failure {
    Failure { stage: Stage::Changed, errno, message }
}

impl Failure {
    pub fn exit_code(&self) -> i32 {
        match (self.stage, self.errno) {
            (Stage::Setup | Stage::Changed, _) => EXIT_SETUP,
            (Stage::Exec, libc::ENOENT) | (Stage::Exec, libc::ENOTDIR) => EXIT_NOT_FOUND,
            (Stage::Exec, _) => EXIT_NOT_EXECUTABLE,
        }
    }

    /// The record written on the report descriptor.
    pub fn encode(&self) -> Vec<u8> {
        let stage = match self.stage {
            Stage::Setup => "setup",
            Stage::Exec => "exec",
            Stage::Changed => "changed",
        };
        // One line: the message must not be able to fake a second record.
        let message = self.message.replace(['\n', '\r'], " ");
        format!("{stage} {} {message}\n", self.errno).into_bytes()
    }

    /// The first record in what was read from the report descriptor, if any.
    pub fn decode(bytes: &[u8]) -> Option<Failure> {
        let text = String::from_utf8_lossy(bytes);
        let line = text.lines().next()?;
        let mut parts = line.splitn(3, ' ');
        let stage = match parts.next()? {
            "setup" => Stage::Setup,
            "exec" => Stage::Exec,
            "changed" => Stage::Changed,
            _ => return None,
        };
        let errno = parts.next()?.parse().ok()?;
        Some(Failure { stage, errno, message: parts.next().unwrap_or("").to_string() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_scm_rights_send_names_etoomanyrefs_and_its_cause() {
        let text = scm_rights_refused(libc::ETOOMANYREFS);
        assert!(text.starts_with("ETOOMANYREFS ("), "{text}");
        assert!(text.contains("RLIMIT_NOFILE"), "{text}");
        assert_eq!(scm_rights_refused(libc::EBADF), os_words(&std::io::Error::from_raw_os_error(libc::EBADF)));
    }

    #[test]
    fn round_trip_and_exit_codes() {
        let f = Failure { stage: Stage::Exec, errno: libc::ENOENT, message: "cannot run 'x':\nNo such file".into() };
        let decoded = Failure::decode(&f.encode()).unwrap();
        assert_eq!(decoded, Failure { message: "cannot run 'x': No such file".into(), ..f.clone() });
        assert_eq!(f.exit_code(), 127);
        assert_eq!(Failure { errno: libc::EACCES, ..f.clone() }.exit_code(), 126);
        assert_eq!(Failure { stage: Stage::Setup, errno: 0, message: String::new() }.exit_code(), 125);
        let changed = Failure { stage: Stage::Changed, errno: libc::ENOENT, message: "gone".into() };
        assert_eq!(Failure::decode(&changed.encode()), Some(changed.clone()));
        assert_eq!(changed.exit_code(), 125);
        assert_eq!(Failure::decode(b""), None);
        assert_eq!(Failure::decode(b"garbage"), None);
    }

    /// Found by an attacker's review: with the machine's BPF JIT budget used up, every run failed
    /// setup with "installing the seccomp filter failed: No error information" (musl, and glibc,
    /// have no text for the kernel's ENOTSUPP, 524): the words name it, and for seccomp the cause.
    #[test]
    fn enotsupp_is_named() {
        assert_eq!(os_words(&std::io::Error::from_raw_os_error(524)), "ENOTSUPP (524)");
        let why = seccomp_refused(524);
        assert!(why.starts_with("ENOTSUPP (524): the kernel refused to compile the filter"), "{why}");
        assert!(why.contains("machine-wide BPF JIT budget (net.core.bpf_jit_limit) may be exhausted"), "{why}");
        assert_eq!(seccomp_refused(libc::EINVAL), os_words(&std::io::Error::from_raw_os_error(libc::EINVAL)));
    }

    /// A run from inside a sandspawn sandbox (the Landlock mode, where bwrap has no user namespace
    /// to make) is refused its filter by the outer one's (kern30): the words say why.
    #[test]
    fn eperm_names_the_sandbox_around() {
        let why = seccomp_refused(libc::EPERM);
        assert!(why.contains("inside a sandbox that refuses seccomp filters"), "{why}");
    }
}
