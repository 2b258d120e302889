/**
 * sandspawn: run a command inside the operating system's own sandbox (bubblewrap on Linux,
 * Seatbelt on macOS). The kernel enforces the boundary, so every child and grandchild of the
 * command inherits it. Full contract: README.md.
 */

/** What the command may touch. `danger-full-access` means no sandbox (still owned and killed). */
export type SandboxMode = 'read-only' | 'workspace-write' | 'danger-full-access'

/** A detailed sandbox policy. Paths must be absolute; symlinks are resolved before use. */
export interface SandboxPolicy {
  /** Default `'read-only'`. */
  mode?: SandboxMode
  /** Extra writable directories (workspace-write only). Each must exist. */
  writableRoots?: string[]
  /** Paths kept read-only even inside a writable root (a missing one cannot be created). */
  readOnlyPaths?: string[]
  /** Keep `.git` (and the real git dir of a `gitdir:` file) read-only in every writable root, and
   * forbid creating a missing `.git`. Default `true`. */
  protectGit?: boolean
  /** Files or directories the command can neither read nor list. */
  denyRead?: string[]
  /** Default `false`: no network at all (loopback included on Linux). `true`: the host's network.
   * A `NetworkPolicy`: only the listed hosts, through a per-run proxy (Linux and macOS; see
   * `NetworkPolicy`). */
  network?: boolean | NetworkPolicy
  /** With the network off: `false` (default) blocks connecting to any Unix socket of the host;
   * `true` allows all; a list allows only those paths (macOS only; Linux rejects a list with
   * `ERR_SANDBOX_UNSUPPORTED`). With `network: true` they are allowed when this is left out;
   * `false` or `[]` given refuses them on Linux (no `AF_UNIX` socket), and macOS rejects it, and
   * a list, with `ERR_SANDBOX_UNSUPPORTED`. */
  allowUnixSockets?: boolean | string[]
  /** `writable` (default in workspace-write): host `/tmp` and `$TMPDIR` are writable roots.
   * `private`: an empty `/tmp` of the command's own (Linux only), also its `TMPDIR` unless yours
   * lies in a writable root. `read-only`: default otherwise. */
  tmp?: 'writable' | 'private' | 'read-only'
  /** File names host tools read and act on by themselves, kept read-only where they exist and
   * absent where they do not (what a run creates is moved aside and reported in `hostRisks`), at
   * the top of each writable root and of each repository found in one. Default: 50 names (shell rc
   * files, `.envrc`, git's, agents' and editors' settings, package managers' run-control files,
   * debugger init files, toolchain selectors: see the README's table). `[]` disables it. Each entry is one file name
   * (no `/`, not `.`, `..` or `.git`). */
  protectedNames?: string[]
  /** The report-only tier: names tools run that commands legitimately create and edit
   * (`.pre-commit-config.yaml`, `mise.toml`, `.tool-versions`, ...): never protected, but a run
   * that creates or replaces one in a writable root reports it in `hostRisks`. `[]` disables it. */
  reportedNames?: string[]
  /** `private` (default in workspace-write): the package managers' caches are writable, but every
   * write lands in sandspawn's per-user store (`$SANDSPAWN_TOOL_CACHE_DIR`, else
   * `$XDG_STATE_HOME/sandspawn/tool-caches`, else `~/.local/state/sandspawn/tool-caches`), never in
   * the host's caches, which stay unchanged. Linux: the caches that exist in the command's `HOME`
   * (`~/.npm`, `~/.cache`, `~/.cargo/registry` and `git`, `~/go/pkg/mod`, pnpm's and yarn's stores,
   * `~/.m2/repository`, `~/.gradle/caches`) are covered by a copy-on-write overlay, their content
   * readable. macOS: npm, pnpm, yarn berry, pip, uv, cargo, Go, Maven and Gradle are pointed through
   * their own variables (`npm_config_cache`, `PIP_CACHE_DIR`, `CARGO_HOME`, ...) at directories of the
   * store, the only cache directories the Seatbelt profile lets the command write; each starts as a
   * copy-on-write clone of the host's cache, or the tool reads the host's cache read-only itself
   * (Go, Maven, Gradle). The store is per set of writable roots (cwd, `writableRoots`, the writable
   * temporary directories), each root taken by its path and its directory's identity: what a run
   * writes is seen only by runs with the same roots, never by a run in another directory of the same
   * repository nor by a project later made at the same path. `shared`: one store for every run of the
   * user (the caller's explicit choice). `none` (default otherwise): caches are as
   * read-only as the rest of the host, those of a home a writable root holds (a cwd of `$HOME`)
   * too, as is every such cache no private copy covers. `private`/`shared` outside workspace-write is
   * `ERR_SANDBOX_INVALID_OPTIONS`; in `buildSandboxCommand` and in the Linux Landlock mode they are
   * `ERR_SANDBOX_UNSUPPORTED`, and the default there is `none` (the result's `toolCaches.mode` says
   * so). */
  toolCaches?: 'private' | 'shared' | 'none'
  /** `review` (workspace-write, Linux with bwrap): the cwd and `writableRoots` are copy-on-write for
   * the run: the command sees its own writes, the host none of them until `applyChangeSet`. The
   * writes go to a change set in the state directory (`$SANDSPAWN_CHANGE_SET_DIR`, else
   * `$XDG_STATE_HOME/sandspawn/change-sets`, else `~/.local/state/sandspawn/change-sets`, of the
   * host process), described by `SpawnResult.changeSet`. In review mode `.git`, hooks and protected
   * names are writable for the run: they are judged on the change set and held back at apply.
   * `/tmp` and `$TMPDIR` stay direct (unless inside the workspace). Elsewhere (macOS, the Landlock
   * mode, `buildSandboxCommand`) `ERR_SANDBOX_UNSUPPORTED`; outside workspace-write
   * `ERR_SANDBOX_INVALID_OPTIONS`. Default `direct`. */
  workspace?: 'direct' | 'review'
  /** Review mode: continue this pending change set (the command sees its pending changes). The
   * run's cwd and `writableRoots` must be those of the run that began it. From then on the set is
   * judged as strictly as its strictest run (`protectGit`, the names, `readOnlyPaths`). */
  changeSet?: string
  /** Review mode: how many changes `SpawnResult.changeSet.changes` lists (default 10,000); the
   * counts cover all of them. */
  maxChanges?: number
}

