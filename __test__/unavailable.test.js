'use strict'
// Issue 6: sandspawn fails closed. When bwrap is missing, or cannot create its namespaces, every
// sandboxed run rejects with a SandboxError that names the cause and a fix, and the command never
// runs without the sandbox.
//
// Every scenario runs in a child node process (PATH changes and the per-process probe cache must not
// leak between tests); the child prints one JSON line of what it observed, prefixed by RESULT_TAG.

const { test, describe, before, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

// SANDSPAWN_TEST_PACKAGE: test another build (or a deliberately broken wrapper, to check that these tests can fail).
const MAIN = process.env.SANDSPAWN_TEST_PACKAGE || path.resolve(__dirname, '..')
const CLI = path.resolve(__dirname, '..', 'bin', 'sandspawn.js')
// The bwrap a run uses here (the system's, else the bundled one): the real one the delegating fake
// runs, and the outer sandbox of section 4.
const { ladderBwrap } = require('./fixtures/ladder-bwrap')
const REAL = ladderBwrap()
const REAL_BWRAP = REAL.path
const HOST_PATH = process.env.PATH
const RESULT_TAG = '@@SANDSPAWN-TEST-RESULT@@'
const CHILD_TIMEOUT_MS = 60_000

const tmpRoots = []
/**
 * A directory a fake bwrap lives in. It is named by SANDSPAWN_BWRAP (see `fakeEnv`): PATH search
 * trusts only the system's own program directories (tested in src/capabilities/tests_discover.rs
 * and bundled-bwrap.test.js), and these scenarios test what sandspawn says about a bwrap, not how
 * it is found.
 */
function mkFakeDir(label) {
  // Not under /tmp: an override in a shared temporary directory is refused (another process's
  // runs could replace it), and these scenarios are about what a working-path bwrap says.
  const parent = path.resolve(__dirname, '..', 'target')
  fs.mkdirSync(parent, { recursive: true })
  const d = fs.mkdtempSync(path.join(parent, `sandspawn-unavail-${label}-`))
  fs.chmodSync(d, 0o755)
  tmpRoots.push(d)
  return fs.realpathSync(d)
}
/** The child environment that makes the fake `<dir>/bwrap` the system bwrap. */
const fakeEnv = (dir) => ({ SANDSPAWN_BWRAP: path.join(dir, 'bwrap') })

function mkTemp(label) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), `sandspawn-unavail-${label}-`))
  tmpRoots.push(d)
  return fs.realpathSync(d)
}
after(() => {
  for (const d of tmpRoots) fs.rmSync(d, { recursive: true, force: true })
})

const shq = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`

function writeExecutable(file, text) {
  fs.writeFileSync(file, text, { mode: 0o755 })
  fs.chmodSync(file, 0o755)
}

/**
 * A fake `bwrap`: `--version` → `bubblewrap 0.8.0`, `--help` → a plain usage line, anything else
 * appends its arguments to `counter` (when given) and fails like bwrap does: `bwrap: MESSAGE` on
 * stderr, exit 1.
 */
function fakeFailingBwrap(dir, message, { counter } = {}) {
  const file = path.join(dir, 'bwrap')
  writeExecutable(
    file,
    `#!/bin/sh
case "$1" in
  --version) echo 'bubblewrap 0.8.0'; exit 0 ;;
  --help) echo 'usage: bwrap [OPTIONS...] [--] COMMAND [ARGS...]'; exit 0 ;;
esac
${counter ? `echo "$*" >> ${shq(counter)}` : ''}
printf 'bwrap: %s\\n' ${shq(message)} >&2
exit 1
`,
  )
  return file
}

/** A fake `bwrap` that logs every call to `log` and then runs the real bwrap. */
function fakeDelegatingBwrap(dir, log) {
  const file = path.join(dir, 'bwrap')
  writeExecutable(file, `#!/bin/sh\necho "$*" >> ${shq(log)}\nexec ${shq(REAL_BWRAP)} "$@"\n`)
  return file
}

const readLines = (file) =>
  fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.length > 0) : []

/**
 * The prelude every child script starts with: `sp` (the package), `out` (printed as JSON at the
 * end), `settle(promise)` (a plain record of how a sandspawn promise settled).
 */
const PRELUDE = `
const sp = require(${JSON.stringify(MAIN)})
const out = {}
const NO_BUNDLED = { bundledBwrap: false }
function errRecord(e) {
  return {
    ok: false,
    isSandboxError: e instanceof sp.SandboxError,
    name: e && e.name,
    code: e && e.code,
    message: e && e.message,
    stderr: e && e.stderr,
  }
}
function resRecord(r) {
  return { ok: true, exitCode: r.exitCode, signal: r.signal, sandboxType: r.sandboxType, stdout: r.stdout, stderr: r.stderr }
}
async function settle(p, ms = 30000) {
  let timer
  const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve({ ok: false, hung: true }), ms) })
  try {
    return await Promise.race([p.then(resRecord, errRecord), timeout])
  } finally {
    clearTimeout(timer)
  }
}
async function settleStart(p) {
  return settle(p.then(async (proc) => { const r = await proc.wait(); return r }))
}
`

