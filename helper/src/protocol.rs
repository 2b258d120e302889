//! The helper's command line: what the plan builder writes after bwrap's `--`, and what the helper
//! parses. The first word names the protocol, so a plan from one sandspawn version and a helper
//! from another refuse each other with a clear message instead of misreading flags.
//!
//! ```text
//! sandspawn-helper v1 [--null-fds=N,...] [--offline-nsswitch-fd=N]
//!     [--held-locks=DIR --hold-dir=N:DIR [--placeholder-dir=N:NAME | --placeholder-file=N:NAME]...]...
//!     [--await-init-locks=K] [--close-fds=N,...] [--writable-at=DEV:INO:PATH]... [--cwd-at=DEV:INO:PATH]
//!     [--tmpfs-inodes=N:PATH]... [--devpts-max=N] [--stdio-devices=DIR] [--review ROOT UPPER WORK]... [--read-only=PATH]... [--overlay TARGET UPPER WORK]... [--cover-dir=PATH]... [--cover-file=PATH]... [--cover-dir-if-there=PATH]... [--unmount=PATH]...
//!     [--own-userns [--limit-userns] [--map-ids=UID:GID]] [--controlling-tty] [--rlimit=NAME:SOFT:HARD]...
//!     [--exec-after=NS] [--filter=none|unix|inet|inet-unix]
//!     [--report-fd=N] [--net-listen=N]
//!     [--landlock=ABI --sockets=none|unix|inet-unix --control-fd=N --ll-list=PATH... --ll-read=PATH... --ll-write[-at=DEV:INO:|=]PATH...] -- COMMAND [ARG...]
//! sandspawn-helper --version
//! ```
//!
//! Every argument before `--` is UTF-8: a path that is not is written `hex:` and its bytes (see
//! `path_word`).

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::rlimit::Rlimit;

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
    /// Host side too: open at this descriptor an in-memory copy of the host's `/etc/nsswitch.conf`
    /// that resolves names from `/etc/hosts` only (see `offline_names`), for bwrap to show the
    /// command when the network is off.
    pub offline_nsswitch_fd: Option<i32>,
    /// Host side too, for plans another program runs (the runner gives its runs bwrap's status
    /// pipe itself): `(status, alive)`. First of all, arm a parent-death signal (SIGKILL), kept
    /// across the exec of bwrap, so a spawner that dies from now on takes bwrap with it even
    /// before bwrap arms its own; last before the exec, make an `AF_UNIX` datagram socket pair,
    /// one end at `status` (bwrap's `--json-status-fd`), the other at `alive` (the helper inside,
    /// `bwrap_alive`). The spawner never holds either end, so only bwrap's monitor keeps the
    /// status end by the time the helper inside checks it (see `status_pair` in the helper).
    pub status_pair: Option<(i32, i32)>,
    /// Host side too, for plans another program runs (the runner makes no placeholders): lock
    /// each directory's lock file (in `held_locks`) shared at its descriptor, left inheritable so
    /// that bwrap keeps it until its pid 1 holds the directory, and create its placeholders (see
    /// `placeholder`).
    pub held_dirs: Vec<HeldDir>,
    /// The directory of the held directories' lock files, in sandspawn's state directory (see
    /// `placeholder::lock_of`); needed with `held_dirs`.
    pub held_locks: Option<PathBuf>,
    /// Inside, first: wait until bwrap's pid 1 holds this many POSIX read locks (its
    /// `--lock-file`s on the held directories, which it keeps for the sandbox's life), so that
    /// the directories are never without a lock once their placeholders are mounted over.
    pub await_init_locks: usize,
    /// Inside, then: close these descriptors (the held directories' lock files), so that the command
    /// cannot unlock them and let another run's cleanup remove a placeholder mounted over here.
    pub close_fds: Vec<i32>,
    /// Inside (with `own_userns`), before anything relies on the sandbox's mounts: each of these
    /// paths, reached from `/` without following a symlink, is the top of a writable mount of the
    /// directory the plan named (device and inode): the writable roots and the pins bwrap bound
    /// (see `planned_mounts` in the helper). bwrap binds by path, following links, so a directory
    /// on the path swapped for a link after the plan had bwrap bind where the link led, writable.
    pub writable: Vec<Planned>,
    /// Inside, then: the working directory, entered again by this path without following a symlink,
    /// must be this entry (bwrap's `--chdir` follows links as its binds do).
    pub cwd: Option<Planned>,
    /// Bound the inodes of each of these tmpfs mounts bwrap made (see `tmpfs_inodes` in the
    /// helper), first of the helper's mounts. Needs CAP_SYS_ADMIN, so `own_userns` too.
    pub tmpfs_inodes: Vec<TmpfsInodes>,
    /// Bound the sandbox's devpts instance (bwrap's `--dev` mounts it at `/dev/pts`) at this many
    /// ptys, keeping its modes (see `devpts`, and `pty_bound` in the helper). Needs CAP_SYS_ADMIN,
    /// so `own_userns` too.
    pub devpts_max: Option<u32>,
    /// Where the plan bound the host's `/dev` (read-only, nodev): the helper reopens every
    /// inherited descriptor on a host device through a read-only copy of its mount, then detaches
    /// this bind (see `stdio_devices` in the helper). Needs CAP_SYS_ADMIN, so `own_userns` too.
    pub stdio_devices: Option<String>,
    /// Cover each of these writable roots with a copy-on-write overlay whose upper directory is the
    /// change set's (the reviewable workspace: see `review_mount` in the helper and the addon's
    /// `review`), first of the helper's mounts; what bwrap mounted below a root is put back on top.
    pub review: Vec<ReviewOverlay>,
    /// Make each of these paths read-only, in this order (shallowest first): the carve-outs inside
    /// writable roots (see `read_only` in the helper). Needs CAP_SYS_ADMIN, so `own_userns` too.
    pub read_only: Vec<ReadOnly>,
    /// Mount these copy-on-write overlays (the private tool caches, see the addon's `tool_caches`).
    /// Needs CAP_SYS_ADMIN and CAP_DAC_OVERRIDE in the sandbox's user namespace, which bwrap then
    /// keeps for the helper; `own_userns` must be set too, since it is what drops them.
    pub overlays: Vec<Overlay>,
    /// Mount an empty read-only directory over each of these placeholders of missing protected
    /// names, and an empty read-only file over each of `cover_files` (see `covers`). Needs
    /// CAP_SYS_ADMIN, so `own_userns` must be set too.
    pub cover_dirs: Vec<PathBuf>,
    pub cover_files: Vec<PathBuf>,
    /// Directories covered as `cover_dirs` while they are directories, passed over when they are
    /// gone, also in the middle of the helper's mount (`covers::cover_store`): other processes'
    /// stores (`known-stores`), which their processes may remove at any moment (a test's temporary
    /// home), while nothing is left there to protect.
    pub cover_dirs_if_there: Vec<PathBuf>,
    /// Symlinks bound over themselves, read-only (`covers::pin_links`): in a plan another program
    /// runs, the symlinks a run holds and puts back after it (on the way to a nested repository's
    /// git directory, a home link's target, a `denyRead` path), which nobody puts back after a
    /// plan. Needs CAP_SYS_ADMIN, so `own_userns` too.
    pub pin_links: Vec<PathBuf>,
    /// Bind mounts bwrap made only so that the overlays could be mounted (the writable store),
    /// detached after them so the command cannot reach the store directly.
    pub unmount: Vec<String>,
    /// Move into a user namespace of the command's own, below the one of bwrap's pid 1, then drop
    /// every capability (see `userns`). Every bwrap plan: the kernel refuses the command every
    /// access of the ptrace family to a process of a parent user namespace, so nothing that runs
    /// without the command's filter (bwrap's pid 1) can be borrowed by it. Before anything else,
    /// it also makes the sandbox's mounts private and the host's kernel objects read-only (see
    /// the helper's `propagation` and `host_objects`), with the capabilities every plan keeps.
    pub own_userns: bool,
    /// With `own_userns`, first: what bwrap's `--disable-userns` does (which the plans leave out:
    /// bwrap would move pid 1 into its nested user namespace too), `user.max_user_namespaces = 1`
    /// in the sandbox's namespace. Needs the capabilities a plan keeps for the helper's mounts;
    /// the filter refuses new namespaces in every plan anyway (see `seccomp`).
    pub limit_userns: bool,
    /// With `own_userns`: the uid and gid the command runs as in its user namespace, mapped onto
    /// the helper's (bwrap ran it as uid 0: see `userns`). Without it the ids stay the helper's own.
    pub map_ids: Option<(u32, u32)>,
    /// Make the command a session leader whose controlling terminal is the terminal on descriptor
    /// 0 (pty runs). bwrap's `--new-session` leaves the command without one, so job control,
    /// Ctrl-C and `/dev/tty` need this step inside the sandbox; on macOS posix_spawn cannot do it
    /// either (its file actions run before its setsid), so the helper runs in front of sandbox-exec.
    pub controlling_tty: bool,
    /// Resource limits to set on itself, inherited by the command (see `rlimit`).
    pub rlimits: Vec<Rlimit>,
    /// Exec the command only once the kernel's coarse realtime clock reads at least this many
    /// nanoseconds since the epoch: the moment a reviewed workspace's change set began (see
    /// `clock_wait` in the helper, and the addon's `review::apply`, which calls a host path whose
    /// ctime is at or after it a conflict).
    pub exec_after_ns: Option<i64>,
    /// Install the seccomp filter, last before exec (with no_new_privs): the baseline (see
    /// `seccomp::BASELINE`, `seccomp::SET_ID_MODES`), this socket rule, tracing of the command's own tree only. Every bwrap
    /// plan has one, whatever its network.
    pub filter: Option<crate::seccomp::Sockets>,
    /// A descriptor on which a failure before the command runs is reported (see `report`). The
    /// helper marks it close-on-exec, so the command never sees it. Only the runner passes one:
    /// plans for other spawners are self-contained and report on stderr and by exit code.
    pub report_fd: Option<i32>,
    /// bwrap runs of the runner: a read end of bwrap's `--json-status-fd` pipe, whose write end
    /// only bwrap's monitor keeps (the host closes its own right after the spawn, bwrap's sandbox
    /// child closes it after the clone). Last before the filter, once pid 1 sleeps in its wait
    /// (past `do_init`'s PR_SET_PDEATHSIG), the helper refuses to exec the command when the pipe
    /// has no writer left: bwrap died during the setup (its `--die-with-parent`, its host killed)
    /// and nothing would end pid 1 (see `bwrap_alive` in the helper). Closed before exec.
    pub bwrap_alive: Option<i32>,
    /// The network allow-list bridge: bind a TCP listener on the sandbox's own loopback, send it to
    /// the host's proxy over this inherited `AF_UNIX` descriptor (SCM_RIGHTS), close it, and set the
    /// proxy variables (see `proxy_env`) for the command. Runner only: the proxy lives in the host.
    pub net_listen_fd: Option<i32>,
    /// The Landlock mode (no bwrap): supervise the command as a subreaper and confine it with
    /// Landlock at this ABI plus the Landlock-mode seccomp filter (see `landlock`, `seccomp`).
    pub landlock: Option<LandlockSteps>,
}