/** One path of a change set. A directory replaced by a file or symlink is two: the directory
 * `deleted`, then the file `added`, at the same `path`. */
export interface Change {
  /** Absolute, on the host; a name's bytes that are not UTF-8 written `\xhh`. The key
   * `readChange`, `diffChange` and `applyChangeSet({ paths })` take. */
  path: string
  kind: 'added' | 'modified' | 'deleted'
  type: 'file' | 'directory' | 'symlink'
  /** Permission bits (the new ones; the host's for a deletion). */
  mode?: number
  /** Files: bytes. */
  size?: number
  /** Symlinks: the target. */
  target?: string
}

/** What a review-mode run wrote, kept pending in the state directory. */
export interface ChangeSet {
  id: string
  counts: { added: number; modified: number; deleted: number }
  /** At most `maxChanges` entries, in path order per root. */
  changes: Change[]
  /** More changes than `changes` lists. */
  truncated: boolean
  /** Planted configuration in the set (a new repository, hooks, a changed git config that runs a
   * program, a protected name, a folder made a git directory): held back by `applyChangeSet`. */
  hostRisks: HostRisk[]
  /** What the set holds, as a token (opaque; compare it only for equality): pass it to
   * `applyChangeSet(id, { revision })` to land only what was shown. It changes with every run that
   * continues the set (one that wrote nothing too) and with any change of its files (a rewrite of
   * the same size and mtime too: the kernel's ctime and inode numbers are part of it). */
  revision: string
}

/** What `applyChangeSet` did. */
export interface ApplyResult {
  /** The paths that landed. */
  applied: string[]
  /** Paths the host changed (or created, or deleted) since the change set began: left as they are. */
  conflicts: Array<{ path: string; reason: string }>
  /** Paths with a host risk: not applied. */
  heldBack: Array<{ path: string; risk: HostRisk }>
  /** The revision of what is still pending (held back, conflicts, paths not selected), for the
   * next apply; `null` when nothing is left and the set is gone. */
  revision: string | null
}

/** Apply a change set to the workspace: every change (or those at or below `paths`), each file
 * written whole (a temporary file renamed into place), modes and symlinks kept (set-id bits
 * dropped), deletions applied, never following a symlink. A path the host changed since the set
 * began is a conflict unless `force`; a path with a host risk is held back unless `force` and a
 * listed path lies at or below the risky entry. What lands leaves the set; a set with nothing left
 * (applied whole, or piece by piece with `paths`) is removed. With `revision`, only the revision
 * shown lands (see `ApplyOptions.revision`); the apply holds the set, so no run continues it
 * meanwhile. */
export declare function applyChangeSet(id: string, options?: ApplyOptions): Promise<ApplyResult>

/** `applyChangeSet`'s options. */
export interface ApplyOptions {
  /** Only what is at or below these paths. */
  paths?: string[]
  /** Land conflicts, and held-back entries named in `paths`. */
  force?: boolean
  /** The revision shown (`ChangeSet.revision`, from `showChangeSet` or a run's result): when the
   * set is no longer that revision (a run continued it meanwhile), nothing lands and the call
   * rejects with `ERR_SANDBOX_CHANGE_SET_CHANGED`: show it again. Without it, whatever the set holds
   * when the apply takes it lands. */
  revision?: string
}
/** Drop a pending change set. */
export declare function discardChangeSet(id: string): Promise<void>
/** A listed path's content in the change set (a symlink: its target, never followed); `null` when
 * the set deletes it or a directory above it. A path the set does not list rejects
 * (`ERR_SANDBOX_INVALID_OPTIONS`), as does one that more than one entry shows alike. A file over
 * 64 MiB (a sparse one at its full size) rejects with `ERR_SANDBOX_UNSUPPORTED`, unread. */
export declare function readChange(id: string, path: string): Promise<Buffer | null>
/** A unified diff of one listed path, from the host's current file to the change set's (`''`:
 * same). Rejects as `readChange` does. The search for the fewest changed lines stops after 1 s:
 * such a diff is valid but not minimal, and its first line (above `---`) says so. */
export declare function diffChange(id: string, path: string): Promise<string>
/** The pending change sets, oldest first; with `cwd`, those whose roots hold it. `counts` is
 * `null` while a run holds the set. */
/** A set that cannot be read is listed with `error` (and `cwd`/`created` null); one whose counts are incomplete with `error` too. */
export declare function listChangeSets(options?: { cwd?: string }): Promise<Array<{ id: string; cwd: string | null; created: number | null; counts: ChangeSet['counts'] | null; error?: string }>>
/** A pending change set described like `SpawnResult.changeSet`, with its `cwd` and `created`. */
export declare function showChangeSet(id: string, options?: { maxChanges?: number }): Promise<ChangeSet & { cwd: string; created: number }>

/** What `toolCaches` did for a run. */
export interface ToolCachesResult {
  mode: 'private' | 'shared' | 'none'
  /** Where this run's cache writes are kept: the directory in the store of the run's writable roots
   * (or the shared one); `null` with `none`. */
  store: string | null
  /** `visible`: the host's cached content is readable (Linux: an overlay below the private writes;
   * macOS: a clone of it, or the tool reads it itself). `hidden`: the store alone (Linux kernels
   * before 5.11, without overlayfs in user namespaces; macOS when a host cache could not be cloned,
   * e.g. on another volume). */
  hostContent: 'visible' | 'hidden' | null
  /** The cache locations covered (`name` is the store's sub-directory, `path` the host's cache). A
   * location is left as it is when a writable root, a read-only path or a `denyRead` entry lies in it
   * or over it, but for the caches of a home a writable root holds (a cwd of `$HOME`), which are the
   * host's own and stay covered. macOS: `variables` are what the command was given to use the store instead. */
  caches: Array<{ name: string; path: string; variables?: Record<string, string> }>
}

/** Something the run left on the host that a host tool could run later, which the sandbox could
 * not prevent (Linux: found by comparing the writable roots before and after the run). */