/**
 * Run `body` (an async function body using `sp`, `out`, `settle`) in a child node process.
 * `wrap`: an argv prefix to run node under (the outer sandbox of scenario 4).
 */
function runChild(body, { env = {}, cwd, wrap = [] } = {}) {
  const script = `${PRELUDE}
;(async () => {
${body}
})().then(
  () => { process.stdout.write('\\n${RESULT_TAG}' + JSON.stringify(out) + '\\n'); process.exit(0) },
  (e) => { process.stdout.write('\\n${RESULT_TAG}' + JSON.stringify({ fatal: String(e && e.stack || e) }) + '\\n'); process.exit(0) },
)
`
  const argv = [...wrap, process.execPath, '-e', script]
  const r = spawnSync(argv[0], argv.slice(1), {
    env: { ...process.env, SANDSPAWN_BWRAP: '', ...env },
    cwd,
    encoding: 'utf8',
    timeout: CHILD_TIMEOUT_MS,
    killSignal: 'SIGKILL',
  })
  const ctx = `child exit ${r.status} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`
  assert.equal(r.error, undefined, `child failed to run or hung: ${r.error}\n${ctx}`)
  const line = (r.stdout || '').split('\n').find((l) => l.startsWith(RESULT_TAG))
  assert.ok(line, `child printed no result\n${ctx}`)
  const result = JSON.parse(line.slice(RESULT_TAG.length))
  assert.equal(result.fatal, undefined, `child script threw\n${result.fatal}\n${ctx}`)
  return result
}

// ---- the known bwrap failures --------------------------------------------------------------------

// Fix texts must name something to do, not just restate the problem.
const FIX_USERNS = /sysctl|--security-opt/
const FIX_APPARMOR = /apparmor/i
const FIX_DOCKER = /--security-opt|--privileged/
const FIX_PROC = /systempaths|unmask|--security-opt/
const USERNS_CAUSES = ['userns-disabled', 'docker-seccomp'] // docker-seccomp: this host is a container
const CAPS_CAUSES = ['caps-missing', 'docker-seccomp']
const ANY_CODE = ['ERR_SANDBOX_UNAVAILABLE', 'ERR_SANDBOX_SETUP_FAILED']
const UNAVAILABLE = ['ERR_SANDBOX_UNAVAILABLE']

/**
 * `stderr`: what the fake prints after `bwrap: `. `causes`: acceptable cause ids. `reason`: what the
 * reason must say in words. `fix`: what the fix must contain. `codes`: acceptable error codes (per-run
 * setup failures may be either; host-wide failures must be UNAVAILABLE).
 */