/// What the Landlock mode confines the command to (paths absolute, as the plan resolved them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LandlockSteps {
    /// The ABI the plan was built for: the helper refuses to run below it.
    pub abi: u32,
    /// Trees whose directories the command may list (names only: no file in them is readable by
    /// this rule), e.g. `/`, so that `/dev` lists while its devices stay closed.
    pub list: Vec<String>,
    /// Trees readable (and executable) by the command.
    pub read: Vec<String>,
    /// Trees (or single files) writable by the command, each with the entry it must be when the
    /// plan listed it (a grant opened on another entry, renamed into its place since, could hand
    /// the command a repository's `.git`; see the helper's `confine`).
    pub write: Vec<Planned>,
    pub sockets: crate::seccomp::Sockets,
    /// Runner only: EOF on this descriptor (the runner closed it, or died) kills the whole tree.
    pub control_fd: Option<i32>,
}

/// A tmpfs bwrap mounted (the sandbox's `/dev/shm`, a private `/tmp`), which bwrap bounds in bytes
/// only (`--size`), and the most inodes it may hold (`--tmpfs-inodes=N:PATH`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmpfsInodes {
    pub path: String,
    pub inodes: u64,
}

/// A directory the helper in front of bwrap locks at `fd`, and the placeholders it creates in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldDir {
    pub fd: i32,
    pub path: PathBuf,
    pub placeholders: Vec<(String, crate::placeholder::Kind)>,
}

/// One reviewed writable root: `root` shows the host's tree with, on top, the writes kept in
/// `upper` (the change set's); `work` is overlayfs's scratch directory on the same filesystem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewOverlay {
    pub root: String,
    pub upper: String,
    pub work: String,
}

/// A path the helper acts on, and, when the plan knows it, the entry it must be (`...-at=DEV:INO:PATH`;
/// always for `--writable-at` and `--cwd-at`):
/// the device and inode the host saw there when it planned. A run in the same workspace can rename
/// directories between the plan and the helper; without the check, the helper would act on
/// whatever the path leads to then (a decoy): protect it, leaving the entry the plan meant
/// writable (`--read-only`, see `read_only` in the helper), or grant it, handing over whatever was
/// renamed there (`--ll-write`, see `confine`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planned {
    pub path: PathBuf,
    pub id: Option<(u64, u64)>,
}

/// A carve-out to make read-only (`--read-only`, `--read-only-at`).
pub type ReadOnly = Planned;

impl Planned {
    pub fn new(path: impl AsRef<Path>) -> Planned {
        Planned { path: path.as_ref().to_path_buf(), id: None }
    }