export interface HostRisk {
  /** The absolute host path. */
  path: string
  /** `repository-created`: a new `.git` below the top of a writable root (or one at the same path
   * that is another directory than before: a directory above it was swapped); `hooks-written`:
   * hook scripts in a new repository's hooks directory; `protected-name-created`: a protected name
   * created (or replaced) below the top of a writable root or repository; `workspace-replaced`: a
   * writable root or its `.git`, or a tool cache a private copy covered inside one, is not the
   * directory it was before the run;
   * `git-directory-created`: a directory became a git directory itself (bare, or `HEAD`,
   * `objects/`, `refs/` written into a folder), which git uses when run there, or (`path` then a
   * symlink the run made, `detail` naming its target) a link to a place where git run would use a
   * repository the run could have planted (one in `/tmp`); `link-to-shared-directory`: a symlink
   * the run made that leads into `/tmp`, the host's `$TMPDIR` or sandspawn's state directory (the
   * tool caches), which any later run can fill in; `permissions-changed` (review mode): a change
   * set's directory mode that adds group or other write without the sticky bit (any local user could
   * replace what is in it after apply), or the workspace root's that takes read, search or write
   * from its owner; or (any run) a directory above sandspawn's state stores this user can no
   * longer search (`chmod 000 ~/.local/state`): every later run is refused until it is fixed; or
   * one inside a writable root, or a root itself, above a `readOnlyPaths` or `denyRead` path or a
   * root's `.git` (`chmod 000 ws/cfg`): every later run with that policy is refused until it is fixed;
   * or (a direct run) a writable root's top or its `.git` the run gave group or other write
   * (`chmod 777 .`): any local user could then create an `.envrc` or a `.mcp.json` there;
   * `scan-incomplete`: the walk after the run stopped at its bound, and `path` names the area it
   * did not examine; or `path` is a symlink the run made whose way could not be judged (through a
   * symlink of `/proc`, such as `/proc/self/cwd`, which leads wherever the process following it is;
   * or longer than 4,096 components); or it could not list a directory the run made unreadable (`path`), or ones
   * it cannot even `lstat` (`path` the nearest directory above them that a path names; at most 24
   * such entries, then one that counts the rest); or, last in a `SpawnResult.hostRisks` that found more than 1,000 entries, the
   * count of those not listed, by kind, in `detail`, and `path` the directory they all lie in (a run
   * lists at most 1,000; what had to stay absent is moved aside all the same). */
  kind:
    | 'repository-created'
    | 'hooks-written'
    | 'protected-name-created'
    | 'workspace-replaced'
    | 'git-directory-created'
    | 'link-to-shared-directory'
    | 'permissions-changed'
    | 'scan-incomplete'
  /** What it could make the host do. */
  detail: string
}

/** One chunk of output, as it arrives. */
export interface OutputChunk {
  stream: 'stdout' | 'stderr'
  data: Buffer
}

export interface SpawnOptions {
  /** Working directory; default `process.cwd()`. Must exist and be a directory. */
  cwd?: string
  /** Default `'read-only'`. A mode string is shorthand for `{ mode }`. */
  sandbox?: SandboxMode | SandboxPolicy
  /** Variables for the child. */
  env?: Record<string, string | undefined>
  /** Default `true`: `env` is merged over `process.env`. `false`: `env` is the whole environment. */
  extendEnv?: boolean
  /** Written to stdin, then stdin is closed. Without it stdin is `/dev/null`. */
  input?: string | Buffer | Uint8Array
  /** Milliseconds from the call, the sandbox's setup included; `0` (default) means none. On expiry
   * the whole tree is killed and `timedOut` is true; one that passes during the setup ends the run
   * with nothing spawned (`pid` 0). */
  timeout?: number
  /** Signal sent to the tree on timeout, abort or `kill()`. Default `'SIGTERM'`. */
  killSignal?: NodeJS.Signals | number
  /** After `killSignal`, anything still alive gets SIGKILL after this many ms. Default `2000`. */
  forceKillAfterDelay?: number
  /** Aborting kills the tree and rejects with an `AbortError` whose `.result` is the partial result. */
  signal?: AbortSignal
  /** Bytes kept of each of stdout, stderr and aggregatedOutput (head and tail halves). Default 1 MiB. */
  maxBuffer?: number
  /** Called for every chunk as it arrives, before truncation. A throwing callback is reported with
   * `process.emitWarning` and does not stop the run. */
  onOutput?: (chunk: OutputChunk) => void
  /** Which Linux sandbox may run (ignored elsewhere). See README "Reaching more Linux hosts". */
  linux?: LinuxOptions
  /** Resource limits; none by default. See README "Resource limits". A limit this host cannot
   * enforce with its documented meaning rejects with `ERR_SANDBOX_UNSUPPORTED` naming it and why. */
  limits?: ResourceLimits
  /**
   * Run the command in a pseudo-terminal that is its controlling tty: job control, Ctrl-C via
   * `write('\x03')`, `/dev/tty`. `true` is `{ cols: 80, rows: 24 }`. `TERM` is `term`, else
   * `env.TERM`, else `'xterm-256color'`. The result's `stdout` holds the terminal stream (`\r\n`,
   * echo, escape sequences) and `stderr` is `''`. Not with `input` (use `startSandboxed` and
   * `write()`); Windows: `ERR_SANDBOX_UNSUPPORTED`.
   */
  pty?: boolean | PtyOptions
}

export interface PtyOptions {
  /** Columns, an integer 1–65535; default 80. */
  cols?: number
  /** Rows, an integer 1–65535; default 24. */
  rows?: number
  /** `TERM` for the command; default `env.TERM`, else `'xterm-256color'`. */
  term?: string
}

/** What `SandboxedProcess.read()` resolves with. */
export interface PtyReadResult {
  /** Terminal output not read before (at most `maxBytes`). */
  data: Buffer
  /** The process has ended and every byte of its output has been read. */
  exited: boolean
  /** Bytes dropped before this read because more than `maxBuffer` was waiting unread. */
  omittedBytes: number
}

/** Each value is a positive integer. Enforced per process by an rlimit that `sandspawn-helper`
 * sets just before it execs the command (so everything the command starts inherits it). */
