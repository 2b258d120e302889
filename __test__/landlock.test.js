// The Landlock mode, tested where it is meant to run: inside an outer `bwrap --disable-userns`,
// which blocks user namespaces for everything below it (the inner bwrap fails with ENOSPC), as
// hosts with AppArmor's or Docker's restriction do. Needs Landlock ABI >= 3 on this kernel.
const { test } = require('node:test')
const assert = require('node:assert')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const root = path.join(__dirname, '..')
// The outer sandbox is the bwrap sandspawn runs here (a fresh machine has no system one).
const OUTER = require('./fixtures/ladder-bwrap').ladderBwrap()
const noOuter = OUTER.path === null && OUTER.reason
const inner = path.join(__dirname, 'fixtures', 'landlock-inner.js')

// Root in a container has Docker's default capabilities (not CAP_SYS_ADMIN), in the outer sandbox
// as in `docker run`.
const DOCKER_CAPS = ['CHOWN', 'DAC_OVERRIDE', 'FSETID', 'FOWNER', 'MKNOD', 'NET_RAW', 'SETGID', 'SETUID', 'SETFCAP', 'SETPCAP', 'NET_BIND_SERVICE', 'SYS_CHROOT', 'KILL', 'AUDIT_WRITE']
// The unprivileged user of these tests (see scripts/test.js unprivilegedPass).
const UID = 64125
const isRoot = process.getuid() === 0
const otherUser = require('./fixtures/other-user')
const noUser = noOuter || (isRoot ? otherUser.cannotRunAs(UID) ?? outerCannotRunAs(UID) : 'needs root to switch to another user')

/** The outer bwrap as `user` runs it: the bundled one from the copy of the package it can read. */
function outerBwrap(user) {
  if (!user || OUTER.source !== 'bundled') return OUTER.path
  return path.join(otherUser.stagedCheckout(), path.basename(OUTER.path))
}

/** Why `uid` cannot start the outer sandbox here, or false. */
function outerCannotRunAs(uid) {
  try {
    execFileSync('setpriv', [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', outerBwrap(uid), '--unshare-user', '--disable-userns', '--ro-bind', '/', '/', 'true'], { stdio: 'pipe' })
    return false
  } catch (e) {
    return `uid ${uid} cannot start the outer bwrap ${outerBwrap(uid)}: ${String(e.stderr || e.message).trim()}`
  }
}

/** A workspace (with a `.git`, a read-only candidate `ro.txt` and `src/`, unless `fresh`) and a
 * directory outside it, both in a fresh directory in `base` (the host's temporary directory, a
 * writable root itself with the default `tmp`). */
function setup(fresh, base = os.tmpdir()) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(base, 'sandspawn-ll-')))
  const ws = path.join(dir, 'ws')
  const outside = path.join(dir, 'outside')
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true })
  if (!fresh) {
    fs.mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true })
    fs.writeFileSync(path.join(ws, '.git', 'config'), '[core]\n\tbare = false\n')
    fs.writeFileSync(path.join(ws, 'ro.txt'), 'keep\n')
  }
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, 'ro'), 'keep')
  return { dir, ws, outside }
}

/**
 * Runs scenario `name` of fixtures/landlock-inner.js inside an outer bwrap that blocks user
 * namespaces, as root with Docker's default capabilities, or (`user`) as that uid, which runs a copy
 * of the package it can read, with a home of its own.
 */