const FAILURES = [
  // user namespaces forbidden, in each bwrap's wording
  {
    stderr:
      'No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>.',
    causes: USERNS_CAUSES, reason: /namespace/i, fix: FIX_USERNS, codes: UNAVAILABLE,
  },
  {
    stderr:
      "No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.",
    causes: USERNS_CAUSES, reason: /namespace/i, fix: FIX_USERNS, codes: UNAVAILABLE,
  },
  {
    stderr:
      "No permissions to create a new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.",
    causes: USERNS_CAUSES, reason: /namespace/i, fix: FIX_USERNS, codes: UNAVAILABLE,
  },
  {
    stderr:
      'Creating new namespace failed, likely because the kernel does not support user namespaces.  bwrap must be installed setuid on such systems.',
    causes: ['kernel-no-userns'], reason: /kernel/i, fix: /CONFIG_USER_NS|kernel/, codes: UNAVAILABLE,
  },
  {
    stderr: 'Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)',
    causes: ['nesting-limit'], reason: /nest|max_user_namespaces/i, fix: /max_user_namespaces|outside|danger-full-access/,
    codes: UNAVAILABLE,
  },
  {
    stderr: 'Creating new namespace failed: Operation not permitted',
    causes: CAPS_CAUSES, reason: /namespace/i, fix: FIX_DOCKER, codes: UNAVAILABLE,
  },
  {
    stderr: 'Creating new namespace failed: Permission denied',
    causes: CAPS_CAUSES, reason: /namespace/i, fix: FIX_DOCKER, codes: UNAVAILABLE,
  },
  // AppArmor's unprivileged-userns restriction (Ubuntu 23.10+)
  {
    stderr: 'setting up uid map: Permission denied',
    causes: ['apparmor-userns'], reason: /apparmor/i, fix: FIX_APPARMOR, codes: UNAVAILABLE,
  },
  {
    stderr: 'setting up gid map: Permission denied',
    causes: ['apparmor-userns'], reason: /apparmor/i, fix: FIX_APPARMOR, codes: UNAVAILABLE,
  },
  {
    stderr: 'error writing to setgroups: Permission denied',
    causes: ['apparmor-userns'], reason: /apparmor/i, fix: FIX_APPARMOR, codes: UNAVAILABLE,
  },
  {
    stderr: 'loopback: Failed RTM_NEWADDR: Operation not permitted',
    causes: ['netns-denied'], reason: /loopback|network/i, fix: FIX_APPARMOR, codes: UNAVAILABLE,
  },
  {
    stderr: 'loopback: Failed RTM_NEWLINK: Operation not permitted',
    causes: ['netns-denied'], reason: /loopback|network/i, fix: FIX_APPARMOR, codes: UNAVAILABLE,
  },
  // containers
  {
    stderr: 'Failed to make / slave: Permission denied',
    causes: ['container-apparmor'], reason: /mount|apparmor/i, fix: FIX_DOCKER, codes: UNAVAILABLE,
  },
  {
    stderr: "Can't mount proc on /newroot/proc: Operation not permitted",
    causes: ['proc-masked'], reason: /\/proc/, fix: FIX_PROC, codes: UNAVAILABLE,
  },
  {
    stderr: "Can't mount proc on /newroot/proc: Invalid argument",
    causes: ['proc-masked'], reason: /\/proc/, fix: FIX_PROC, codes: UNAVAILABLE,
  },
  {
    stderr: "Can't mount proc on /newroot/proc: Permission denied",
    causes: ['proc-masked'], reason: /\/proc/, fix: FIX_PROC, codes: UNAVAILABLE,
  },
  {
    // bwrap 0.12 wording
    stderr: "Can't mount proc on /proc: Invalid argument",
    causes: ['proc-masked'], reason: /\/proc/, fix: FIX_PROC, codes: UNAVAILABLE,
  },
  // the binary itself
  {
    stderr: 'setuid use of bubblewrap is not supported in this build',
    causes: ['setuid-unsupported'], reason: /setuid/i, fix: /chmod u-s|reinstall|apt-get install/, codes: UNAVAILABLE,
  },
  {
    stderr: 'Unexpected capabilities but not setuid, old file caps config?',
    causes: ['file-caps'], reason: /capabilit/i, fix: /setcap -r|reinstall/, codes: UNAVAILABLE,
  },
  {
    stderr: 'Unknown option --disable-userns',
    causes: ['old-bwrap'], reason: /old|--disable-userns/i, fix: /upgrade/i, codes: UNAVAILABLE,
  },
  // mounts (per-run setup failures; here they fail the self-test, so either code is acceptable)
  {
    stderr: "Can't mount tmpfs on /newroot/tmp: Operation not permitted",
    causes: ['mount-failed'], reason: /tmpfs/, fix: /--security-opt|mount point/, codes: ANY_CODE,
  },
  {
    stderr: 'Failed to mount tmpfs: No space left on device',
    causes: ['mount-failed'], reason: /tmpfs/, fix: /--security-opt|mount point/, codes: ANY_CODE,
  },
  {
    stderr: "Can't mount devpts on /newroot/dev/pts: Operation not permitted",
    causes: ['mount-failed'], reason: /devpts/, fix: /--security-opt|mount point/, codes: ANY_CODE,
  },
  {
    stderr:
      "Can't bind mount /oldroot/usr on /newroot/usr: Limit exceeded (ENOSPC). (Hint: Check that /proc/sys/fs/mount-max is sufficient, typically 100000)",
    causes: ['mount-limit'], reason: /mount limit|mount-max/i, fix: /fs\.mount-max/, codes: ANY_CODE,
  },
  {
    stderr: "Can't find source path /nope: No such file or directory",
    causes: ['bad-source'], reason: /does not exist|\/nope/, fix: /create|remove/, codes: ANY_CODE,
  },
  // bwrap could not start the self-test's command: nothing known matches, the stderr is quoted.
  {
    stderr: 'execvp /bin/true: No such file or directory',
    causes: ['unknown'], reason: /execvp \/bin\/true/, fix: /by hand|doctor/, codes: UNAVAILABLE,
  },
]

function assertFailClosed(f, rec, marker, what) {
  const ctx = `${what} under fake bwrap saying ${JSON.stringify(f.stderr)}: ${JSON.stringify(rec, null, 1)}`
  assert.notEqual(rec.hung, true, `${what} never settled: ${ctx}`)
  assert.equal(rec.ok, false, `${what} resolved instead of rejecting: ${ctx}`)
  assert.equal(rec.isSandboxError, true, `not a SandboxError: ${ctx}`)
  assert.equal(rec.name, 'SandboxError', ctx)
  assert.ok(f.codes.includes(rec.code), `code ${rec.code} not in ${f.codes}: ${ctx}`)
  assert.match(rec.message, f.reason, `message lacks the cause in words: ${ctx}`)
  assert.match(rec.message, f.fix, `message lacks a concrete fix: ${ctx}`)
  assert.equal(fs.existsSync(marker), false, `${what}: the command ran although the sandbox failed: ${ctx}`)
}