export interface ResourceLimits {
  /** Bytes of private writable memory (heap, private anonymous and private writable file mappings)
   * per process: `RLIMIT_DATA`, not address space, so Node, the JVM and wasm still start. Not shared
   * memory (`MAP_SHARED` anonymous mappings, memfd, System V segments): for a hard bound run the
   * host process in a memory cgroup (README, "Resource limits"). Linux only. */
  memory?: number
  /** Processes and threads of the command's tree alive at once in the sandbox (bwrap's init not
   * included): `RLIMIT_NPROC` inside the command's own user namespace (Linux >= 5.14). Unsupported when
   * sandspawn runs as root, without a sandbox, and on macOS. At most 4194304. */
  processes?: number
  /** Milliseconds of CPU time per process, rounded up to whole seconds: SIGXCPU at the limit,
   * SIGKILL one second later. */
  cpuTime?: number
  /** Bytes per file written: SIGXFSZ (or `EFBIG` for programs that ignore it). */
  fileSize?: number
  /** Descriptors per process (stdio included). At most 1048576. */
  openFiles?: number
}

/** A limit's name, as in `ResourceLimits`. */
export type LimitName = 'memory' | 'processes' | 'cpuTime' | 'fileSize' | 'openFiles'

/** What enforces a limit: a cgroup v2 around the whole tree, or an rlimit on each process. */
export type LimitMechanism = 'cgroup' | 'rlimit'

/** What the run used. */
export interface ResourceUsage {
  /** CPU time of the process and every descendant that was waited for (`wait4`). */
  userCpuMs: number
  systemCpuMs: number
  /** The largest resident set of any one of those processes. */
  maxRssBytes: number
}

export interface LinuxOptions {
  /** Mechanisms that may run, default `['bwrap']` (or the host-only `SANDSPAWN_LINUX_ALLOW`, e.g.
   * `bwrap,landlock`, when this is not given). `'landlock'` opts into the Landlock mode where no
   * bwrap can run (Landlock ABI >= 3 + seccomp + a supervisor; no PID isolation: see
   * `SandboxDetails.notEnforced` and the README). Policies it cannot express (`denyRead`, a
   * `NetworkPolicy`, `tmp: 'private'`) reject with `ERR_SANDBOX_UNSUPPORTED`. Must not be empty. */
  allow?: Array<'bwrap' | 'landlock'>
  /** Default `true`: when the system bwrap is missing, older than 0.8, fails its flag probe or
   * cannot be executed, run the bwrap shipped with sandspawn (`sandspawn-bwrap` beside the addon,
   * SHA-256-checked before use). Never used when the system bwrap failed because the host blocks
   * user namespaces, nor when `SANDSPAWN_BWRAP` is set. `false`: the system bwrap or nothing. */
  bundledBwrap?: boolean
}

/** Which sandbox mechanism ran (on `SpawnResult`) or would run (on `Capabilities`). */
export interface SandboxDetails {
  /** Linux: the bwrap that ran, the host's (`'system'`) or sandspawn's own (`'bundled'`); `null`
   * when no bwrap ran (danger-full-access, macOS, or unavailable). */
  bwrapSource: 'system' | 'bundled' | null
  /** The Landlock ABI in use (Landlock mode only), else `null`. */
  landlockAbi: number | null
  /** Guarantees the mechanism does not give; empty for bwrap and Seatbelt. Landlock mode:
   * `'pid-isolation'`, `'private-proc'`, `'file-modes'`, `'file-times'`, `'host-kernel-files'` (the
   * host kernel's files every bwrap plan hides, such as tracefs, `/proc/kpageflags` and
   * `/sys/class/zram-control`, are readable by a command running as root), and below ABI 5 `'device-ioctl'`,
   * below ABI 6 `'signal-scope'` (and on a run with the network off but `allowUnixSockets: true`,
   * `'abstract-unix-socket-scope'`; and at every ABI `'abstract-unix-socket-bind'`: a host program
   * connecting to an abstract name the command bound reaches the command). Read-only paths inside writable directories are enforced in
   * every mode (in the Landlock mode by granting the directories that hold one entry by entry:
   * they take no new entries; see the README). */
  notEnforced: string[]
}

/** One rung of the Linux fallback ladder and what happened there. */
export interface SandboxAttempt {
  /** `'bwrap-system'`, `'bwrap-bundled'` or `'landlock'`. */
  mechanism: 'bwrap-system' | 'bwrap-bundled' | 'landlock'
  /** `'ok'` for the rung that runs; else a short id, e.g. `'bwrap-missing'`, `'bwrap-too-old'`,
   * `'apparmor-userns'` (any `Capabilities.cause`), `'disabled'` (`bundledBwrap: false`),
   * `'not-tried-host'` (the host blocks namespaces, so the bundled bwrap would fail too),
   * `'not-tried-override'` (`SANDSPAWN_BWRAP` is set), `'not-tried-shortage'` (an earlier rung
   * failed for lack of processes, memory or open files: retry, no other rung stands in),
   * `'bundled-bwrap-missing'`,
   * `'bundled-bwrap-digest-mismatch'`, `'bundled-bwrap-unsafe'`, `'bundled-bwrap-not-built'`,
   * `'not-allowed'`, `'not-available'`. */
  cause: string
  /** What happened, in words (with the tool's own words where it failed). */
  message: string
}

export interface StartOptions extends SpawnOptions {
  /** `'pipe'` to write stdin with `write()`/`end()`; default `'ignore'` (`input` implies a pipe). */
  stdin?: 'pipe' | 'ignore'
}

/** The network allow-list. The command keeps no network of its own; it reaches the listed hosts
 * through a proxy that sandspawn runs for this run only (HTTP CONNECT, plain HTTP in absolute form,
 * SOCKS5 with host names), named by `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` and friends inside.
 * Names resolve on the host; loopback, private, link-local, CGNAT, multicast and cloud-metadata
 * addresses (IPv4-mapped forms included) and the host's own addresses are refused unless listed in
 * `allowPrivateAddresses`. Linux: the proxy's port is on the sandbox's own loopback; macOS: on the
 * host's loopback, the Seatbelt profile lets the command connect to that port only, and the proxy
 * URLs carry a per-run user name and password without which the proxy answers nobody. Not available
 * in `buildSandboxCommand` plans (`ERR_SANDBOX_UNSUPPORTED`), since the proxy lives in the process
 * that runs the command. */