function scenario(name, { env = {}, user = null, fresh = false, base, timeout = 240_000 } = {}) {
  const { dir, ws, outside } = setup(fresh, base)
  let script = inner
  let home = null
  const caps = user ? [] : ['--cap-drop', 'ALL', ...DOCKER_CAPS.flatMap((c) => ['--cap-add', `CAP_${c}`])]
  const tmp = os.tmpdir()
  // The state directory (where runs make their own directories) in no run's writable root, and
  // writable in the outer sandbox, as a home's is.
  const state = fs.mkdtempSync('/var/tmp/sandspawn-ll-state-')
  const outer = ['--die-with-parent', '--unshare-user', '--unshare-pid', '--disable-userns', ...caps, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', tmp, tmp, '--bind', dir, dir, '--bind', state, state]
  if (user) {
    script = path.join(otherUser.stagedCheckout(), '__test__', 'fixtures', 'landlock-inner.js')
    home = fs.mkdtempSync('/var/tmp/sandspawn-ll-home-')
    execFileSync('chown', ['-R', `${user}:${user}`, dir, home, state])
    outer.push('--bind', home, home)
  }
  const node = [process.execPath, script, ws, outside, '-', name]
  const [cmd, args] = user ? ['setpriv', [`--reuid=${user}`, `--regid=${user}`, '--clear-groups', outerBwrap(user), ...outer, '--', ...node]] : [OUTER.path, [...outer, '--', ...node]]
  try {
    const out = execFileSync(cmd, args, {
      env: { ...process.env, ...(home ? { HOME: home } : {}), XDG_STATE_HOME: state, ...env },
      encoding: 'utf8',
      timeout,
      // The outer sandbox is a PID namespace whose init dies with bwrap (--die-with-parent below):
      // SIGKILL at the timeout ends everything the scenario started.
      killSignal: 'SIGKILL',
    })
    return { result: JSON.parse(out.trim().split('\n').pop()), outside, ws, dir }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
    fs.rmSync(state, { recursive: true, force: true })
    if (home) fs.rmSync(home, { recursive: true, force: true })
  }
}

test('without the opt-in, runs fail closed where user namespaces are blocked', { skip: noOuter }, () => {
  const { result } = scenario('refusedByDefault')
  assert.strictEqual(result.code, 'ERR_SANDBOX_UNAVAILABLE', JSON.stringify(result))
  assert.ok(result.causes.includes('landlock:not-allowed'), result.causes.join())
  assert.ok(result.fixes.some((f) => f.includes("allow: ['bwrap', 'landlock']")), result.fixes.join('\n'))
})

test('writes: inside the roots succeed, outside fail, .git stays protected, SANDSPAWN_LINUX_ALLOW is not passed in', { skip: noOuter }, () => {
  const { result } = scenario('writes', { env: { SANDSPAWN_LINUX_ALLOW: 'bwrap,landlock' } })
  assert.strictEqual(result.type, 'landlock')
  assert.ok(result.details.landlockAbi >= 3)
  assert.ok(result.details.notEnforced.includes('pid-isolation'))
  // Found by an attacker's review: the host kernel's files every bwrap plan hides (tracefs, the
  // page map, zram-control) are read in this mode, and notEnforced did not say so.
  assert.ok(result.details.notEnforced.includes('host-kernel-files'), result.details.notEnforced.join())
  assert.strictEqual(result.stdout, 'in\ndenied-outside\ndenied-git\ndenied-hook\ndenied-top\ndenied-truncate\n0\n')
  // No mount namespace for the overlays: the default private caches are unavailable, and said so.
  assert.strictEqual(result.toolCaches, 'none')
})

test('a host program connecting to an abstract name the command bound reaches it, and notEnforced says so (abstract-unix-socket-bind)', { skip: noOuter }, () => {
  const { result } = scenario('abstractInbound')
  assert.strictEqual(result.type, 'landlock', JSON.stringify(result))
  // Found by an attacker's review (land26): bwrap's network namespace keeps such a name from the
  // host; Landlock scopes only the other way, and nothing said so.
  assert.strictEqual(result.got, 'hello-from-command', JSON.stringify(result))
  assert.ok(result.notEnforced.includes('abstract-unix-socket-bind'), result.notEnforced.join())
})

test('TCP, UDP and Unix sockets cannot be created; socketpair works', { skip: noOuter }, () => {
  const { result } = scenario('sockets')
  assert.strictEqual(result.stdout, 'tcp:1 udp:1 unix:1 pair:ok', result.stderr)
})

test('the command cannot signal processes outside the run', { skip: noOuter }, () => {
  assert.strictEqual(scenario('killOutside').result.stdout, 'denied')
})

test("sandspawn's stores in a writable root stay read-only (found by an attacker's review: a pending change set was rewritten)", { skip: noOuter }, () => {
  const { result } = scenario('storeKept')
  // Nor renamed away with the directories above them (found by an attacker's review of the bwrap plan).
  assert.deepStrictEqual(result, { type: 'landlock', stdout: 'denied\nkept state/change-sets\nkept state\nfree\n', meta: '{}' })
})

// Found by an attacker's review: with the cwd at $HOME, the run wrote the host's ~/.npm/_npx and
// ~/.cache (the default private caches are unavailable here), with no host risk and nothing in
// notEnforced. Kept read-only as the home's other paths are; npm gets a cache of the run's own.
test("a home's tool caches stay the host's when the cwd is the home", { skip: noOuter }, () => {
  const { result, ws } = scenario('homeCaches', { fresh: true })
  assert.strictEqual(result.type, 'landlock')
  assert.strictEqual(result.toolCaches, 'none')
  assert.deepStrictEqual(result.landed, [], JSON.stringify(result))
  const lines = result.stdout.trim().split('\n')
  assert.deepStrictEqual([lines.length, lines[lines.length - 1]], [2, 'free'], result.stdout)
  assert.ok(!lines[0].startsWith(ws), `npm's cache is the run's own: ${lines[0]}`)
})

// Found by an attacker's review of that fix: a cache that did not exist yet was created on the
// host, unreported. The tools may create it; what the run made there is moved aside after it.
test("a home's missing tool caches are moved aside after the run when the cwd is the home", { skip: noOuter }, () => {
  const { result } = scenario('missingHomeCaches', { fresh: true })
  assert.deepStrictEqual(result, { type: 'landlock', stdout: 'wrote .npm/_npx/abc/node_modules/p\nwrote .cache/pip/p\n', landed: [], risks: ['.cache', '.npm'] })
})

// Found by an attacker's review: the run's own directory (npm's cache, TMPDIR) was made in the
// shared /tmp, which every other run may write, and a concurrent run planted a package in its cache.
test("the run's own directory is out of every other run's reach, even one whose writable root holds the state directory", { skip: noOuter }, () => {
  // Outside /tmp: a state directory there is not used for runs (`state_dir::host_path`, crossb39).
  const { result } = scenario('runDirPrivate', { base: '/var/tmp' })
  assert.deepStrictEqual(result, { inRuns: true, b: 'denied\n', a: 'clean\n', types: ['landlock', 'landlock'] })
})

test('setsid daemons are killed when the command ends', { skip: noOuter }, () => {
  const { result } = scenario('daemonKilled')
  assert.deepStrictEqual(result, { exitCode: 7, alive: [] })
})

// Found by an attacker's review: the helper set the run's limits on itself before it became the
// supervisor, so `openFiles: 6` left the supervisor no descriptor for the /proc reads that end the
// tree; the command's grandchildren outlived the run and kept writing into the workspace.
test('a small openFiles limit does not keep the tree from being ended', { skip: noOuter }, () => {
  const { result } = scenario('smallLimitTreeEnded')
  assert.deepStrictEqual(result, { exitCode: 0, stdout: 'started\n', wrote: true, writing: false, alive: [] })
})

// The same review: cpuTime (SIGXCPU), memory and fileSize bounded the supervisor as well.
test('the limits bound the command, never its supervisor', { skip: noOuter }, () => {
  const { result } = scenario('limitsOnCommandOnly')
  // RLIMIT_CORE: the 1 byte of every Linux run (no piped core; kern33), not the limits' 0.
  const asked = { 'Max cpu time': '20 21', 'Max file size': '1000000 1000000', 'Max data size': '1073741824 1073741824', 'Max open files': '64 64', 'Max core file size': '1 1' }
  assert.deepStrictEqual(result.command, asked, result.stderr)
  assert.deepStrictEqual(result.supervisor, result.host, result.stderr)
})

test('a timeout kills the whole tree', { skip: noOuter }, () => {
  assert.deepStrictEqual(scenario('timeoutKillsTree').result, { timedOut: true, signal: 'SIGTERM' })
})

// Found by an attacker's review: pid hoppers (fork, parent exits at once) outran the supervisor, which
// reaped one process per walk of /proc, so the run never settled and its zombies filled the host's
// pid space. The hoppers' own bound (4 chains of at most 1500 processes each) keeps a supervisor
// that cannot end them from harming the host; the outer sandbox dies at the scenario's timeout.
test('pid hoppers do not outlive a timeout: the run settles and leaves no process', { skip: noOuter || (!hasCc() && 'no C compiler to build the attack') }, (t) => {
  const bin = fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-ll-attacks-'))
  t.after(() => fs.rmSync(bin, { recursive: true, force: true }))
  execFileSync('cc', ['-O1', '-o', path.join(bin, 'hopper'), path.join(__dirname, 'security', 'attacks', 'hopper.c')])
  const { result } = scenario('hopperTimeout', { env: { SANDSPAWN_ATTACKS: bin }, timeout: 120_000 })
  assert.deepStrictEqual(result, { timedOut: true, stdout: 'started\n', settled: true, alive: [] })
})

// Found by an attacker's review: a process whose main thread ended while another thread lives shows
// 'Z' in /proc/<pid>/stat, so the supervisor took it for gone: it was never stopped nor killed, the
// supervisor waited for it forever, a timeout, kill('SIGKILL') or the host's death never ended the
// run, and its thread kept writing into the workspace. The attack's threads stop by themselves
// after 60 s; the outer sandbox dies at the scenario's timeout.
test('processes whose main thread ended are ended by a timeout, a kill and the host\'s death', { skip: noOuter || (!hasCc() && 'no C compiler to build the attack') }, (t) => {
  const bin = fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-ll-attacks-'))
  t.after(() => fs.rmSync(bin, { recursive: true, force: true }))
  execFileSync('cc', ['-O1', '-pthread', '-o', path.join(bin, 'leader-exits'), path.join(__dirname, 'security', 'attacks', 'leader-exits.c')])
  const { result } = scenario('leaderExited', { env: { SANDSPAWN_ATTACKS: bin }, timeout: 150_000 })
  assert.deepStrictEqual(result, {
    timeout: { timedOut: true, stdout: 'started\n', settled: true, wrote: true, writing: false },
    kill: { signal: 'SIGKILL', settled: true, wrote: true, writing: false },
    hostDied: { wrote: true, writing: false, left: [] },
  })
})

// Found by an attacker's review: a host SIGKILLed during a workspace-write run left the run's own
// directory in $TMPDIR for good (48 MB in the review); only the run's end removed it.
test("a dead host's sandspawn-run directory is removed at a later run's start, a live run's is not", { skip: noOuter }, () => {
  const { result } = scenario('scratchAfterKill')
  assert.deepStrictEqual(result, { leftByKill: 1, lockFilesLeft: 1, swept: true, live: 'own-kept', after: ['sandspawn-run-link', 'sandspawn-run-young'], target: ['keep'] })
})

test("the user's other terminals, new ptys and the host's devices cannot be opened; / and /dev list", { skip: noOuter }, () => {
  const { result } = scenario('devices')
  assert.match(result.pts, /^\/dev\/pts\/\d+$/)
  assert.strictEqual(result.stdout, 'pts-denied\n/dev/ptmx-denied\n/dev/pts/ptmx-denied\nroot-listed\ndev-listed\nurandom-read\netc-read\n', result.stderr)
})

test('a policy Landlock cannot express is refused, naming the rule', { skip: noOuter }, () => {
  const { result } = scenario('unsupported')
  assert.match(result.denyRead, /^ERR_SANDBOX_UNSUPPORTED: .*sandbox\.denyRead entry/)
  assert.match(result.tmpPrivate, /^ERR_SANDBOX_UNSUPPORTED: .*sandbox\.tmp: 'private'/)
  assert.match(result.networkPolicy, /^ERR_SANDBOX_UNSUPPORTED: .*NetworkPolicy/)
  assert.match(result.toolCachesPrivate, /^ERR_SANDBOX_UNSUPPORTED: .*sandbox\.toolCaches: 'private'/)
  // No mount namespace for the workspace's overlay: refused with the reason, and reported so.
  assert.match(result.review, /^ERR_SANDBOX_UNSUPPORTED: sandbox\.workspace 'review' is not available here: the Landlock mode has no mount namespace/)
  assert.strictEqual(result.reviewCapability.available, false)
  assert.match(result.reviewCapability.reason, /Landlock mode/)
})

/** `name value` lines of an attack program. */
const lines = (out) => Object.fromEntries(out.split('\n').filter(Boolean).map((l) => l.split(' ')).map(([k, ...v]) => [k, v.join(' ')]))

test('the filter has the bwrap modes\' baseline; the supervisor cannot be traced, read or borrowed from (issue 27)', { skip: noOuter || (!hasCc() && 'no C compiler to build the attacks') }, (t) => {
  const bin = fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-ll-attacks-'))
  t.after(() => fs.rmSync(bin, { recursive: true, force: true }))
  for (const name of ['surface', 'borrow-init']) {
    execFileSync('cc', ['-O1', '-o', path.join(bin, name), path.join(__dirname, 'security', 'attacks', `${name}.c`)])
  }
  const { result } = scenario('kernelSurface', { env: { SANDSPAWN_ATTACKS: bin } })
  const surface = lines(result.surface)
  for (const name of ['keyctl', 'add_key', 'request_key', 'bpf', 'perf_event_open', 'userfaultfd', 'io_uring_setup', 'name_to_handle_at', 'open_by_handle_at', 'unshare-user', 'unshare-ns', 'clone-newuser', 'setns', 'mount', 'open_tree', 'fsopen', 'kexec_load', 'init_module', 'memfd_secret', 'seccomp-filter', 'prctl-seccomp-filter', 'ioctl-tiocsti', 'ioctl-tioclinux', 'ioctl-tiocexcl', 'ioctl-siocgifbr', 'ioctl-siocgifvlan', 'quotactl_fd-sync', 'quotactl-sync', 'ioctl-getfsmap', 'ioctl-btrfs-sync', 'ioctl-btrfs-start-sync', 'ioctl-btrfs-snap-create', 'ioctl-btrfs-snap-create-v2', 'ioctl-ext4-clear-es-cache']) {
    assert.strictEqual(surface[name], 'EPERM', `${name}\n${result.surface}${result.stderr}`)
  }
  assert.strictEqual(surface.clone3, 'ENOSYS')
  assert.strictEqual(surface.fork, 'ok')
  const borrow = lines(result.borrow)
  for (const name of ['ptrace-attach', 'process-vm-readv', 'pidfd-getfd', 'own-child-attach']) {
    assert.strictEqual(borrow[name], 'EPERM', `${name}\n${result.borrow}${result.stderr}`)
  }
  assert.match(borrow['proc-mem-open'], /^(EACCES|EPERM)$/, result.borrow)
  assert.match(borrow['proc-fd-readlink'], /^(EACCES|EPERM)$/, result.borrow)
})

// Found by an attacker's review: the Landlock mode shares the host's IPC namespace (SysV and POSIX
// message queues reached by key, name and id), socketpair(AF_UNIX, SOCK_DGRAM) reached host
// datagram sockets with every socket refused, and AF_VSOCK passed with the network on; and any
// protocol of the allowed families, which on a host that autoloads modules loads SCTP's, DCCP's,
// nfnetlink's... for good (kern27).
test("the host's IPC objects, its Unix datagram sockets and socket families and protocols beyond the Internet ones stay out of reach", { skip: noOuter || (!hasCc() && 'no C compiler to build the attacks') }, (t) => {
  const bin = fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-ll-attacks-'))
  t.after(() => fs.rmSync(bin, { recursive: true, force: true }))
  for (const name of ['host-ipc', 'unix-dgram', 'families', 'protocols']) {
    execFileSync('cc', ['-O1', '-o', path.join(bin, name), path.join(__dirname, 'security', 'attacks', `${name}.c`), '-lrt'])
  }
  const { result: r } = scenario('hostReach', { env: { SANDSPAWN_ATTACKS: bin } })
  // The IPC syscalls are refused whole: the host's objects are untouched, nothing is left behind.
  const refused = ['shmget-key', 'shmat-id', 'shm-info', 'msgget-key', 'msgrcv-id', 'semget-key', 'semctl-id', 'mq_open', 'shm-create', 'mq-create']
  assert.deepStrictEqual(lines(r.ipc), Object.fromEntries(refused.map((n) => [n, 'EPERM'])), r.ipc + r.stderr)
  assert.deepStrictEqual(r.ipcAfter, { got: [], 'host-shm': r.secret, 'host-msgs': '1', 'host-sem': '7', 'host-mq': '1', 'host-left-shm': 'ENOENT', 'host-left-mq': 'ENOENT' })
  assert.deepStrictEqual(lines(r.dgram), {
    'socket-dgram': 'EPERM', 'pair-dgram': 'EPERM', 'pair-dgram-flags': 'EPERM', 'pair-raw': 'EPERM',
    'pair-stream': 'ok', 'pair-stream-connect': 'EPROTOTYPE', 'pair-seqpacket': 'ok', 'pair-seqpacket-connect': 'EPROTOTYPE',
  }, r.dgram + r.stderr)
  assert.deepStrictEqual(r.dgramAfter, { got: [], 'host-received': '0' })
  const families = ['unix', 'inet', 'inet6', 'netlink', 'vsock', 'packet', 'alg', 'can', 'bluetooth', 'tipc', 'rds', 'key', 'xdp', 'appletalk', 'x25', 'llc', 'smc', 'kcm', 'qipcrtr', 'mctp', 'tcp-loopback', 'udp-loopback']
  assert.deepStrictEqual(lines(r.familiesOff), Object.fromEntries(families.map((n) => [n, 'EPERM'])), `network off: no socket at all\n${r.familiesOff}`)
  const on = new Set(['unix', 'inet', 'inet6', 'netlink', 'tcp-loopback', 'udp-loopback'])
  assert.deepStrictEqual(lines(r.familiesOn), Object.fromEntries(families.map((n) => [n, on.has(n) ? 'ok' : 'EPERM'])), `network: true\n${r.familiesOn}`)
  const protocols = lines(r.protocolsOn)
  const protocolsRefused = ['sctp', 'l2tp', 'udplite', 'udplite6', 'netlink-sock-diag', 'netlink-audit', 'netlink-netfilter', 'netlink-generic', 'netlink-crypto', 'netlink-audit-high']
  for (const name of protocolsRefused) assert.strictEqual(protocols[name], 'EPROTONOSUPPORT', `network: true, ${name}\n${r.protocolsOn}`)
  // Types no allowed protocol has (kern28): a packet socket through AF_INET, DCCP's and SCTP's seqpacket.
  for (const name of ['packet-compat', 'packet-compat-flags', 'dccp', 'dccp-0', 'dccp6-0', 'seqpacket-0', 'sctp6']) assert.strictEqual(protocols[name], 'ESOCKTNOSUPPORT', `network: true, ${name}\n${r.protocolsOn}`)
  for (const name of ['tcp-0', 'tcp', 'tcp6', 'udp', 'udp6', 'mptcp', 'netlink-route', 'netlink-uevent']) assert.strictEqual(protocols[name], 'ok', `network: true, ${name}\n${r.protocolsOn}`)
})

// Found by an attacker's review: the command lowered the scheduling of the host program that
// started the run (found among its ancestors through /proc) and of every process of its user:
// nice 19 and SCHED_IDLE for their whole life (undoing them needs CAP_SYS_NICE), one CPU, the idle
// I/O class. As an ordinary user: root's processes the kernel itself keeps from a command without
// capabilities.
test(`as uid ${UID}: a run cannot lower the scheduling of the host program that started it, nor of another process of its user`, { skip: noUser || (!hasCc() && 'no C compiler to build the attack') }, (t) => {
  const bin = fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-ll-attacks-'))
  t.after(() => fs.rmSync(bin, { recursive: true, force: true }))
  fs.chmodSync(bin, 0o755)
  execFileSync('cc', ['-O1', '-o', path.join(bin, 'sched'), path.join(__dirname, 'security', 'attacks', 'sched.c')])
  const { result } = scenario('schedHost', { user: UID, env: { SANDSPAWN_ATTACKS: bin } })
  assert.strictEqual(result.type, 'landlock', JSON.stringify(result))
  assert.deepStrictEqual(result.after, result.before, `the host's scheduling changed\n${result.stdout}${result.stderr}`)
  const got = lines(result.stdout)
  for (const pid of ['0', '1']) {
    for (const call of ['setattr', 'nice', 'idle', 'param', 'affinity', 'ioprio', 'nice-group', 'ioprio-group']) assert.strictEqual(got[`${call}-${pid}`], 'EPERM', `${call}-${pid}\n${result.stdout}`)
  }
  for (const name of ['nice-user', 'ioprio-user']) assert.strictEqual(got[name], 'EPERM', result.stdout)
  for (const name of ['own-nice', 'own-setattr', 'own-idle', 'own-param', 'own-affinity', 'own-ioprio']) assert.strictEqual(got[name], 'ok', `${name}\n${result.stdout}`)
})

function hasCc() {
  try {
    execFileSync('sh', ['-c', 'command -v cc'], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * A run's host risks without those the shared /tmp's other users cause during it: an entry made at
 * /tmp's top and gone before this run could look at it ("gone before this run could move it aside":
 * nothing of it is left on the host). The runs of other processes make and remove such entries
 * every moment: another program's plan's placeholders, made by its helper and removed by the next
 * run's cleanup (found by tmpflake42: 4 of 60 Landlock runs reported one, /tmp/.gitmodules,
 * /tmp/.perldb, beside a loop of plans), and a plant of another run's command, which that run
 * moved aside and reported. The README says every run watching /tmp reports such an entry, since
 * no run can tell whose it was; what this test's own command does is what is checked.
 */
function ownRisks(risks) {
  const tmp = fs.realpathSync(os.tmpdir())
  return risks.filter((h) => !(path.dirname(h.path) === tmp && h.detail.includes('gone before this run could move it aside')))
}

// Issue 30, as root in a container and as an unprivileged user: the cases below run for both.
const USERS = [['as root with Docker\'s capabilities', { user: null, skip: noOuter }], [`as uid ${UID}`, { user: UID, skip: noUser }]]

for (const [who, { user, skip }] of USERS) {
  test(`${who}: read-only carve-outs hold in a workspace inside /tmp and inside a writableRoots entry`, { skip }, () => {
    const { result } = scenario('carveOuts', { user })
    for (const where of ['underTmp', 'underWritableRoot']) {
      const r = result[where]
      assert.ok(r, JSON.stringify(result))
      assert.strictEqual(r.type, 'landlock', JSON.stringify(r))
      const expected = ['config denied', 'hook denied', 'hooks-renamed denied', 'git-renamed denied', 'read-only-path denied', 'workspace-renamed denied', 'inside written']
      assert.deepStrictEqual(r.stdout.trim().split('\n'), expected, `${where}: ${r.stdout}${r.stderr}`)
      assert.deepStrictEqual(ownRisks(r.hostRisks), [], `${where}: ${JSON.stringify(r.hostRisks)}`)
    }
    assert.strictEqual(result.after.config, '[core]\n\tbare = false\n')
    assert.deepStrictEqual(result.after.hooks, [])
    assert.strictEqual(result.after.ro, 'keep\n')
    assert.deepStrictEqual(result.after.dir, ['outside', 'ws'])
  })

  test(`${who}: ordinary work in a fresh workspace: the top, mktemp, git init, npm init/pack/install, python3 -m venv`, { skip }, () => {
    // Not in /tmp: the workspace is the only root that holds it (issue 30's second reproduction).
    const { result } = scenario('ordinaryWork', { user, fresh: true, base: '/var/tmp' })
    assert.strictEqual(result.type, 'landlock')
    assert.strictEqual(result.uid, user ?? 0)
    const steps = ['top', 'mktemp', 'git-init', 'npm-init', 'npm-pack', 'npm-install', 'venv']
    assert.deepStrictEqual(result.stdout.trim().split('\n'), steps.map((s) => `${s} ok`), result.stdout + result.stderr)
    // git init in a subdirectory is a repository created in the workspace: reported, as with bwrap.
    assert.deepStrictEqual(ownRisks(result.hostRisks).map((h) => h.kind), ['repository-created'], JSON.stringify(result.hostRisks))
  })

  test(`${who}: missing protected names created by the command are moved aside and reported`, { skip }, () => {
    const { result, ws } = scenario('missingNames', { user, fresh: true, base: '/var/tmp' })
    assert.strictEqual(result.exitCode, 0, result.stderr)
    const reported = new Set(result.hostRisks.map(([kind, p]) => `${kind} ${path.relative(ws, p)}`))
    for (const r of ['protected-name-created .envrc', 'protected-name-created .vscode', 'repository-created .git', 'repository-created sub/.git']) {
      assert.ok(reported.has(r), `${r} in ${[...reported].join(', ')}`)
    }
    assert.deepStrictEqual(result.after.filter((n) => !n.includes('.sandspawn-held-')), ['src', 'sub'], result.after.join(' '))
  })

  // Found by an attacker's review: an entry in a placeholder's shape was never looked at again.
  test(`${who}: a .git and a protected name made in a placeholder's shape and filled later are moved aside at once`, { skip }, () => {
    const { result, ws } = scenario('disguisedNames', { user, fresh: true, base: '/var/tmp' })
    assert.strictEqual(result.type, 'landlock')
    assert.strictEqual(result.exitCode, 0, result.stderr)
    assert.deepStrictEqual(result.stdout.trim().split('\n'), ['shaped'], `moved aside while the run went on: ${result.stdout}`)
    for (const n of ['.git', '.bashrc']) {
      const risk = result.hostRisks.find(([, p]) => p === path.join(ws, n))
      assert.ok(risk && /undone at once: moved aside/.test(risk[2]), `${n}: ${JSON.stringify(result.hostRisks)}`)
    }
  })

  test(`${who}: what the Landlock mode refuses is a denial naming the path, and escalation asks`, { skip }, () => {
    const { result, ws, outside } = scenario('denials', { user })
    const expect = { gitConfig: path.join(ws, '.git', 'config'), topOfRepository: path.join(ws, 'newtop'), outside: path.join(outside, 'x') }
    for (const [name, p] of Object.entries(expect)) {
      const r = result[name]
      assert.notStrictEqual(r.exitCode, 0, name)
      assert.ok(r.denial, `${name}: ${JSON.stringify(r)}`)
      assert.strictEqual(r.denial.reason, 'permission_denied', name)
      assert.strictEqual(r.denial.path, p, name)
      assert.deepStrictEqual(r.again, r.denial, `${name}: classifySandboxDenial(result) agrees`)
    }
    assert.deepStrictEqual(result.escalation, { escalated: true, asked: result.escalation.asked, exitCode: 0 })
    assert.strictEqual(result.escalation.asked.path, path.join(ws, 'escalated'))
    // The CLI's line says why (not "add --writable" for a directory that is writable).
    assert.match(result.cli.stderr, /sandbox denied this command \(permission_denied: .*\/clitop\); in the Landlock mode a directory that holds a read-only path \(such as \.git\) takes no new entries/, result.cli.stderr)
  })

  test(`${who}: a workspace with a .git in /tmp: /tmp's top is refused, mktemp works in a directory of the run's own`, { skip }, () => {
    const { result } = scenario('tmpAroundWorkspace', { user })
    const made = (result.stdout.match(/^mktemp (.*)$/m) || [])[1]
    assert.ok(made, result.stdout + result.stderr)
    assert.notStrictEqual(path.dirname(made), result.tmpRoot, 'not directly in the shared directory')
    assert.match(path.basename(path.dirname(made)), /^sandspawn-run-/)
    assert.match(result.stdout, /^top-denied$/m)
    assert.strictEqual(result.privateGone, true, 'removed after the run')
  })
}