function assertCapsUnavailable(f, caps, fakePath) {
  const ctx = `sandboxCapabilities() under fake bwrap saying ${JSON.stringify(f.stderr)}: ${JSON.stringify(caps, null, 1)}`
  assert.equal(caps.available, false, ctx)
  assert.equal(caps.platform, 'linux', ctx)
  assert.equal(caps.sandboxType, 'bwrap', ctx)
  assert.ok(f.causes.includes(caps.cause), `cause ${caps.cause} not in ${f.causes}: ${ctx}`)
  assert.match(caps.reason, f.reason, ctx)
  assert.match(caps.fix, f.fix, ctx)
  assert.ok(caps.bwrap, `bwrap info missing although one was found: ${ctx}`)
  assert.equal(caps.bwrap.path, fakePath, `the probed bwrap is not the fake: ${ctx}`)
  assert.equal(caps.bwrap.version, '0.8.0', ctx)
  assert.ok(typeof caps.stderr === 'string' && caps.stderr.includes(f.stderr), `stderr not kept: ${ctx}`)
}

// Scenarios 1, 2 and 6 test what sandspawn says about the *system* bwrap, so the bundled one (which
// takes over when the system one is missing or too old; see bundled-bwrap.test.js) is turned off.
describe('1. every known bwrap failure rejects, names the cause and a fix, and never runs the command', () => {
  for (const f of FAILURES) {
    test(f.stderr, () => {
      const dir = mkFakeDir('fake')
      const fake = fakeFailingBwrap(dir, f.stderr)
      const work = mkTemp('work')
      const marker = path.join(work, 'MARKER')
      const out = runChild(
        `
        out.spawn = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(work)}, linux: NO_BUNDLED }))
        out.spawnWrite = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(work)}, sandbox: 'workspace-write', linux: NO_BUNDLED }))
        out.caps = await sp.sandboxCapabilities({ linux: NO_BUNDLED })
        `,
        { env: fakeEnv(dir), cwd: work },
      )
      assertFailClosed(f, out.spawn, marker, 'spawnSandboxed (read-only)')
      assertFailClosed(f, out.spawnWrite, marker, 'spawnSandboxed (workspace-write)')
      assertCapsUnavailable(f, out.caps, fake)
      // The rejection says what sandboxCapabilities says.
      assert.ok(out.spawn.message.includes(out.caps.fix), `message and capabilities disagree on the fix: ${out.spawn.message}`)
      assert.ok(out.spawn.message.includes(out.caps.reason), `message and capabilities disagree on the reason: ${out.spawn.message}`)
      assert.ok(
        typeof out.spawn.stderr === 'string' && out.spawn.stderr.includes(f.stderr),
        `the SandboxError does not carry bwrap's stderr: ${JSON.stringify(out.spawn)}`,
      )
    })
  }
})

test('1b. a bwrap whose self-test hangs is killed and reported, not waited on forever', () => {
  const dir = mkFakeDir('fake-hang')
  const fake = path.join(dir, 'bwrap')
  const pidFile = path.join(dir, 'sleep.pid')
  writeExecutable(
    fake,
    `#!/bin/sh
case "$1" in --version) echo 'bubblewrap 0.8.0'; exit 0 ;; --help) exit 0 ;; esac
sleep 120 &
echo $! > ${shq(pidFile)}
wait
`,
  )
  const work = mkTemp('work-hang')
  const marker = path.join(work, 'MARKER')
  const out = runChild(
    `
    out.spawn = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(work)} }), 40000)
    out.caps = await sp.sandboxCapabilities()
    `,
    { env: fakeEnv(dir), cwd: work },
  )
  const ctx = JSON.stringify(out, null, 1)
  assert.notEqual(out.spawn.hung, true, `spawnSandboxed did not settle: ${ctx}`)
  assert.equal(out.spawn.ok, false, ctx)
  assert.equal(out.spawn.code, 'ERR_SANDBOX_UNAVAILABLE', ctx)
  assert.match(out.spawn.message, /did not finish|timed? ?out|hang/i, ctx)
  assert.match(out.spawn.message, /by hand|doctor/, ctx)
  assert.equal(out.caps.available, false, ctx)
  assert.equal(out.caps.cause, 'probe-timeout', ctx)
  assert.equal(fs.existsSync(marker), false, ctx)
  // The hung self-test's whole process group was killed, grandchildren included.
  const pid = Number(fs.readFileSync(pidFile, 'utf8'))
  // (A killed process may linger as a zombie when PID 1 does not reap: that counts as dead.)
  const running = () => {
    try {
      return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    } catch {
      return false
    }
  }
  const until = Date.now() + 2000
  while (running() && Date.now() < until) spawnSync('sleep', ['0.05'])
  const alive = running()
  if (alive) process.kill(pid, 'SIGKILL')
  assert.equal(alive, false, `the hung probe's child (pid ${pid}) was left running`)
})

// ---- 2. no bwrap at all ---------------------------------------------------------------------------