export interface NetworkPolicy {
  /** `'registry.npmjs.org'`, `'*.github.com'` (strict subdomains, not the apex), `'1.2.3.4'`,
   * `'[2001:db8::1]'`. Case-insensitive, trailing dot ignored. `*`, `*.com`, a wildcard on a public
   * suffix of the Public Suffix List's ICANN section (`*.co.uk`; one of its PRIVATE section, `*.github.io`, is taken and said in notEnforced), non-ASCII names (write
   * punycode), ports and schemes are `ERR_SANDBOX_INVALID_OPTIONS`. `[]` allows nothing but still
   * reports every attempt by host name. `'host.sandspawn.internal'`, listed exactly (never by a
   * wildcard or an `onRequest` answer), reaches the host's own loopback on any port. */
  allowedDomains: string[]
  /** Same syntax; checked first, so it wins over `allowedDomains`. */
  deniedDomains?: string[]
  /** Addresses or CIDR ranges (`'127.0.0.2'`, `'10.0.0.0/8'`, `'[fd00::1]'`) the proxy may connect
   * to although the address guard would refuse them. */
  allowPrivateAddresses?: string[]
  /**
   * Asked, while the request waits, about a host on neither list (never about a `deniedDomains`
   * host, an address literal the address guard refuses, or a name the host answers without a name
   * server (`localhost`, `/etc/hosts`) that has only such addresses). A name is asked about before the host
   * looks it up, so no name the command makes up reaches a name server unless allowed; an allowed
   * name that resolves to a refused address is then refused (`private_address`), one that does not
   * resolve is recorded (`lookup_failed`). `allow` / `deny` answer this request; `allow-run` / `deny-run` every
   * request of the run for that host and port of the same kind, plain HTTP (`'http'`) or a tunnel
   * (`'connect'`, `'socks5'`), each asked about apart (asked once, however many requests come, also
   * concurrent ones). No answer within `requestTimeoutMs`, a throw, a rejection or any other value:
   * denied (and a `SANDSPAWN_CALLBACK_ERROR` warning). At most 4 questions of a run are open at
   * once; more wait their turn, at most 256 (beyond: refused unasked, `question_limit`); a question
   * whose requests all went away before its turn is dropped unasked, and nothing is asked once the
   * run has ended. Every allow is listed in `SpawnResult.networkDecisions`, and at most 256 denials
   * (see `networkDecisionsOmitted`); past 4,096 listed allows, only hosts already allowed are asked.
   * A question about a host, port and kind not yet allowed holds one of the 4,096 places while open,
   * so near the bound one is refused unasked (`question_limit`) if the open ones could fill it.
   * Questions are asked at the run's pace: 64 at once, then 16 a second (each waits its turn within
   * `requestTimeoutMs`), about at most `maxQuestions` distinct hosts, ports and kinds.
   */
  onRequest?: (request: NetworkRequest) => NetworkDecisionKind | Promise<NetworkDecisionKind>
  /** How long a request waits for `onRequest` (ms, default 60000), then it is denied. */
  requestTimeoutMs?: number
  /**
   * Distinct hosts, ports and kinds `onRequest` is asked about per run (a whole number from 1 to
   * 4096, default 256); a request for another is refused unasked, a `question_limit` entry of
   * `SpawnResult.networkDenials`. Hosts asked about before are asked again (at the run's pace).
   */
  maxQuestions?: number
  /**
   * The proxy sandspawn's proxy forwards through: `'http://[user:password@]host:port'` (CONNECT for
   * tunnels and SOCKS5, absolute-form requests for plain HTTP, `Proxy-Authorization: Basic` from
   * the URL's credentials). Default: the host process's `https_proxy`/`HTTPS_PROXY` (tunnels),
   * `http_proxy`/`HTTP_PROXY` (plain HTTP), `ALL_PROXY` for either, and `NO_PROXY` for hosts that go
   * direct. `false`: always direct. It never widens the policy: lists, `onRequest` and the address
   * guard decide first, and the proxy is asked for the address the guard checked, not the name
   * (`CONNECT 203.0.113.7:443`; plain HTTP: that address in the URL, the name in `Host`). Only a name
   * the host's resolver says does not exist goes as a name (the upstream's to resolve); a lookup that
   * timed out or failed is refused (`lookup_failed`). Only `http://` proxies (`https://`, `socks5://`:
   * `ERR_SANDBOX_UNSUPPORTED`, also when they come from the environment).
   */
  upstreamProxy?: string | false
}

/** What `NetworkPolicy.onRequest` is asked. */
export interface NetworkRequest {
  host: string
  port: number
  protocol: 'http' | 'connect' | 'socks5'
  /** The run's command (the argv it was started with). */
  command: string[]
}

export type NetworkDecisionKind = 'allow' | 'deny' | 'allow-run' | 'deny-run'

/** One answer for a host (`SpawnResult.networkDecisions`). */
export interface NetworkDecision {
  host: string
  port: number
  decision: NetworkDecisionKind
  /** `callback`: `onRequest` answered; `timeout`: it did not within `requestTimeoutMs`; `error`: it
   * threw, rejected or answered no decision. `timeout` and `error` are always `deny`. */
  source: 'callback' | 'timeout' | 'error'
}

/** One kind of request the network proxy refused, with how often. */
export interface NetworkDenial {
  host: string
  port: number
  /** `http`: plain HTTP request; `connect`: HTTP CONNECT tunnel; `socks5`: SOCKS5 CONNECT. */
  via: 'http' | 'connect' | 'socks5'
  /** `not_allowed`: not in `allowedDomains`; `denied`: matches `deniedDomains`; `private_address`:
   * is or resolves only to a refused address; `malformed`: no valid host and port;
   * `connection_limit`: the run already held its 256 proxy connections (open tunnels included);
   * `unauthenticated` (macOS): the request lacked the run's proxy credential, the user name and
   * password in the proxy URLs the command was given (a tool that drops them, or another local
   * process); `declined`: on neither list, and `onRequest` answered deny (or failed, or timed out);
   * `lookup_failed`: the host's lookup of the name timed out or failed, so its addresses could not be
   * checked (also: a name only `onRequest` allowed does not exist); nothing was dialled;
   * `method_refused`: a plain-HTTP `TRACE` or `TRACK`, never forwarded (a proxy on the way would echo
   * the request, the upstream proxy's credential included); `question_limit`: on neither list, and
   * 256 requests of the run for other hosts were already waiting for `onRequest` (or it had allowed
   * 4,096, none for this host and port): refused unasked; `tiny_chunks`: a plain-HTTP chunked body
   * (sent, or an allowed server's answer) cut off once the run had spent its allowance of chunks
   * under 1 KiB (100,000, plus 64 a request), or of chunk framing (chunk-size lines, whitespace,
   * extensions: some 6 MB), which cost the host's proxy far more than they cost the sender; a
   * connection (the command's, or an allowed server's answer) that sent such framing past the allowance is closed, with this reason. The command's own faults (`malformed`, `connection_limit`, `unauthenticated`,
   * `tiny_chunks`) never make a run `network_denied`. */
  reason: 'not_allowed' | 'denied' | 'private_address' | 'malformed' | 'connection_limit' | 'unauthenticated' | 'declined' | 'lookup_failed' | 'method_refused' | 'question_limit' | 'tiny_chunks'
  count: number
}