    pub fn at(path: impl AsRef<Path>, id: (u64, u64)) -> Planned {
        Planned { path: path.as_ref().to_path_buf(), id: Some(id) }
    }

    /// `DEV:INO:PATH` (the path is absolute, and may hold colons itself).
    fn parse_at(text: &str) -> Option<Planned> {
        let (dev, rest) = text.split_once(':')?;
        let (ino, path) = rest.split_once(':')?;
        Some(Planned::at(parse_path_word(path)?, (dev.parse().ok()?, ino.parse().ok()?)))
    }

    /// The argument for `flag`: `FLAG=PATH`, or `FLAG-at=DEV:INO:PATH` with an identity.
    fn arg(&self, flag: &str) -> String {
        let path = path_word(&self.path);
        match self.id {
            Some((dev, ino)) => format!("{flag}-at={dev}:{ino}:{path}"),
            None => format!("{flag}={path}"),
        }
    }
}

/// What marks a path written as its bytes in hex (`path_word`).
const HEX_PATH: &str = "hex:";

/// An absolute path as one word of the protocol: as it is when it is UTF-8, else `hex:` and its
/// bytes in hex (no absolute path begins so). A file's name may be any bytes but `/` and NUL, and
/// the host's walk finds paths a run made (a repository under a directory named with byte 0xff):
/// refusing them refused every later run in the workspace, and a lossy conversion would name
/// another path. A plan's arguments stay strings all the same (a plan for another spawner is JS
/// strings); the helper gets the bytes back (`parse_path_word`) and hands them to system calls.
pub fn path_word(path: &Path) -> String {
    match path.to_str() {
        Some(text) => text.to_string(),
        None => {
            let bytes = path.as_os_str().as_bytes();
            let mut word = String::with_capacity(HEX_PATH.len() + 2 * bytes.len());
            word.push_str(HEX_PATH);
            for b in bytes {
                word.push_str(&format!("{b:02x}"));
            }
            word
        }
    }
}

/// The absolute path a word of the protocol names (see `path_word`); `None` for anything else (a
/// relative path, bad hex, a NUL byte).
pub fn parse_path_word(word: &str) -> Option<PathBuf> {
    let path = match word.strip_prefix(HEX_PATH) {
        Some(hex) => {
            if hex.len() % 2 != 0 || !hex.is_ascii() {
                return None;
            }
            let bytes: Vec<u8> = (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).ok()).collect::<Option<_>>()?;
            PathBuf::from(std::ffi::OsStr::from_bytes(&bytes))
        }
        None => PathBuf::from(word),
    };
    let bytes = path.as_os_str().as_bytes();
    (bytes.first() == Some(&b'/') && !bytes.contains(&0)).then_some(path)
}

/// One overlay: `TARGET` shows what it held below the `layers` (newest first) and, on top, the
/// writes kept in `UPPER` (`WORK` is the kernel's scratch directory, one per run, on the same
/// filesystem as `UPPER`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overlay {
    pub target: String,
    pub upper: String,
    pub work: String,
    pub layers: Vec<String>,
}

impl Steps {
    /// Whether the helper covers placeholders.
    pub fn covers(&self) -> bool {
        !self.cover_dirs.is_empty() || !self.cover_files.is_empty() || !self.cover_dirs_if_there.is_empty() || !self.pin_links.is_empty()
    }

    /// Whether the helper mounts anything (with the capabilities bwrap kept for it).
    pub fn mounts(&self) -> bool {
        !self.tmpfs_inodes.is_empty() || self.devpts_max.is_some() || self.stdio_devices.is_some() || !self.review.is_empty() || !self.read_only.is_empty() || !self.overlays.is_empty() || self.covers()
    }