describe('2. no bwrap on PATH', () => {
  let bin
  let work
  before(() => {
    bin = mkTemp('nobwrap-bin')
    for (const tool of ['sh', 'touch']) {
      const real = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim()
      assert.ok(real.startsWith('/'), `no ${tool} on the host`)
      fs.symlinkSync(real, path.join(bin, tool))
    }
    work = mkTemp('nobwrap-work')
  })

  test('sandboxed modes reject ERR_SANDBOX_UNAVAILABLE with install instructions; MARKER absent', () => {
    const marker = path.join(work, 'MARKER')
    const out = runChild(
      `
      out.ro = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(work)}, linux: NO_BUNDLED }))
      out.ww = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(work)}, sandbox: 'workspace-write', linux: NO_BUNDLED }))
      out.start = await settleStart(sp.startSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(work)}, sandbox: 'workspace-write', linux: NO_BUNDLED }))
      out.caps = await sp.sandboxCapabilities({ linux: NO_BUNDLED })
      `,
      { env: { PATH: bin, SANDSPAWN_BWRAP: '' }, cwd: work },
    )
    for (const k of ['ro', 'ww', 'start']) {
      const rec = out[k]
      const ctx = `${k}: ${JSON.stringify(rec)}`
      assert.notEqual(rec.hung, true, ctx)
      assert.equal(rec.ok, false, `ran without bwrap: ${ctx}`)
      assert.equal(rec.isSandboxError, true, ctx)
      assert.equal(rec.code, 'ERR_SANDBOX_UNAVAILABLE', ctx)
      assert.match(rec.message, /bubblewrap|bwrap/, ctx)
      assert.match(rec.message, /not installed|not found|not on PATH|missing/i, ctx)
      assert.match(rec.message, /apt-get install/, ctx)
      assert.match(rec.message, /dnf install|apk add|pacman/, ctx)
    }
    assert.equal(fs.existsSync(marker), false, 'the command ran although no bwrap exists')
    const c = out.caps
    assert.equal(c.available, false, JSON.stringify(c))
    assert.equal(c.cause, 'bwrap-missing', JSON.stringify(c))
    assert.equal(c.bwrap, null, JSON.stringify(c))
    assert.match(c.reason, /bubblewrap|bwrap/, JSON.stringify(c))
    assert.match(c.fix, /apt-get install/, JSON.stringify(c))
  })

  test("sandbox: 'danger-full-access' still runs without bwrap", () => {
    const marker = path.join(work, 'MARKER-full')
    const out = runChild(
      `out.full = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER-full'], { cwd: ${JSON.stringify(work)}, sandbox: 'danger-full-access' }))`,
      { env: { PATH: bin, SANDSPAWN_BWRAP: '' }, cwd: work },
    )
    assert.equal(out.full.ok, true, JSON.stringify(out.full))
    assert.equal(out.full.exitCode, 0, JSON.stringify(out.full))
    assert.equal(out.full.sandboxType, 'none', JSON.stringify(out.full))
    assert.equal(fs.existsSync(marker), true, 'danger-full-access did not run the command')
  })
})

// ---- 3. a bwrap inside the cwd is never used -----------------------------------------------------

describe('3. a bwrap planted in the working directory is ignored', () => {
  const skipReason = REAL_BWRAP === null && REAL.reason

  // Each variant returns the PATH to use for a workspace `work`.
  const variants = [
    ['PATH starts with "."', (work) => `.:${HOST_PATH}`],
    ['PATH starts with the cwd (absolute)', (work) => `${work}:${HOST_PATH}`],
    ['PATH starts with a subdirectory of the cwd', (work) => `${path.join(work, 'sub')}:${HOST_PATH}`],
    [
      'PATH starts with a symlink to the cwd',
      (work) => {
        const link = path.join(mkTemp('link'), 'to-work')
        fs.symlinkSync(work, link)
        return `${link}:${HOST_PATH}`
      },
    ],
  ]

  for (const [name, pathFor] of variants) {
    test(name, { skip: skipReason }, () => {
      const work = mkTemp('planted')
      const outside = mkTemp('outside')
      const pwned = path.join(work, 'PWNED')
      const planted = `#!/bin/sh
touch ${shq(pwned)}
case "$1" in --version) echo 'bubblewrap 0.8.0'; exit 0 ;; --help) exit 0 ;; esac
while [ $# -gt 0 ] && [ "$1" != "--" ]; do shift; done
[ $# -gt 0 ] && shift
exec "$@"
`
      writeExecutable(path.join(work, 'bwrap'), planted)
      fs.mkdirSync(path.join(work, 'sub'))
      writeExecutable(path.join(work, 'sub', 'bwrap'), planted)
      const escape = path.join(outside, 'escaped')
      const cmd = `touch inside && touch ${shq(escape)}`
      const out = runChild(
        `
        out.caps = await sp.sandboxCapabilities() // process.cwd() is the workspace
        out.run = await settle(sp.spawnSandboxed(['sh', '-c', ${JSON.stringify(cmd)}], {
          cwd: ${JSON.stringify(work)},
          sandbox: { mode: 'workspace-write', tmp: 'read-only' },
        }))
        out.start = await settleStart(sp.startSandboxed(['sh', '-c', ${JSON.stringify(cmd)}], {
          cwd: ${JSON.stringify(work)},
          sandbox: { mode: 'workspace-write', tmp: 'read-only' },
        }))
        `,
        { env: { PATH: pathFor(work), SANDSPAWN_BWRAP: '' }, cwd: work },
      )
      const ctx = JSON.stringify(out, null, 1)
      assert.equal(fs.existsSync(pwned), false, `the planted bwrap was executed: ${ctx}`)
      assert.equal(out.caps.available, true, ctx)
      assert.equal(out.caps.bwrap.path, REAL_BWRAP, ctx)
      for (const k of ['run', 'start']) {
        const r = out[k]
        assert.equal(r.ok, true, `${k}: ${ctx}`)
        assert.equal(r.sandboxType, 'bwrap', `${k}: ${ctx}`)
        assert.notEqual(r.exitCode, 0, `${k}: the write outside the workspace succeeded: ${ctx}`)
      }
      assert.equal(fs.existsSync(path.join(work, 'inside')), true, `the command did not run in the sandbox: ${ctx}`)
      assert.equal(fs.existsSync(escape), false, `the command wrote outside the workspace: ${ctx}`)
    })
  }
})