export type DenialReason =
  | 'operation_not_permitted'
  | 'permission_denied'
  | 'read_only_file_system'
  | 'network_unreachable'
  | 'policy_denied'
  | 'sigsys'
  | 'failed_to_write_file'
  /** The network allow-list's proxy refused a host (kind `network`, `host` names it). */
  | 'network_denied'

/** A structured verdict that the sandbox blocked something. */
export interface SandboxDenial {
  reason: DenialReason
  kind: 'filesystem' | 'network' | 'process'
  /**
   * The denied path when the output names one (or the policy implies it, e.g. `<root>/.git/index`
   * for git's `could not write index`). Always absolute: a relative name in a message is resolved
   * against the result's `cwd`, so `result.denial` deep-equals `classifySandboxDenial(result)`.
   */
  path: string | null
  /** The matching text (at most 512 characters). */
  snippet: string
  /** The refused host for `network_denied`, else null. */
  host: string | null
  /** `network_denied` only: why the proxy refused it (`NetworkDenial.reason`). */
  networkReason?: NetworkDenial['reason']
  /** `network_denied` only: what would allow it, in words naming the option and the CLI flag. */
  fix?: string
}

/** 'landlock': Linux without user namespaces, opt-in (`linux.allow`), Landlock + seccomp + a supervisor; see `sandboxDetails.notEnforced`. */
export type SandboxType = 'none' | 'bwrap' | 'seatbelt' | 'landlock'

export interface SpawnResult {
  /** The argv as given. */
  command: string[]
  /** The resolved working directory. */
  cwd: string
  /** The pid of the process spawned on the host (bwrap under the Linux sandbox); `0` when nothing
   * was spawned (the timeout passed, or the run was aborted, while the sandbox was set up). */
  pid: number
  /** `null` when the command died by a signal. */
  exitCode: number | null
  /** E.g. `'SIGKILL'`. Under bwrap, exit codes 129–159 are reported as the signal 128 + n. */
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
  /** stdout and stderr interleaved in the order they were read: exact within each stream; across
   * the two pipes only as good as the kernel's delivery (close writes can swap). */
  aggregatedOutput: string
  /** Some output was omitted (see `maxBuffer`). */
  truncated: boolean
  omittedBytes: { stdout: number; stderr: number }
  timedOut: boolean
  /** From the call (the sandbox's setup included) to the end. */
  durationMs: number
  /** The sandbox that actually applied. */
  sandboxType: SandboxType
  /** `isLikelySandboxDenied(sandboxType, result)`. */
  sandboxDenied: boolean
  /**
   * `classifySandboxDenial(result)` (deep-equal). A timed-out run is judged by what it printed
   * before the kill: evidence of a lookup the policy blocked gives `network_unreachable`; a silent
   * timeout is `null`.
   */
  denial: SandboxDenial | null
  /** Which mechanism ran, e.g. `{ bwrapSource: 'bundled', landlockAbi: null, notEnforced: [] }`. */
  sandboxDetails: SandboxDetails
  /** Which private tool caches applied (see `SandboxPolicy.toolCaches`). */
  toolCaches: ToolCachesResult
  /** Planted configuration the sandbox could not prevent, found after the run; `[]` when none
   * (always `[]` on macOS, where Seatbelt denies creating it, and without a sandbox). At most 1,000
   * entries in path order, then one `scan-incomplete` entry that counts the rest. */
  hostRisks: HostRisk[]
  /** `workspace: 'review'`: the change set the run's writes went to; `null` otherwise. */
  changeSet: ChangeSet | null
  /** What the network allow-list's proxy refused, aggregated per host, port, via and reason
   * (always present; `[]` when `network` is a boolean). At most 256 entries, in the order first
   * seen: see `networkDenialsOmitted`. */
  networkDenials: NetworkDenial[]
  /** Refused requests `networkDenials` leaves out (of kinds past its 256 entries); `0` when none. */
  networkDenialsOmitted: number
  /** The answers `network.onRequest` gave (or timed out, or failed to give), in order; `[]`
   * without it. Every allow (`allow`, `allow-run`) is listed; denials at most 256. */
  networkDecisions: NetworkDecision[]
  /** Decisions `networkDecisions` leaves out: denials past its 256, and, past 4,096 listed
   * allows, repeated allows for a host, port and kind already listed; `0` when none. */
  networkDecisionsOmitted: number
  /** Of `networkDecisionsOmitted`, the repeated allows (the rest are denials): each for a host,
   * port and kind `networkDecisions` already lists an allow for; an allow for any other is never
   * left out (its question is refused unasked instead). */
  networkRepeatedAllowsOmitted: number
  /** pty runs only: the terminal's size at the end. */
  pty?: { cols: number; rows: number }
  /** Each requested limit and what enforced it, e.g. `{ cpuTime: 'rlimit' }`; `{}` without limits. */
  appliedLimits: Partial<Record<LimitName, LimitMechanism>>
  /** The limit that ended the run, from kernel evidence only: the command died of SIGXCPU
   * (`'cpuTime'`) or SIGXFSZ (`'fileSize'`) while that limit was set. An rlimit on memory or
   * processes makes allocations or forks fail without such evidence, so it stays `null` then. */
  limitExceeded: 'memory' | 'processes' | 'cpuTime' | 'fileSize' | null
  /** Always present, also without limits. */
  resourceUsage: ResourceUsage
}