    /// The flag of the first step asked for that exists only on Linux (memfd, /proc, namespaces
    /// and mounts, the bridge's in-sandbox listener, Landlock, seccomp). A helper built for
    /// another system refuses the whole plan with it before doing anything, rather than skip a
    /// step the sandbox relies on. What is left (descriptors, locks, the terminal, rlimits, exec)
    /// is what the helper does in front of sandbox-exec on macOS.
    pub fn linux_only(&self) -> Option<&'static str> {
        [
            (self.offline_nsswitch_fd.is_some(), "--offline-nsswitch-fd"),
            (self.status_pair.is_some(), "--status-pair"),
            (self.await_init_locks > 0, "--await-init-locks"),
            (!self.writable.is_empty(), "--writable-at"),
            (self.cwd.is_some(), "--cwd-at"),
            (!self.tmpfs_inodes.is_empty(), "--tmpfs-inodes"),
            (self.devpts_max.is_some(), "--devpts-max"),
            (self.stdio_devices.is_some(), "--stdio-devices"),
            (!self.review.is_empty(), "--review"),
            (!self.read_only.is_empty(), "--read-only"),
            (!self.overlays.is_empty(), "--overlay"),
            (!self.cover_dirs.is_empty(), "--cover-dir"),
            (!self.cover_files.is_empty(), "--cover-file"),
            (!self.cover_dirs_if_there.is_empty(), "--cover-dir-if-there"),
            (!self.pin_links.is_empty(), "--pin-link"),
            (!self.unmount.is_empty(), "--unmount"),
            (self.own_userns, "--own-userns"),
            (self.net_listen_fd.is_some(), "--net-listen"),
            (self.bwrap_alive.is_some(), "--bwrap-alive"),
            (self.exec_after_ns.is_some(), "--exec-after"),
            (self.landlock.is_some(), "--landlock"),
            (self.filter.is_some(), "--filter"),
        ]
        .into_iter()
        .find_map(|(asked, flag)| asked.then_some(flag))
    }

    /// The helper's arguments up to and including the `--` that precedes the command.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec![PROTOCOL_TAG.to_string()];
        if !self.null_fds.is_empty() {
            let list: Vec<String> = self.null_fds.iter().map(i32::to_string).collect();
            args.push(format!("--null-fds={}", list.join(",")));
        }
        if let Some(fd) = self.offline_nsswitch_fd {
            args.push(format!("--offline-nsswitch-fd={fd}"));
        }
        if let Some((status, alive)) = self.status_pair {
            args.push(format!("--status-pair={status},{alive}"));
        }
        if let Some(locks) = &self.held_locks {
            args.push(format!("--held-locks={}", path_word(locks)));
        }
        for h in &self.held_dirs {
            args.push(format!("--hold-dir={}:{}", h.fd, path_word(&h.path)));
            for (name, kind) in &h.placeholders {
                args.push(format!("--placeholder-{}={}:{name}", kind.word(), h.fd));
            }
        }
        if self.await_init_locks > 0 {
            args.push(format!("--await-init-locks={}", self.await_init_locks));
        }
        if !self.close_fds.is_empty() {
            let list: Vec<String> = self.close_fds.iter().map(i32::to_string).collect();
            args.push(format!("--close-fds={}", list.join(",")));
        }
        args.extend(self.writable.iter().map(|w| w.arg("--writable")));
        args.extend(self.cwd.iter().map(|c| c.arg("--cwd")));
        args.extend(self.tmpfs_inodes.iter().map(|t| format!("--tmpfs-inodes={}:{}", t.inodes, t.path)));
        if let Some(max) = self.devpts_max {
            args.push(format!("--devpts-max={max}"));
        }
        if let Some(dir) = &self.stdio_devices {
            args.push(format!("--stdio-devices={dir}"));
        }
        for r in &self.review {
            args.extend(["--review".to_string(), r.root.clone(), r.upper.clone(), r.work.clone()]);
        }
        args.extend(self.read_only.iter().map(|r| r.arg("--read-only")));
        for o in &self.overlays {
            args.extend(["--overlay".to_string(), o.target.clone(), o.upper.clone(), o.work.clone(), o.layers.len().to_string()]);
            args.extend(o.layers.iter().cloned());
        }
        args.extend(self.cover_dirs.iter().map(|p| format!("--cover-dir={}", path_word(p))));
        args.extend(self.cover_files.iter().map(|p| format!("--cover-file={}", path_word(p))));
        args.extend(self.cover_dirs_if_there.iter().map(|p| format!("--cover-dir-if-there={}", path_word(p))));
        args.extend(self.pin_links.iter().map(|p| format!("--pin-link={}", path_word(p))));
        for p in &self.unmount {
            args.push(format!("--unmount={p}"));
        }
        if self.own_userns {
            args.push("--own-userns".into());
        }
        if self.limit_userns {
            args.push("--limit-userns".into());
        }
        if let Some((uid, gid)) = self.map_ids {
            args.push(format!("--map-ids={uid}:{gid}"));
        }
        if self.controlling_tty {
            args.push("--controlling-tty".into());
        }
        args.extend(self.rlimits.iter().map(Rlimit::to_arg));
        if let Some(ns) = self.exec_after_ns {
            args.push(format!("--exec-after={ns}"));
        }
        if let Some(sockets) = self.filter {
            args.push(format!("--filter={}", sockets.word()));
        }
        if let Some(fd) = self.report_fd {
            args.push(format!("--report-fd={fd}"));
        }
        if let Some(fd) = self.bwrap_alive {
            args.push(format!("--bwrap-alive={fd}"));
        }
        if let Some(fd) = self.net_listen_fd {
            args.push(format!("--net-listen={fd}"));
        }
        if let Some(ll) = &self.landlock {
            args.push(format!("--landlock={}", ll.abi));
            args.push(format!("--sockets={}", ll.sockets.word()));
            if let Some(fd) = ll.control_fd {
                args.push(format!("--control-fd={fd}"));
            }
            args.extend(ll.list.iter().map(|p| format!("--ll-list={p}")));
            args.extend(ll.read.iter().map(|p| format!("--ll-read={p}")));
            args.extend(ll.write.iter().map(|w| w.arg("--ll-write")));
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
        let mut landlock_only = false;
        let (mut list, mut read, mut write, mut sockets, mut control_fd) = (Vec::new(), Vec::new(), Vec::new(), crate::seccomp::Sockets::None, None);
        let mut i = 1;
        while i < args.len() {
            // A lossy conversion would name another path (see `path_word`).
            let Some(text) = args[i].to_str() else {
                return Err(format!("argument {:?} is not valid UTF-8", args[i].to_string_lossy()));
            };
            match text {
                "--" => {
                    if let Some(ll) = steps.landlock.as_mut() {
                        (ll.list, ll.read, ll.write) = (std::mem::take(&mut list), std::mem::take(&mut read), std::mem::take(&mut write));
                        (ll.sockets, ll.control_fd) = (sockets, control_fd);
                    }
                    let command = &args[i + 1..];
                    if command.is_empty() {
                        return Err("no command after `--`".into());
                    }
                    if let Some(ll) = &steps.landlock {
                        if ll.read.is_empty() {
                            return Err("--landlock needs at least one --ll-read".into());
                        }
                        // The Landlock mode runs without bwrap: no private mount namespace to mount
                        // overlays in, no store to detach, no sandbox user namespace to close.
                        if steps.mounts() || !steps.unmount.is_empty() || steps.own_userns || steps.filter.is_some() || !steps.writable.is_empty() || steps.cwd.is_some() {
                            return Err("--tmpfs-inodes, --devpts-max, --stdio-devices, --review, --read-only, --overlay, --cover-dir, --cover-file, --cover-dir-if-there, --unmount, --own-userns, --writable-at, --cwd-at and --filter cannot be combined with --landlock (it has its own filter)".into());
                        }
                    } else if landlock_only {
                        return Err("--ll-list, --ll-read, --ll-write, --sockets and --control-fd need --landlock".into());
                    }
                    if !steps.held_dirs.is_empty() && steps.held_locks.is_none() {
                        return Err("--hold-dir needs --held-locks, the directory of the held directories' lock files".into());
                    }
                    // Checked with bwrap's mount table, in the step every bwrap plan has.
                    if (!steps.writable.is_empty() || steps.cwd.is_some()) && !steps.own_userns {
                        return Err("--writable-at and --cwd-at are checked inside bwrap, with --own-userns".into());
                    }
                    if (steps.map_ids.is_some() || steps.limit_userns) && !steps.own_userns {
                        return Err("--map-ids and --limit-userns need --own-userns, which makes the user namespace they set up".into());
                    }
                    // What keeps capabilities for the helper's mounts also needs the step that drops them.
                    if steps.mounts() && !steps.own_userns && steps.landlock.is_none() {
                        return Err("--tmpfs-inodes, --devpts-max, --stdio-devices, --review, --read-only, --overlay, --cover-dir and --cover-file need --own-userns, which drops the capabilities they use".into());
                    }
                    return Ok((steps, command));
                }
                "--own-userns" => steps.own_userns = true,
                "--limit-userns" => steps.limit_userns = true,
                "--overlay" => {
                    let bad = || "--overlay needs TARGET UPPER WORK (absolute paths), the number of layers, then that many absolute paths".to_string();
                    let count = args.get(i + 4).and_then(|n| n.to_str()).and_then(|n| n.parse::<usize>().ok()).ok_or_else(bad)?;
                    let paths: Vec<String> = args.iter().skip(i + 1).take(3).chain(args.iter().skip(i + 5).take(count)).filter_map(|a| a.to_str().map(str::to_string)).collect();
                    if paths.len() < 3 + count || paths.iter().any(|p| !p.starts_with('/')) {
                        return Err(bad());
                    }
                    steps.overlays.push(Overlay { target: paths[0].clone(), upper: paths[1].clone(), work: paths[2].clone(), layers: paths[3..].to_vec() });
                    i += 4 + count;
                }
                "--review" => {
                    let paths: Vec<String> = args.iter().skip(i + 1).take(3).map(|a| a.to_string_lossy().into_owned()).collect();
                    if paths.len() < 3 || paths.iter().any(|p| !p.starts_with('/')) || args[i + 1..i + 4].iter().any(|a| a.to_str().is_none()) {
                        return Err("--review needs ROOT UPPER WORK (absolute UTF-8 paths)".into());
                    }
                    steps.review.push(ReviewOverlay { root: paths[0].clone(), upper: paths[1].clone(), work: paths[2].clone() });
                    i += 3;
                }
                "--controlling-tty" => steps.controlling_tty = true,
                _ => {
                    let bad = || format!("unknown or malformed argument {text:?}");
                    if let Some(word) = text.strip_prefix("--filter=") {
                        steps.filter = Some(crate::seccomp::Sockets::from_word(word).ok_or_else(bad)?);
                    } else if let Some(fd) = text.strip_prefix("--report-fd=") {
                        steps.report_fd = Some(descriptor(fd).ok_or_else(bad)?);
                    } else if let Some(fd) = text.strip_prefix("--bwrap-alive=") {
                        steps.bwrap_alive = Some(descriptor(fd).ok_or_else(bad)?);
                    } else if let Some(fd) = text.strip_prefix("--offline-nsswitch-fd=") {
                        steps.offline_nsswitch_fd = Some(descriptor(fd).ok_or_else(bad)?);
                    } else if let Some(fd) = text.strip_prefix("--net-listen=") {
                        steps.net_listen_fd = Some(descriptor(fd).ok_or_else(bad)?);
                    } else if let Some(ns) = text.strip_prefix("--exec-after=") {
                        steps.exec_after_ns = Some(ns.parse::<i64>().ok().filter(|n| *n > 0).ok_or_else(bad)?);
                    } else if let Some(limit) = text.strip_prefix("--rlimit=") {
                        steps.rlimits.push(Rlimit::parse(limit).ok_or_else(bad)?);
                    } else if let Some(abi) = text.strip_prefix("--landlock=") {
                        let abi = abi.parse::<u32>().ok().filter(|a| *a >= crate::landlock::MIN_ABI).ok_or_else(bad)?;
                        steps.landlock.get_or_insert_with(LandlockSteps::default).abi = abi;
                    } else if let Some(path) = text.strip_prefix("--ll-list=").filter(|p| p.starts_with('/')) {
                        landlock_only = true;
                        list.push(path.to_string());
                    } else if let Some(path) = text.strip_prefix("--ll-read=").filter(|p| p.starts_with('/')) {
                        landlock_only = true;
                        read.push(path.to_string());
                    } else if let Some(path) = text.strip_prefix("--ll-write=") {
                        landlock_only = true;
                        write.push(Planned::new(parse_path_word(path).ok_or_else(bad)?));
                    } else if let Some(rest) = text.strip_prefix("--ll-write-at=") {
                        landlock_only = true;
                        write.push(Planned::parse_at(rest).ok_or_else(bad)?);
                    } else if let Some(word) = text.strip_prefix("--sockets=") {
                        landlock_only = true;
                        sockets = crate::seccomp::Sockets::from_word(word).ok_or_else(bad)?;
                    } else if let Some(fd) = text.strip_prefix("--control-fd=") {
                        landlock_only = true;
                        control_fd = Some(descriptor(fd).ok_or_else(bad)?);
                    } else if let Some(pair) = text.strip_prefix("--status-pair=") {
                        let (status, alive) = pair.split_once(',').ok_or_else(bad)?;
                        let (status, alive) = (descriptor(status).ok_or_else(bad)?, descriptor(alive).ok_or_else(bad)?);
                        if status == alive {
                            return Err(bad());
                        }
                        steps.status_pair = Some((status, alive));
                    } else if let Some(list) = text.strip_prefix("--null-fds=") {
                        steps.null_fds = list.split(',').map(descriptor).collect::<Option<_>>().ok_or_else(bad)?;
                    } else if let Some(locks) = text.strip_prefix("--held-locks=") {
                        steps.held_locks = Some(parse_path_word(locks).ok_or_else(bad)?);
                    } else if let Some(held) = text.strip_prefix("--hold-dir=") {
                        let (fd, path) = held.split_once(':').ok_or_else(bad)?;
                        let fd = descriptor(fd).filter(|fd| steps.held_dirs.iter().all(|h| h.fd != *fd)).ok_or_else(bad)?;
                        let path = parse_path_word(path).ok_or_else(bad)?;
                        steps.held_dirs.push(HeldDir { fd, path, placeholders: Vec::new() });
                    } else if let Some((kind, spec)) = text
                        .strip_prefix("--placeholder-dir=")
                        .map(|s| (crate::placeholder::Kind::Dir, s))
                        .or_else(|| text.strip_prefix("--placeholder-file=").map(|s| (crate::placeholder::Kind::File, s)))
                    {
                        let (fd, name) = spec.split_once(':').ok_or_else(bad)?;
                        let fd = descriptor(fd).ok_or_else(bad)?;
                        if !crate::placeholder::valid_name(name) {
                            return Err(bad());
                        }
                        // It names a directory held just before.
                        let held = steps.held_dirs.iter_mut().find(|h| h.fd == fd).ok_or_else(bad)?;
                        held.placeholders.push((name.to_string(), kind));
                    } else if let Some(ids) = text.strip_prefix("--map-ids=") {
                        let (uid, gid) = ids.split_once(':').ok_or_else(bad)?;
                        steps.map_ids = Some((uid.parse().map_err(|_| bad())?, gid.parse().map_err(|_| bad())?));
                    } else if let Some(n) = text.strip_prefix("--await-init-locks=") {
                        steps.await_init_locks = n.parse::<usize>().ok().filter(|n| *n > 0).ok_or_else(bad)?;
                    } else if let Some(list) = text.strip_prefix("--close-fds=") {
                        steps.close_fds = list.split(',').map(descriptor).collect::<Option<_>>().ok_or_else(bad)?;
                    } else if let Some(p) = text.strip_prefix("--read-only=") {
                        steps.read_only.push(ReadOnly::new(parse_path_word(p).ok_or_else(bad)?));
                    } else if let Some(rest) = text.strip_prefix("--read-only-at=") {
                        steps.read_only.push(ReadOnly::parse_at(rest).ok_or_else(bad)?);
                    } else if let Some(rest) = text.strip_prefix("--writable-at=") {
                        // Only with the entry it must be: a planned mount without one checks nothing.
                        steps.writable.push(Planned::parse_at(rest).ok_or_else(bad)?);
                    } else if let Some(rest) = text.strip_prefix("--cwd-at=") {
                        steps.cwd = Some(Planned::parse_at(rest).ok_or_else(bad)?);
                    } else if let Some(spec) = text.strip_prefix("--tmpfs-inodes=") {
                        // At least 1: `nr_inodes=0` means no bound at all to tmpfs.
                        let (n, path) = spec.split_once(':').ok_or_else(bad)?;
                        let inodes = n.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(bad)?;
                        if !path.starts_with('/') {
                            return Err(bad());
                        }
                        steps.tmpfs_inodes.push(TmpfsInodes { path: path.to_string(), inodes });
                    } else if let Some(n) = text.strip_prefix("--devpts-max=") {
                        // At least 1 (0 would refuse every pty, which no plan means), and below the
                        // kernel's ceiling, where devpts takes `max` for no bound at all.
                        steps.devpts_max = Some(n.parse::<u32>().ok().filter(|n| (1..crate::devpts::MAX_PTYS).contains(n)).ok_or_else(bad)?);
                    } else if let Some(p) = text.strip_prefix("--stdio-devices=").filter(|p| p.starts_with('/')) {
                        steps.stdio_devices = Some(p.to_string());
                    } else if let Some(p) = text.strip_prefix("--cover-dir=") {
                        steps.cover_dirs.push(parse_path_word(p).ok_or_else(bad)?);
                    } else if let Some(p) = text.strip_prefix("--cover-file=") {
                        steps.cover_files.push(parse_path_word(p).ok_or_else(bad)?);
                    } else if let Some(p) = text.strip_prefix("--cover-dir-if-there=") {
                        steps.cover_dirs_if_there.push(parse_path_word(p).ok_or_else(bad)?);
                    } else if let Some(p) = text.strip_prefix("--pin-link=") {
                        steps.pin_links.push(parse_path_word(p).ok_or_else(bad)?);
                    } else if let Some(p) = text.strip_prefix("--unmount=").filter(|p| p.starts_with('/')) {
                        steps.unmount.push(p.to_string());
                    } else {
                        return Err(bad());
                    }
                }
            }
            i += 1;
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
    use crate::placeholder::Kind;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn round_trip() {
        for steps in [
            Steps::default(),
            Steps { filter: Some(crate::seccomp::Sockets::Inet), ..Steps::default() },
            Steps { filter: Some(crate::seccomp::Sockets::Inet), report_fd: Some(4), ..Steps::default() },
            Steps { null_fds: vec![5, 6], ..Steps::default() },
            Steps { null_fds: vec![5], offline_nsswitch_fd: Some(6), ..Steps::default() },
            Steps { null_fds: vec![3], status_pair: Some((4, 5)), ..Steps::default() },
            Steps {
                overlays: vec![
                    Overlay { target: "/h/.npm".into(), upper: "/s/npm/upper".into(), work: "/s/npm/work/1".into(), layers: vec!["/s/npm/pending/2".into(), "/s/npm/base".into()] },
                    Overlay { target: "/h/a b".into(), upper: "/s/c/upper".into(), work: "/s/c/work/1".into(), layers: vec![] },
                ],
                unmount: vec!["/s".into()],
                own_userns: true,
                report_fd: Some(4),
                ..Steps::default()
            },
            Steps {
                overlays: vec![Overlay { target: "/h/.npm".into(), upper: "/s/npm/upper".into(), work: "/s/npm/work/1".into(), layers: vec!["/s/npm/pending/2".into(), "/s/npm/base".into()] }],
                unmount: vec!["/s".into()],
                own_userns: true,
                limit_userns: true,
                controlling_tty: true,
                rlimits: vec![cpu(), nofile()],
                filter: Some(crate::seccomp::Sockets::Inet),
                report_fd: Some(4),
                net_listen_fd: Some(5),
                ..Steps::default()
            },
            Steps { filter: Some(crate::seccomp::Sockets::Inet), report_fd: Some(4), net_listen_fd: Some(5), ..Steps::default() },
            Steps { filter: Some(crate::seccomp::Sockets::Inet), report_fd: Some(4), bwrap_alive: Some(7), ..Steps::default() },
            Steps { cover_dirs: vec!["/w/.vscode".into(), "/w/a b/.git".into()], cover_files: vec!["/w/.envrc".into()], own_userns: true, map_ids: Some((1000, 100)), await_init_locks: 2, close_fds: vec![7, 8], ..Steps::default() },
            Steps { pin_links: vec!["/w/lib/sub/.git".into(), "/w/dotfiles/active".into()], own_userns: true, ..Steps::default() },
            Steps {
                tmpfs_inodes: vec![TmpfsInodes { path: "/dev/shm".into(), inodes: 131072 }, TmpfsInodes { path: "/tmp".into(), inodes: 1 }],
                devpts_max: Some(256),
                stdio_devices: Some("/dev/sandspawn-host-dev".into()),
                own_userns: true,
                limit_userns: true,
                ..Steps::default()
            },
            Steps { read_only: vec![ReadOnly::at("/w/.git", (2049, 77)), ReadOnly::at("/w/deps/a:b/.git", (7, u64::MAX)), ReadOnly::new("/w/x:1:2")], own_userns: true, limit_userns: true, ..Steps::default() },
            Steps { writable: vec![Planned::at("/tmp", (1, 2)), Planned::at("/w s/a:b", (3, 4))], cwd: Some(Planned::at("/w s/a:b", (3, 4))), own_userns: true, ..Steps::default() },
            Steps {
                review: vec![ReviewOverlay { root: "/w s".into(), upper: "/s/cs/0/upper".into(), work: "/s/cs/0/work".into() }],
                read_only: vec![ReadOnly::new("/w s/ro")],
                unmount: vec!["/s/cs".into()],
                own_userns: true,
                exec_after_ns: Some(1_760_000_000_123_456_789),
                ..Steps::default()
            },
            Steps {
                null_fds: vec![5],
                offline_nsswitch_fd: Some(6),
                held_dirs: vec![
                    HeldDir { fd: 7, path: "/w s".into(), placeholders: vec![(".git".into(), Kind::Dir), ("ro:x".into(), Kind::File)] },
                    HeldDir { fd: 8, path: "/tmp".into(), placeholders: vec![(".git".into(), Kind::Dir)] },
                ],
                held_locks: Some("/h/.local/state/sandspawn/held-dirs".into()),
                ..Steps::default()
            },
            Steps { controlling_tty: true, ..Steps::default() },
            Steps { controlling_tty: true, filter: Some(crate::seccomp::Sockets::Inet), report_fd: Some(4), ..Steps::default() },
            Steps { rlimits: vec![cpu(), nofile()], report_fd: Some(4), ..Steps::default() },
            Steps {
                report_fd: Some(4),
                landlock: Some(LandlockSteps {
                    abi: 6,
                    list: vec!["/".into()],
                    read: vec!["/usr".into(), "/etc".into()],
                    write: vec![Planned::new("/w s"), Planned::at("/t=x:1", (3, 4))],
                    sockets: crate::seccomp::Sockets::UnixOnly,
                    control_fd: Some(3),
                }),
                ..Steps::default()
            },
        ] {
            let mut args = os(&steps.to_args().iter().map(String::as_str).collect::<Vec<_>>());
            args.extend(os(&["ls", "--", "-l"]));
            let (parsed, command) = Steps::parse(&args).unwrap();
            assert_eq!(parsed, steps);
            assert_eq!(command, os(&["ls", "--", "-l"]).as_slice(), "only the first `--` separates");
        }
    }

    /// A path the host's walk found may have any bytes in its names (a run made the directory): it
    /// travels as `hex:` and its bytes, and comes back the same; a raw argument that is not UTF-8
    /// is refused (a lossy conversion would name another path).
    #[test]
    fn paths_that_are_not_utf8_travel_as_their_bytes() {
        use std::os::unix::ffi::OsStrExt;
        let odd = |b: &[u8]| PathBuf::from(std::ffi::OsStr::from_bytes(b));
        let steps = Steps {
            held_dirs: vec![HeldDir { fd: 7, path: odd(b"/w/x\xff"), placeholders: vec![(".vscode".into(), Kind::Dir)] }],
            held_locks: Some(odd(b"/h/\xfe/held-dirs")),
            read_only: vec![ReadOnly::at(odd(b"/w/x\xff/.git"), (1, 2)), ReadOnly::new(odd(b"/w/\xfe:1"))],
            cover_dirs: vec![odd(b"/w/x\xff/.vscode")],
            cover_files: vec![odd(b"/w/x\xff/.envrc")],
            own_userns: true,
            ..Steps::default()
        };
        let args = steps.to_args();
        assert!(args.contains(&"--read-only-at=1:2:hex:2f772f78ff2f2e676974".to_string()), "{args:?}");
        let mut words = os(&args.iter().map(String::as_str).collect::<Vec<_>>());
        words.push("true".into());
        assert_eq!(Steps::parse(&words).unwrap().0, steps);
        let landlock = Steps { landlock: Some(LandlockSteps { abi: 4, read: vec!["/".into()], write: vec![Planned::new(odd(b"/w/\xff")), Planned::at(odd(b"/w/\xff\xfe"), (3, 4))], ..LandlockSteps::default() }), ..Steps::default() };
        let mut words = os(&landlock.to_args().iter().map(String::as_str).collect::<Vec<_>>());
        words.push("true".into());
        assert_eq!(Steps::parse(&words).unwrap().0, landlock);
        assert_eq!(path_word(Path::new("/w/hex:a")), "/w/hex:a", "a UTF-8 path is written as it is");
        for bad in ["hex:2f7", "hex:2fzz", "hex:77", "hex:2f00", "hex:", "rel"] {
            assert_eq!(parse_path_word(bad), None, "{bad}");
        }
        let raw = vec![OsString::from("v1"), OsString::from(std::ffi::OsStr::from_bytes(b"--read-only=/w/\xff")), "--own-userns".into(), "--".into(), "true".into()];
        assert!(Steps::parse(&raw).unwrap_err().contains("not valid UTF-8"));
    }

    #[test]
    fn pinned_format() {
        let steps = Steps { filter: Some(crate::seccomp::Sockets::Inet), report_fd: Some(4), ..Steps::default() };
        assert_eq!(steps.to_args(), ["v1", "--filter=inet", "--report-fd=4", "--"]);
        let tty = Steps { controlling_tty: true, filter: Some(crate::seccomp::Sockets::Inet), report_fd: Some(4), ..Steps::default() };
        assert_eq!(tty.to_args(), ["v1", "--controlling-tty", "--filter=inet", "--report-fd=4", "--"]);
        let outer = Steps { null_fds: vec![3, 4], ..Steps::default() };
        assert_eq!(outer.to_args(), ["v1", "--null-fds=3,4", "--"]);
        let paired = Steps { null_fds: vec![3], status_pair: Some((4, 5)), ..Steps::default() };
        assert_eq!(paired.to_args(), ["v1", "--null-fds=3", "--status-pair=4,5", "--"]);
        for bad in ["--status-pair=4", "--status-pair=4,4", "--status-pair=2,5", "--status-pair=4,x"] {
            assert!(Steps::parse(&os(&["v1", bad, "--", "true"])).is_err(), "{bad}");
        }
        let net = Steps { report_fd: Some(4), net_listen_fd: Some(5), ..Steps::default() };
        assert_eq!(net.to_args(), ["v1", "--report-fd=4", "--net-listen=5", "--"]);
        let limited = Steps { rlimits: vec![cpu(), nofile()], filter: Some(crate::seccomp::Sockets::Inet), ..Steps::default() };
        assert_eq!(limited.to_args(), ["v1", "--rlimit=cpu:2:3", "--rlimit=nofile:32:32", "--filter=inet", "--"]);
    }

    fn cpu() -> Rlimit {
        Rlimit { resource: crate::rlimit::Resource::Cpu, soft: 2, hard: 3 }
    }

    fn nofile() -> Rlimit {
        Rlimit { resource: crate::rlimit::Resource::Nofile, soft: 32, hard: 32 }
    }

    #[test]
    fn refuses_what_it_does_not_understand() {
        assert!(Steps::parse(&os(&[])).is_err());
        let other = Steps::parse(&os(&["v2", "--", "true"])).unwrap_err();
        assert!(other.contains("another sandspawn version"), "{other}");
        assert!(Steps::parse(&os(&["v1", "--unknown", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--report-fd=1", "--", "true"])).is_err(), "stdio is not a report fd");
        assert!(Steps::parse(&os(&["v1", "--report-fd=x", "--", "true"])).is_err());
        // A planned writable mount or working directory is always checked against an entry.
        for bad in ["--writable=/w", "--writable-at=1:/w", "--writable-at=1:2:rel", "--cwd=/w", "--cwd-at=x:2:/w"] {
            assert!(Steps::parse(&os(&["v1", bad, "--own-userns", "--", "true"])).is_err(), "{bad}");
        }
        assert!(Steps::parse(&os(&["v1", "--landlock=3", "--ll-read=/", "--writable-at=1:2:/w", "--", "true"])).unwrap_err().contains("cannot be combined with --landlock"));
        assert!(Steps::parse(&os(&["v1", "--cwd-at=1:2:/w", "--", "true"])).unwrap_err().contains("with --own-userns"));
        for bad in ["--read-only-at=1:2:rel", "--read-only-at=1:/w", "--read-only-at=x:2:/w", "--read-only-at=1:-2:/w", "--read-only=rel"] {
            assert!(Steps::parse(&os(&["v1", bad, "--", "true"])).is_err(), "{bad}");
        }
        assert!(Steps::parse(&os(&["v1", "--null-fds=3,x", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--null-fds=0", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--net-listen=2", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--net-listen=", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--rlimit=as:1:1", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--rlimit=cpu:3:2", "--", "true"])).is_err(), "soft above hard");
        assert!(Steps::parse(&os(&["v1", "true"])).is_err(), "missing --");
        assert!(Steps::parse(&os(&["v1", "--overlay", "/a", "/b", "--", "true"])).is_err(), "relative or missing overlay path");
        assert!(Steps::parse(&os(&["v1", "--overlay", "/a", "/b"])).is_err(), "overlay cut short");
        assert!(Steps::parse(&os(&["v1", "--overlay", "/a", "/b", "/c", "2", "/l1", "--", "true"])).is_err(), "fewer layers than said");
        assert!(Steps::parse(&os(&["v1", "--overlay", "/a", "/b", "/c", "x", "--", "true"])).is_err(), "no layer count");
        assert!(Steps::parse(&os(&["v1", "--review", "/a", "/b", "--", "true"])).is_err(), "review cut short");
        assert!(Steps::parse(&os(&["v1", "--review", "/a", "b", "/c", "--own-userns", "--", "true"])).is_err(), "relative review path");
        assert!(Steps::parse(&os(&["v1", "--review", "/a", "/b", "/c", "--", "true"])).is_err(), "a review overlay without --own-userns");
        for bad in ["--exec-after=", "--exec-after=-5", "--exec-after=0", "--exec-after=1.5", "--exec-after=x"] {
            assert!(Steps::parse(&os(&["v1", bad, "--", "true"])).is_err(), "{bad}");
        }
        assert!(Steps::parse(&os(&["v1", "--unmount=rel", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--cover-dir=rel", "--own-userns", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--cover-file=rel", "--own-userns", "--", "true"])).is_err());
        // A placeholder names one entry of a directory held before it.
        assert!(Steps::parse(&os(&["v1", "--held-locks=/l", "--placeholder-dir=7:.git", "--hold-dir=7:/w", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--held-locks=/l", "--hold-dir=7:/w", "--placeholder-dir=7:a/b", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--held-locks=/l", "--hold-dir=7:/w", "--placeholder-dir=7:..", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--held-locks=/l", "--hold-dir=7:w", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--held-locks=/l", "--hold-dir=2:/w", "--", "true"])).is_err(), "not over stdio");
        assert!(Steps::parse(&os(&["v1", "--held-locks=/l", "--hold-dir=7:/w", "--hold-dir=7:/x", "--", "true"])).is_err(), "one directory per descriptor");
        assert!(Steps::parse(&os(&["v1", "--hold-dir=7:/w", "--placeholder-dir=7:.git", "--", "true"])).is_err(), "the lock files' directory is needed");
        assert!(Steps::parse(&os(&["v1", "--held-locks=l", "--hold-dir=7:/w", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--held-locks=/l", "--hold-dir=7:/w", "--placeholder-dir=7:.git", "--", "true"])).is_ok());
        assert!(Steps::parse(&os(&["v1", "--close-fds=1", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--map-ids=1000:100", "--", "true"])).is_err(), "only with --own-userns");
        assert!(Steps::parse(&os(&["v1", "--own-userns", "--map-ids=1000", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--limit-userns", "--", "true"])).is_err(), "only with --own-userns");
        assert!(Steps::parse(&os(&["v1", "--filter=tcp", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--landlock=3", "--ll-read=/", "--filter=inet-unix", "--", "true"])).is_err(), "Landlock has its own filter");
        // The capabilities a remount or an overlay needs are dropped only by --own-userns.
        assert!(Steps::parse(&os(&["v1", "--cover-dir=/w/.vscode", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--read-only=/w/.git", "--", "true"])).unwrap_err().contains("need --own-userns"));
        assert!(Steps::parse(&os(&["v1", "--read-only=w/.git", "--own-userns", "--", "true"])).is_err(), "relative");
        assert!(Steps::parse(&os(&["v1", "--cover-file=/w/.envrc", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--overlay", "/a", "/b", "/c", "0", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--landlock=2", "--ll-read=/", "--", "true"])).is_err(), "ABI below 3");
        assert!(Steps::parse(&os(&["v1", "--landlock=3", "--", "true"])).is_err(), "nothing readable");
        assert!(Steps::parse(&os(&["v1", "--ll-write=/w", "--", "true"])).is_err(), "Landlock rules without --landlock");
        assert!(Steps::parse(&os(&["v1", "--landlock=3", "--ll-read=rel", "--", "true"])).is_err(), "relative path");
        assert!(Steps::parse(&os(&["v1", "--landlock=3", "--ll-read=/", "--sockets=tcp", "--", "true"])).is_err());
        // The Landlock mode runs without bwrap: no mount namespace of its own to mount overlays in,
        // and no user namespace whose capabilities `--own-userns` would drop.
        let mixed = os(&["v1", "--landlock=3", "--ll-read=/", "--overlay", "/a", "/b", "/c", "0", "--own-userns", "--", "true"]);
        assert!(Steps::parse(&mixed).unwrap_err().contains("cannot be combined with --landlock"));
        assert!(Steps::parse(&os(&["v1", "--landlock=3", "--ll-read=/", "--own-userns", "--", "true"])).is_err());
        assert!(Steps::parse(&os(&["v1", "--"])).is_err(), "missing command");
        assert!(Steps::parse(&os(&["v1", "--tmpfs-inodes=0:/tmp", "--own-userns", "--", "true"])).is_err(), "0 is no bound to tmpfs");
        assert!(Steps::parse(&os(&["v1", "--tmpfs-inodes=8:tmp", "--own-userns", "--", "true"])).is_err(), "relative path");
        assert!(Steps::parse(&os(&["v1", "--tmpfs-inodes=8:/tmp", "--", "true"])).is_err(), "a mount without the step that drops its capabilities");
        for bad in ["--devpts-max=0", "--devpts-max=1048576", "--devpts-max=-1", "--devpts-max="] {
            assert!(Steps::parse(&os(&["v1", bad, "--own-userns", "--", "true"])).is_err(), "{bad}");
        }
        assert!(Steps::parse(&os(&["v1", "--devpts-max=256", "--", "true"])).is_err(), "a remount without the step that drops its capabilities");
        assert!(Steps::parse(&os(&["v1", "--devpts-max=256", "--own-userns", "--", "true"])).is_ok());
    }

    #[test]
    fn names_the_first_step_only_linux_has() {
        let macos = Steps { controlling_tty: true, rlimits: vec![cpu()], report_fd: Some(3), ..Steps::default() };
        assert_eq!(macos.linux_only(), None, "what the helper does in front of sandbox-exec");
        let seccomp = Steps { filter: Some(crate::seccomp::Sockets::Inet), ..macos.clone() };
        assert_eq!(seccomp.linux_only(), Some("--filter"));
        let bwrap = Steps { await_init_locks: 1, own_userns: true, net_listen_fd: Some(5), ..macos };
        assert_eq!(bwrap.linux_only(), Some("--await-init-locks"));
        let checked = Steps { writable: vec![Planned::at("/w", (1, 2))], ..Steps::default() };
        assert_eq!(checked.linux_only(), Some("--writable-at"));
    }

    #[test]
    fn marker_names_this_protocol_and_version() {
        assert_eq!(MARKER, format!("\0sandspawn-helper:protocol={PROTOCOL_TAG}:version={VERSION}\0"));
    }
}