// ---- 4. the real bwrap, nested under a sandbox that forbids user namespaces ------------------------

describe('4. inside an outer bwrap started with --disable-userns', () => {
  const outerWorks =
    REAL_BWRAP !== null &&
    spawnSync(
      REAL_BWRAP,
      ['--unshare-user', '--disable-userns', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--', '/bin/true'],
      { encoding: 'utf8' },
    ).status === 0
  const skip = !outerWorks && `the host cannot run the outer ${REAL_BWRAP ?? 'bwrap'} --unshare-user --disable-userns${REAL_BWRAP === null ? ` (${REAL.reason})` : ''}`
  const outer = (tmp) => [REAL_BWRAP, '--unshare-user', '--disable-userns', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', tmp, tmp, '--']

  test('spawnSandboxed rejects ERR_SANDBOX_UNAVAILABLE naming nesting and a fix; MARKER absent', { skip }, () => {
    const tmp = mkTemp('nested')
    const marker = path.join(tmp, 'MARKER')
    const out = runChild(
      `
      out.spawn = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(tmp)} }))
      out.start = await settleStart(sp.startSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(tmp)}, sandbox: 'workspace-write' }))
      out.caps = await sp.sandboxCapabilities()
      out.full = await settle(sp.spawnSandboxed(['sh', '-c', 'echo full'], { cwd: ${JSON.stringify(tmp)}, sandbox: 'danger-full-access' }))
      `,
      { wrap: outer(tmp), cwd: tmp },
    )
    const ctx = JSON.stringify(out, null, 1)
    for (const k of ['spawn', 'start']) {
      const rec = out[k]
      assert.notEqual(rec.hung, true, `${k}: ${ctx}`)
      assert.equal(rec.ok, false, `${k} resolved: ${ctx}`)
      assert.equal(rec.isSandboxError, true, `${k}: ${ctx}`)
      assert.equal(rec.code, 'ERR_SANDBOX_UNAVAILABLE', `${k}: ${ctx}`)
      assert.match(rec.message, /nest|namespace/i, `${k}: ${ctx}`)
      assert.match(rec.message, /outside|max_user_namespaces|danger-full-access/, `${k}: ${ctx}`)
    }
    assert.equal(fs.existsSync(marker), false, `the command ran unsandboxed: ${ctx}`)
    assert.equal(out.caps.available, false, ctx)
    assert.equal(out.caps.bwrap.path, REAL_BWRAP, ctx)
    assert.ok(['nesting-limit', 'userns-disabled', 'docker-seccomp'].includes(out.caps.cause), ctx)
    assert.match(out.caps.reason, /nest|namespace/i, ctx)
    assert.match(out.caps.fix, /outside|max_user_namespaces/, ctx)
    // The outer sandbox still lets unsandboxed commands run when asked for explicitly.
    assert.equal(out.full.ok, true, ctx)
    assert.equal(out.full.stdout, 'full\n', ctx)
  })

  test('`sandspawn doctor` exits 1 and prints the reason and the fix', { skip }, () => {
    const tmp = mkTemp('nested-doctor')
    const argv = [...outer(tmp), process.execPath, CLI, 'doctor']
    const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', timeout: CHILD_TIMEOUT_MS, killSignal: 'SIGKILL' })
    const ctx = `status ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`
    assert.equal(r.error, undefined, ctx)
    assert.equal(r.status, 1, ctx)
    assert.match(r.stdout, /available:\s+no/, ctx)
    assert.match(r.stdout, /reason:.*(nest|namespace)/i, ctx)
    assert.match(r.stdout, /fix:.*(outside|max_user_namespaces)/, ctx)
    assert.match(r.stdout, /Creating new namespace failed/, ctx)
  })

  test('`sandspawn doctor` on this host exits 0', { skip: !outerWorks && 'the host cannot sandbox' }, () => {
    const r = spawnSync(process.execPath, [CLI, 'doctor'], { encoding: 'utf8', timeout: CHILD_TIMEOUT_MS })
    const ctx = `status ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`
    assert.equal(r.status, 0, ctx)
    assert.match(r.stdout, /available:\s+yes/, ctx)
  })
})

// ---- 5. the probe is cached per bwrap ----------------------------------------------------------------

describe('5. the probe runs once per bwrap', () => {
  test('a failing bwrap is probed once for 5 spawns and 2 capability calls, again after SANDSPAWN_BWRAP changes', () => {
    const dirA = mkFakeDir('cacheA')
    const dirB = mkFakeDir('cacheB')
    const countA = path.join(mkTemp('countA'), 'calls')
    const countB = path.join(mkTemp('countB'), 'calls')
    fakeFailingBwrap(dirA, 'setting up uid map: Permission denied', { counter: countA })
    fakeFailingBwrap(dirB, 'Failed to make / slave: Permission denied', { counter: countB })
    const work = mkTemp('cache-work')
    const bwrapA = path.join(dirA, 'bwrap')
    const bwrapB = path.join(dirB, 'bwrap')
    const countsJs = `(() => { const fs = require('fs'); const n = (f) => fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\\n').filter(Boolean).length : 0; return [n(${JSON.stringify(countA)}), n(${JSON.stringify(countB)})] })()`
    const out = runChild(
      `
      const cmd = ['sh', '-c', 'touch MARKER']
      const o = { cwd: ${JSON.stringify(work)} }
      out.a = []
      for (let i = 0; i < 5; i++) out.a.push(await settle(sp.spawnSandboxed(cmd, o)))
      out.capsA1 = await sp.sandboxCapabilities()
      out.capsA2 = await sp.sandboxCapabilities()
      out.countsAfterA = ${countsJs}
      process.env.SANDSPAWN_BWRAP = ${JSON.stringify(bwrapB)}
      out.b = []
      for (let i = 0; i < 3; i++) out.b.push(await settle(sp.spawnSandboxed(cmd, o)))
      out.capsB = await sp.sandboxCapabilities()
      out.countsAfterB = ${countsJs}
      process.env.SANDSPAWN_BWRAP = ${JSON.stringify(bwrapA)}
      out.a2 = await settle(sp.spawnSandboxed(cmd, o))
      out.countsAfterBackToA = ${countsJs}
      `,
      { env: fakeEnv(dirA), cwd: work },
    )
    const ctx = JSON.stringify(out, null, 1)
    for (const r of [...out.a, out.a2]) {
      assert.equal(r.ok, false, ctx)
      assert.equal(r.code, 'ERR_SANDBOX_UNAVAILABLE', ctx)
      assert.match(r.message, /apparmor/i, ctx)
    }
    for (const r of out.b) {
      assert.equal(r.ok, false, ctx)
      assert.equal(r.code, 'ERR_SANDBOX_UNAVAILABLE', ctx)
      assert.match(r.message, /--security-opt/, ctx)
    }
    assert.deepEqual(out.capsA1, out.capsA2, 'two calls with the same bwrap disagree')
    assert.equal(out.capsA1.cause, 'apparmor-userns', ctx)
    assert.equal(out.capsB.cause, 'container-apparmor', ctx)
    assert.deepEqual(out.countsAfterA, [1, 0], `bwrap A probed ${out.countsAfterA[0]} times (expected once): ${readLines(countA).join(' | ')}`)
    assert.deepEqual(out.countsAfterB, [1, 1], `after SANDSPAWN_BWRAP changed: ${ctx}`)
    assert.deepEqual(out.countsAfterBackToA, [1, 1], `back on bwrap A the cached verdict was not reused: ${ctx}`)
    assert.equal(fs.existsSync(path.join(work, 'MARKER')), false)
  })

  test('a working bwrap is probed once across 5 sandboxed runs', { skip: REAL_BWRAP === null && REAL.reason }, () => {
    const dir = mkFakeDir('cache-ok')
    const log = path.join(mkTemp('cache-ok-log'), 'calls')
    const fake = fakeDelegatingBwrap(dir, log)
    const work = mkTemp('cache-ok-work')
    const out = runChild(
      `
      out.runs = []
      for (let i = 0; i < 5; i++) out.runs.push(await settle(sp.spawnSandboxed(['sh', '-c', 'echo run' + ${'i'}], { cwd: ${JSON.stringify(work)} })))
      out.caps1 = await sp.sandboxCapabilities()
      out.caps2 = await sp.sandboxCapabilities()
      `,
      { env: fakeEnv(dir), cwd: work },
    )
    const ctx = JSON.stringify(out, null, 1)
    out.runs.forEach((r, i) => {
      assert.equal(r.ok, true, ctx)
      assert.equal(r.sandboxType, 'bwrap', ctx)
      assert.equal(r.stdout, `run${i}\n`, ctx)
    })
    assert.equal(out.caps1.available, true, ctx)
    assert.equal(out.caps1.bwrap.path, fake, ctx)
    assert.deepEqual(out.caps1, out.caps2)
    const calls = readLines(log)
    // A run's bwrap ends with the helper waiting for its arguments (`-- .../sandspawn-helper
    // --args-from=6 --report-fd=4`: the command comes through that pipe, README "The helper's
    // arguments come after the walk"); everything else is discovery and probing.
    const isRun = (l) => / -- \S+\/sandspawn-helper --args-from=\d+ --report-fd=\d+$/.test(l)
    const runs = calls.filter(isRun)
    const probes = calls.filter((l) => !isRun(l) && !/^--(version|help)$/.test(l))
    assert.equal(runs.length, 5, calls.join('\n'))
    assert.equal(probes.length, 1, `expected one probe, got:\n${calls.join('\n')}`)
    assert.ok(calls.filter((l) => l === '--version').length <= 1, `--version asked more than once:\n${calls.join('\n')}`)
  })
})

// ---- 6. startSandboxed fails closed the same way ----------------------------------------------------

describe('6. startSandboxed rejects like spawnSandboxed', () => {
  for (const f of FAILURES) {
    test(f.stderr, () => {
      const dir = mkFakeDir('fake-start')
      fakeFailingBwrap(dir, f.stderr)
      const work = mkTemp('work-start')
      const marker = path.join(work, 'MARKER')
      // startSandboxed first, so it is the call that meets the failing probe.
      const out = runChild(
        `
        out.start = await settleStart(sp.startSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(work)}, linux: NO_BUNDLED }))
        out.startPipe = await settleStart(sp.startSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(work)}, stdin: 'pipe', sandbox: 'workspace-write', linux: NO_BUNDLED }))
        out.spawn = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(work)}, linux: NO_BUNDLED }))
        `,
        { env: fakeEnv(dir), cwd: work },
      )
      assertFailClosed(f, out.start, marker, 'startSandboxed')
      assertFailClosed(f, out.startPipe, marker, 'startSandboxed (stdin pipe, workspace-write)')
      assert.equal(out.start.code, out.spawn.code, JSON.stringify(out))
      assert.equal(out.start.message, out.spawn.message, JSON.stringify(out))
    })
  }
})

// ---- 7. a passing shortage (another run holding this user's processes) -------------------------------

describe('7. a passing shortage of processes is a setup failure to retry, and is not remembered', { skip: REAL_BWRAP === null && REAL.reason }, () => {
  test("a bwrap that fails twice for lack of processes (EAGAIN), then works: the runs meanwhile are refused with a retry, the next one runs", () => {
    // What another run of this user that holds all of its processes (RLIMIT_NPROC) makes bwrap say.
    const dir = mkFakeDir('short')
    const left = path.join(mkTemp('short-left'), 'left')
    fs.writeFileSync(left, '2\n')
    writeExecutable(
      path.join(dir, 'bwrap'),
      `#!/bin/sh
case "$1" in --version|--help) exec ${shq(REAL_BWRAP)} "$@" ;; esac
n=$(cat ${shq(left)})
if [ "$n" -gt 0 ]; then
  echo $((n - 1)) > ${shq(left)}
  echo 'bwrap: Creating new namespace failed: Resource temporarily unavailable' >&2
  exit 1
fi
exec ${shq(REAL_BWRAP)} "$@"
`,
    )
    const work = mkTemp('short-work')
    const marker = path.join(work, 'MARKER')
    const out = runChild(
      `
      const o = { cwd: ${JSON.stringify(work)} }
      out.during = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], o))
      out.capsDuring = await sp.sandboxCapabilities()
      out.markerDuring = require('fs').existsSync(${JSON.stringify(marker)})
      out.after = await settle(sp.spawnSandboxed(['sh', '-c', 'echo ran'], o))
      out.capsAfter = await sp.sandboxCapabilities()
      `,
      { env: fakeEnv(dir), cwd: work },
    )
    const ctx = JSON.stringify(out, null, 1)
    assert.equal(out.during.ok, false, ctx)
    assert.equal(out.markerDuring, false, `the command ran without its sandbox: ${ctx}`)
    assert.equal(out.during.code, 'ERR_SANDBOX_SETUP_FAILED', ctx)
    assert.match(out.during.message, /RLIMIT_NPROC/, ctx)
    assert.match(out.during.message, /retry/, ctx)
    assert.doesNotMatch(out.during.message, /danger-full-access|seccomp|sandbox unavailable/, ctx)
    assert.match(out.during.stderr, /Resource temporarily unavailable/, ctx)
    assert.equal(out.capsDuring.available, false, ctx)
    assert.equal(out.capsDuring.cause, 'resource-shortage', ctx)
    assert.deepEqual(out.capsDuring.fixes, [out.capsDuring.fix], `only the retry: ${ctx}`)
    assert.equal(out.after.ok, true, `the shortage was remembered after it passed: ${ctx}`)
    assert.equal(out.after.stdout, 'ran\n', ctx)
    assert.equal(out.capsAfter.available, true, ctx)
  })
})