/** Runs `command` (an argv; no shell) in the sandbox and resolves for every way it ended. Rejects
 * only with `SandboxError` (setup, not found, invalid options) or `AbortError`. */
export declare function spawnSandboxed(command: readonly string[], options?: SpawnOptions): Promise<SpawnResult>

/** A running sandboxed command. */
export declare class SandboxedProcess {
  private constructor()
  /** The host pid. */
  readonly pid: number
  /** Write to stdin (needs `stdin: 'pipe'`), or to the terminal (pty: raw bytes, `'\x03'` is
   * Ctrl-C). Rejects with `EPIPE` once stdin is closed. Resolves once the bytes were taken.
   * Writes and `end()` happen in call order, awaited or not; `data` is copied at the call. */
  write(data: string | Buffer | Uint8Array): Promise<void>
  /** Close stdin. With a pty: send end-of-file (Ctrl-D), which ends input for programs in cooked
   * mode; the terminal stays open. */
  end(): void
  /** Signal the whole tree (default `killSignal`), SIGKILL after `forceKillAfterDelay`. */
  kill(signal?: NodeJS.Signals): void
  /** Settles like `spawnSandboxed`; may be called more than once. With a pty it settles only
   * after all terminal output was read and the tree is gone. */
  wait(): Promise<SpawnResult>
  /** pty only: set the terminal's size (integers 1–65535); the foreground job gets SIGWINCH.
   * Without a pty throws `ERR_SANDBOX_INVALID_OPTIONS`; after the end it does nothing. */
  resize(cols: number, rows: number): void
  /** pty only: called with each chunk of terminal output (raw bytes). The terminal's output from
   * its first byte reaches the first listener: what arrived before anyone subscribed (typically
   * while `startSandboxed` was resolving) is kept, up to `maxBuffer` bytes (the oldest dropped
   * beyond that), and handed to the first listener in one chunk right after `onData` returns,
   * before anything newer. Later listeners get what arrives after they subscribed. */
  onData(listener: (data: Buffer) => void): { dispose(): void }
  /** pty only: stop reading the terminal (real backpressure: the command blocks once the
   * terminal's buffer is full). Once the command has exited its remaining output is read anyway. */
  pause(): void
  /** pty only: read the terminal again. */
  resume(): void
  /** pty only: output not returned by an earlier `read()` (up to `maxBuffer` bytes are kept).
   * Resolves when there is some and `waitMs` (default 0) has passed, or when the process has
   * ended; `maxBytes` caps one answer. */
  read(options?: { waitMs?: number; maxBytes?: number }): Promise<PtyReadResult>
}

/** Like `spawnSandboxed`, but resolves as soon as the command runs. Rejects also when the command
 * never started because its `timeout` passed during the setup (`ERR_SANDBOX_SETUP_FAILED`, the
 * run's result as `.result`). */
export declare function startSandboxed(command: readonly string[], options?: StartOptions): Promise<SandboxedProcess>

/** What `isLikelySandboxDenied` needs of a result. */
export interface CommandOutput {
  exitCode: number | null
  signal?: string | null
  stdout?: string
  stderr?: string
  aggregatedOutput?: string
}

/** Codex-compatible keyword heuristic: did the sandbox probably cause this failure? */
export declare function isLikelySandboxDenied(sandboxType: SandboxType, output: CommandOutput): boolean

/** A structured, policy-aware verdict; `null` when the output does not look like a denial. */
export declare function classifySandboxDenial(
  result: CommandOutput & { sandboxType: SandboxType },
  policy?: SandboxMode | SandboxPolicy,
): SandboxDenial | null

/** What the sandboxed attempt changed in its writable roots (see `runWithEscalation`). */
export interface AttemptChanges {
  /** Absolute paths of the entries whose ctime is at or after the attempt's start (within 100 ms
   * before it): the command line's own files first, then a bounded walk of the cwd and
   * `writableRoots` (not `/tmp` and `$TMPDIR` unless the cwd is one), shallow entries first. A
   * directory is listed when an entry was added, removed or renamed in it. */
  paths: string[]
  /** The walk stopped at a bound (32 levels, 100,000 entries looked at, 1,000 paths): there may be more. */
  truncated: boolean
  /** The entries of `paths` that the command line names (an argv entry that is a file in a
   * writable root: `sh build.sh`): the retry runs the changed file, not the one first started. */
  commandFiles: string[]
}

export interface ApprovalRequest {
  command: string[]
  result: SpawnResult
  denial: SandboxDenial
  /** What the attempt changed: an approved retry runs, as the user, whatever it left there. */
  changes: AttemptChanges
}

export interface EscalationOptions extends SpawnOptions {
  /** Asked only after a classified sandbox denial; `true` reruns without the sandbox. A throw or
   * rejection is a refusal. */
  approve: (request: ApprovalRequest) => boolean | Promise<boolean>
}

/** Runs sandboxed; on a classified denial asks `approve` (telling it what the attempt changed:
 * `request.changes`, found by a bounded walk done only then), and if approved runs once more with
 * `danger-full-access`. Never escalates ordinary failures, timeouts, aborts or `denyRead` policies.
 * An escalated result's `hostRisks` still lists what the sandboxed attempt left on the host, and in
 * review mode its `changeSet` is the sandboxed attempt's (still pending: the retry wrote the
 * workspace directly). */
export declare function runWithEscalation(
  command: readonly string[],
  options: EscalationOptions,
): Promise<SpawnResult & { escalated: boolean }>

/** @deprecated Plans no longer need extra descriptors (`LaunchPlan.extraFds` is always `[]`). */
export interface ExtraFd {
  fd: number
  purpose: 'seccomp' | 'data'
  data: Buffer
}

/**
 * A self-contained launch plan: `spawn(plan.program, plan.args, { cwd: plan.cwd, env: plan.env })`
 * with ordinary stdio (child_process, execa, node-pty) enforces what `spawnSandboxed` would. On
 * Linux, `args` end with `sandspawn-helper v1 [...] -- <command>`: bwrap runs the helper (shipped
 * next to the addon) inside the sandbox, which applies seccomp and then execs the command.
 */
export interface LaunchPlan {
  /** Absolute path of the program to run. */
  program: string
  args: string[]
  env: Record<string, string>
  cwd: string
  sandboxType: SandboxType
  /** The Seatbelt SBPL profile on darwin, else null. */
  profile: string | null
  /** `argv[0]` to use for `program`. */
  argv0: string
  /** Always `[]`: kept for code written against plans that needed extra descriptors. */
  extraFds: ExtraFd[]
  /** What the policy leaves unguarded, the lines a run's `sandboxDetails.notEnforced` would hold
   * (a repository past the walk's bound, hard-linked configuration, ...): the spawner that runs
   * the plan gets no result, so check them here. */
  notEnforced: string[]
}

/** Builds, without running anything, what `spawnSandboxed` would run. On Linux a bwrap plan: a
 * request that rules bwrap out (`linux.allow: ['landlock']`, `SANDSPAWN_LINUX_ALLOW=landlock`)
 * rejects with `ERR_SANDBOX_UNSUPPORTED` (the Landlock mode needs spawnSandboxed's supervisor). A
 * `timeout` (other than 0) or a `signal` rejects with `ERR_SANDBOX_UNSUPPORTED` too: a plan has no
 * timer and hears no abort; give them to the spawner that runs it. `input`, `onOutput`,
 * `maxBuffer`, `killSignal` and `forceKillAfterDelay` are the spawner's business and not in the plan. */
export declare function buildSandboxCommand(
  command: readonly string[],
  options?: SpawnOptions & { platform?: 'linux' | 'darwin' },
): LaunchPlan

/** The bwrap binary sandspawn found and probed (Linux). */
export interface BwrapInfo {
  /** Absolute path of the binary. */
  path: string
  /** `bwrap --version` without the `bubblewrap ` prefix, e.g. `'0.8.0'`; null when unknown. */
  version: string | null
  /** This bwrap understands `--disable-userns` (0.8 and later). */
  disableUserns: boolean
  /** `/proc` cannot be mounted here (a masked `/proc` in a container). */
  procUnmountable: boolean
}

export interface Capabilities {
  /** `'linux'`, `'darwin'`, or Node's name of another platform (e.g. `'win32'`). */
  platform: 'linux' | 'darwin' | (string & {})
  sandboxType: SandboxType
  available: boolean
  /** What is wrong, in words (when unavailable). */
  reason: string | null
  /** How to fix it (when unavailable). */
  fix: string | null
  /** A short id of the cause, e.g. `'bwrap-missing'`, `'apparmor-userns'`; null when available. */
  cause: string | null
  /** The bwrap that was found and probed, also when its self-test failed; null elsewhere. */
  bwrap: BwrapInfo | null
  /** What the sandbox tool printed when its self-test failed; null otherwise. */
  stderr: string | null
  /** Which mechanism a run would use (`bwrapSource: null` when none can). */
  sandboxDetails: SandboxDetails
  /** Linux: the rungs of the fallback ladder tried, in order; when available, the last one runs. */
  attempts: SandboxAttempt[]
  /** When unavailable: every fix, least invasive first. */
  fixes: string[]
  /** Per limit: the mechanism a sandboxed run here would use, or `null` and why it would be refused. */
  limits: Record<LimitName, { mechanism: LimitMechanism | null; reason: string | null }>
  /** Whether `workspace: 'review'` can run here, and if not why. */
  review: { available: boolean; reason?: string }
}

/** What sandbox this host can run (for these `linux` options; without `linux.allow`,
 * `SANDSPAWN_LINUX_ALLOW` applies as it does to a run), or why not and how to fix it.
 * The probe is cached per process, bwrap binary and PATH: a working sandbox for the process's
 * life, a failure for 5 s, a shortage that passes (`cause: 'resource-shortage'`: no processes,
 * memory or open files to spare, e.g. another run holds this user's processes) not at all. */
export declare function sandboxCapabilities(options?: { linux?: LinuxOptions }): Promise<Capabilities>

/** The private tool cache store of an environment (`SANDSPAWN_TOOL_CACHE_DIR`, else
 * `$XDG_STATE_HOME/sandspawn/tool-caches`, else `$HOME/.local/state/sandspawn/tool-caches`). */
export interface ToolCacheStore {
  /** `null` when neither variable nor `HOME` names an absolute directory. */
  path: string | null
  /** Disk space its files take (after `clean`: what is left, 0 when it was removed). */
  bytes: number
  /** Workspaces with caches of their own in it. */
  workspaces: number
  /** `clean` removed it. */
  removed: boolean
}

/** Measure the store, or with `clean: true` remove it first (do this when no run uses it: a run
 * that holds a cache while it is removed loses what it writes). A directory that does not look like
 * a store is refused with `ERR_SANDBOX_INVALID_OPTIONS` and nothing is removed. */
export declare function toolCacheStore(options?: {
  clean?: boolean
  /** The environment whose store it is, as a run's `env` (default `process.env`). */
  env?: Record<string, string | undefined>
}): Promise<ToolCacheStore>

export type SandboxErrorCode =
  | 'ERR_SANDBOX_INVALID_OPTIONS'
  | 'ERR_SANDBOX_UNAVAILABLE'
  | 'ERR_SANDBOX_SETUP_FAILED'
  | 'ERR_SANDBOX_UNSUPPORTED'
  /** `applyChangeSet(id, { revision })` of a set that is no longer that revision. */
  | 'ERR_SANDBOX_CHANGE_SET_CHANGED'
  | 'ENOENT'
  | 'EACCES'
  | 'EPIPE'

/** The error sandspawn rejects with. */
export declare class SandboxError extends Error {
  readonly name: 'SandboxError'
  readonly code: SandboxErrorCode
  /** What the sandbox tool printed, when setup failed. */
  readonly stderr?: string
  readonly result?: SpawnResult
  /** `ERR_SANDBOX_UNAVAILABLE` on Linux: each sandbox mechanism tried, in order, and why it could not run. */
  readonly attempts?: SandboxAttempt[]
  /** `ERR_SANDBOX_UNAVAILABLE` on Linux: how to fix it, least invasive first. */
  readonly fixes?: string[]
}

/** Rejection for an aborted run; `.result` holds the partial result when the command had started. */
export declare class AbortError extends Error {
  readonly name: 'AbortError'
  readonly code: 'ABORT_ERR'
  readonly result?: SpawnResult
}
