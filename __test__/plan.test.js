'use strict'
// buildSandboxCommand and `sandspawn explain`: Seatbelt plans built on Linux, bwrap plans that
// enforce the policy when run by hand with child_process.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')
const { buildSandboxCommand, SandboxError } = require('..')

const tmp = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-plan-')))

test('platform darwin gives a Seatbelt plan on Linux; platform linux a bwrap plan', (t) => {
  const ws = tmp()
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }))
  const mac = buildSandboxCommand(['echo', 'hi'], { cwd: ws, sandbox: 'workspace-write', platform: 'darwin' })
  assert.equal(mac.sandboxType, 'seatbelt')
  assert.equal(mac.program, '/usr/bin/sandbox-exec')
  assert.equal(mac.args[0], '-p')
  assert.match(mac.profile, /^\(version 1\)/)
  assert.match(mac.profile, /\(deny default\)/)
  assert.ok(mac.args.some((a) => a.startsWith('-D') && a.endsWith(`=${ws}`)), 'the workspace is passed as a -D parameter')
  assert.ok(!mac.profile.includes(ws), 'paths are parameters, never pasted into the profile')
  assert.deepEqual(mac.args.slice(-3), ['--', 'echo', 'hi'])

  const linux = buildSandboxCommand(['echo', 'hi'], { cwd: ws, sandbox: 'workspace-write', platform: 'linux' })
  assert.equal(linux.sandboxType, 'bwrap')
  // With the network off the helper runs in front of bwrap (it opens the offline nsswitch.conf).
  assert.match(linux.program, /sandspawn-helper$/)
  assert.match(linux.args[linux.args.indexOf('--') + 1], /bwrap$/)
  assert.equal(linux.profile, null)
  const i = linux.args.findIndex((a, j) => a === '--bind' && linux.args[j + 1] === ws)
  assert.ok(i > 0, 'the workspace is bound writable')
  assert.deepEqual(linux.args.slice(i, i + 3), ['--bind', ws, ws])
  assert.deepEqual(linux.args.slice(-3), ['--', 'echo', 'hi'])
  assert.equal(linux.env.SANDSPAWN_SANDBOX, 'bwrap')
})

test('a path with spaces, quotes and non-ASCII characters stays one argument', (t) => {
  const parent = tmp()
  t.after(() => fs.rmSync(parent, { recursive: true, force: true }))
  const ws = path.join(parent, `it's a "ws" — ünï`)
  fs.mkdirSync(ws)
  const plan = buildSandboxCommand(['true'], { cwd: ws, sandbox: 'workspace-write', platform: 'linux' })
  assert.ok(plan.args.includes(ws))
  const mac = buildSandboxCommand(['true'], { cwd: ws, sandbox: 'workspace-write', platform: 'darwin' })
  assert.ok(mac.args.includes(`-DWRITABLE_ROOT_0=${ws}`) || mac.args.some((a) => a.endsWith(`=${ws}`)))
})

function runPlan(plan) {
  return new Promise((resolve) => {
    // Plain stdio only: plans are self-contained (see helper.test.js for the policy checks).
    assert.deepEqual(plan.extraFds, [])
    const child = spawn(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio: ['ignore', 'pipe', 'pipe'], argv0: plan.argv0 })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    child.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

test('running the Linux plan by hand with child_process enforces the policy', async (t) => {
  const ws = tmp()
  // Outside every writable root: not under the workspace, and not under /tmp (writable by default).
  const outside = fs.realpathSync(fs.mkdtempSync('/var/tmp/ss-plan-outside-'))
  t.after(() => [ws, outside].forEach((d) => fs.rmSync(d, { recursive: true, force: true })))
  const script = `echo in > inside.txt && echo out > ${outside}/outside.txt`
  const plan = buildSandboxCommand(['sh', '-c', script], { cwd: ws, sandbox: 'workspace-write', platform: 'linux' })
  const r = await runPlan(plan)
  assert.notEqual(r.code, 0)
  assert.match(r.stderr, /Read-only file system/)
  assert.equal(fs.readFileSync(path.join(ws, 'inside.txt'), 'utf8'), 'in\n')
  assert.equal(fs.existsSync(path.join(outside, 'outside.txt')), false)
  // The plan's placeholders (in /tmp too) stay until a run of the runner there removes them, once
  // the plan's sandbox init, which holds the directories while it lives, is gone.
  // The workspace's lock alone: /tmp is every plan's on the machine, and waiting for it to be free
  // spent the whole bound whenever another process's plan ran (the cleanup checks each directory).
  const ino = fs.statSync(ws).ino
  for (let i = 0; i < 500 && fs.readFileSync('/proc/locks', 'utf8').includes(`:${ino} `); i++) await new Promise((r) => setTimeout(r, 10))
  const cleanup = await require('..').spawnSandboxed(['true'], { cwd: ws, sandbox: 'workspace-write' })
  assert.equal(cleanup.exitCode, 0)
  assert.deepEqual(fs.readdirSync(ws), ['inside.txt'], 'the placeholders are gone')
})

// Found by flake41 (helper.test.js's plans failed once beside a running CI): a cleanup by a process
// in a pid namespace of its own (reaping.test.js's Node as PID 1, a container's) saw the directory
// locked but could not see the lock's holder, the plan's sandbox init, in its /proc, took the lock
// for nobody's and removed the placeholders under the live sandbox: its covers went with them, and
// the command wrote the protected name on the host (or, while it was being set up, failed 125).
const canUnsharePid = process.getuid() === 0 && spawnSync('unshare', ['--fork', '--pid', '--mount-proc', 'true']).status === 0
// tmp private: the test's own workspace alone is held, never the shared /tmp.
const HELD_SANDBOX = { mode: 'workspace-write', tmp: 'private' }

/**
 * A running plan in a fresh workspace holding its placeholders, and a cleanup by a run of ours in
 * a pid namespace of its own (`other`, Node's -e text, given the workspace, the sandbox and the
 * package; it prints 'exit N'). Returns whether the placeholder was still there after the cleanup,
 * and what the plan's command printed once let go (WROTE: it wrote the protected name).
 */
async function cleanupBesideAPlan(t, other) {
  const ws = tmp()
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }))
  const script = 'touch started; i=0; while [ ! -e go ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; echo x > .envrc && echo WROTE'
  const plan = buildSandboxCommand(['sh', '-c', script], { cwd: ws, sandbox: HELD_SANDBOX, platform: 'linux' })
  const running = runPlan(plan)
  for (let i = 0; i < 600 && !fs.existsSync(path.join(ws, 'started')); i++) await new Promise((r) => setTimeout(r, 100))
  assert.ok(fs.existsSync(path.join(ws, 'started')), 'the plan\'s command started')
  const placeholder = () => { try { return fs.readlinkSync(path.join(ws, '.envrc')) } catch (e) { return e.code } }
  assert.equal(placeholder(), '/dev/null/sandspawn-held', 'the plan made its placeholder')
  const r = spawnSync('unshare', ['--fork', '--pid', '--mount-proc', process.execPath, '-e', other(ws, JSON.stringify(HELD_SANDBOX), JSON.stringify(path.resolve(__dirname, '..')))], { encoding: 'utf8', timeout: 120_000 })
  assert.match(r.stdout, /^exit 0$/m, r.stderr)
  const kept = placeholder()
  fs.writeFileSync(path.join(ws, 'go'), '')
  const done = await running
  return { ws, kept, out: done.stdout }
}

test('a cleanup in a pid namespace of its own keeps a running plan\'s placeholders', { skip: !canUnsharePid && 'needs root and `unshare --pid --mount-proc`' }, async (t) => {
  const other = (ws, sandbox, pkg) => `require(${pkg}).spawnSandboxed(['true'], { cwd: ${JSON.stringify(ws)}, sandbox: ${sandbox} }).then((r) => console.log('exit', r.exitCode))`
  const { ws, kept, out } = await cleanupBesideAPlan(t, other)
  assert.equal(kept, '/dev/null/sandspawn-held', 'the cleanup removed the placeholder of a running plan')
  assert.doesNotMatch(out, /WROTE/)
  assert.notEqual(fs.lstatSync(path.join(ws, '.envrc')).isFile(), true, 'the command wrote the protected name on the host')
})

// Found by an attacker's review (rev43) of rev42's fix: a lock whose owner reads as pid 0 (the
// plan's init, outside this pid namespace) was taken for a ghost as soon as ANY process this one
// sees held a POSIX lock on the directory too, and any process that can read a directory can
// read-lock it (a command in a run of the container's own sandspawn): the cleanup then removed the
// running plan's placeholders. A ghost's lock shows pid 0 in its holder's fdinfo too; a live
// visible locker's shows its pid.
const READ_LOCK = `open(my $d, '<', $ARGV[0]) or die "open: $!"; my $l = pack('s s x4 q q i x4', 0, 0, 0, 0, 0);
fcntl($d, 6, $l) or die "lock: $!"; open(my $r, '>', $ARGV[1]) or die; close $r; sleep 60`
test('a cleanup in a pid namespace of its own keeps a running plan\'s placeholders that a process it sees also read-locks', { skip: (!canUnsharePid || spawnSync('perl', ['-e', '1']).status !== 0) && 'needs root, `unshare --pid --mount-proc` and perl' }, async (t) => {
  const aside = tmp()
  t.after(() => fs.rmSync(aside, { recursive: true, force: true }))
  fs.writeFileSync(path.join(aside, 'lock.pl'), READ_LOCK)
  const ready = JSON.stringify(path.join(aside, 'locked'))
  // In the new pid namespace: a process read-locks the workspace's top, then a run there cleans up.
  const other = (ws, sandbox, pkg) => `const { spawn } = require('node:child_process'); const fs = require('node:fs')
const locker = spawn('perl', [${JSON.stringify(path.join(aside, 'lock.pl'))}, ${JSON.stringify(ws)}, ${ready}], { stdio: 'inherit' })
const wait = () => fs.existsSync(${ready}) ? run() : setTimeout(wait, 50)
const run = () => require(${pkg}).spawnSandboxed(['true'], { cwd: ${JSON.stringify(ws)}, sandbox: ${sandbox} }).then((r) => { console.log('exit', r.exitCode); locker.kill() })
wait()`
  const { kept, out } = await cleanupBesideAPlan(t, other)
  assert.equal(kept, '/dev/null/sandspawn-held', 'the cleanup removed the placeholder of a running plan')
  assert.doesNotMatch(out, /WROTE/, 'the plan\'s command wrote the protected name on the host')
})

test('plans validate like spawnSandboxed does', () => {
  assert.throws(() => buildSandboxCommand(['true'], { platform: 'windows' }), (e) => e instanceof SandboxError && e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && /platform/.test(e.message))
  assert.throws(() => buildSandboxCommand(['true'], { sandbox: { mode: 'workspace-write', writableRoots: ['rel/dir'] } }), (e) => e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && /writableRoots/.test(e.message))
  assert.throws(() => buildSandboxCommand(['true'], { sandbox: { mode: 'read-only', tmp: 'private' }, platform: 'darwin' }), (e) => e.code === 'ERR_SANDBOX_UNSUPPORTED')
  assert.throws(() => buildSandboxCommand(['true'], { sandbox: { allowUnixSockets: ['/tmp/x.sock'] }, platform: 'linux' }), (e) => e.code === 'ERR_SANDBOX_UNSUPPORTED')
})

test('`sandspawn explain --mode workspace-write -- ls` prints the plan readably', (t) => {
  const ws = tmp()
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }))
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'bin', 'sandspawn.js'), 'explain', '--mode', 'workspace-write', '--', 'ls'], { cwd: ws, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  assert.match(r.stdout, /^sandbox: +bwrap$/m)
  assert.match(r.stdout, /^ {2}--unshare-net$/m)
  assert.ok(r.stdout.includes(`  --bind ${ws} ${ws}`), r.stdout)
  assert.match(r.stdout, /^ {2}-- ls$/m)
  // Arguments are shell-quoted where a name needs it (IRB's `$irbrc`).
  // The placeholders' locks and covers, the checks of the writable binds (/tmp and the workspace)
  // and of the cwd, /dev/shm's inode bound and (if the home has caches) the private tool caches'
  // overlays are among the helper's steps.
  assert.match(r.stdout, /^ {2}-- \/\S+\/sandspawn-helper v1 --await-init-locks=2 --close-fds=4,5 --writable-at=\d+:\d+:\/tmp --writable-at=\d+:\d+:\S+ --cwd-at=\d+:\d+:\S+ --tmpfs-inodes=131072:\/dev\/shm --devpts-max=256 --stdio-devices=\/dev\/sandspawn-host-dev (--overlay .* )?('?--cover-dir=\S+ )+('?--cover-file=\S+ )+.*--own-userns --limit-userns --rlimit=sigpending:\d+:\d+ --rlimit=msgqueue:\d+:\d+ --rlimit=rtprio:0:0 --rlimit=nice:0:0 --rlimit=core:1:1 --filter=inet --bwrap-alive=7$/m)
  // The helper in front of bwrap: the offline nsswitch.conf (network off), and the placeholders of
  // /tmp and of the workspace (.git and the 50 default names; a plan for another spawner creates
  // its own), locked through their lock files in sandspawn's state directory.
  assert.match(r.stdout, new RegExp(`^ {2}v1 --offline-nsswitch-fd=3 --status-pair=6,7 --held-locks=/\\S+/sandspawn/held-dirs --hold-dir=4:/tmp( '?--placeholder-(dir|file)=4:\\S+)+ --hold-dir=5:${ws}( '?--placeholder-(dir|file)=5:\\S+){40,} -- /\\S*bwrap$`, 'm'))
  assert.ok(r.stdout.includes(`  --lock-file /tmp\n  --lock-file ${ws}\n`), r.stdout)
  assert.doesNotMatch(r.stdout, /^fd \d/m, 'no extra descriptors')
  const mac = spawnSync(process.execPath, [path.join(__dirname, '..', 'bin', 'sandspawn.js'), 'explain', '--platform', 'darwin', '--', 'ls'], { cwd: ws, encoding: 'utf8' })
  assert.equal(mac.status, 0, mac.stderr)
  assert.match(mac.stdout, /^profile:$/m)
  assert.match(mac.stdout, /\(deny default\)/)
})

// Found in the twenty-first session: a plan asked for with `linux.allow: ['landlock']` (or under
// SANDSPAWN_LINUX_ALLOW=landlock) was a bwrap plan, where spawnSandboxed would run the Landlock mode
// or nothing. Plans are bwrap plans only (the Landlock mode needs spawnSandboxed's supervisor), so
// one that rules bwrap out is refused, saying so, and `sandspawn explain` says the same.
test('a plan that rules bwrap out is refused with ERR_SANDBOX_UNSUPPORTED, not built as bwrap', (t) => {
  const ws = tmp()
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }))
  const refused = (fn) => assert.throws(fn, (e) => e instanceof SandboxError && e.code === 'ERR_SANDBOX_UNSUPPORTED' && /Landlock/.test(e.message) && /spawnSandboxed/.test(e.message))
  refused(() => buildSandboxCommand(['true'], { cwd: ws, sandbox: 'workspace-write', platform: 'linux', linux: { allow: ['landlock'] } }))
  assert.equal(buildSandboxCommand(['true'], { cwd: ws, sandbox: 'workspace-write', platform: 'linux', linux: { allow: ['bwrap', 'landlock'] } }).sandboxType, 'bwrap')
  const cli = path.join(__dirname, '..', 'bin', 'sandspawn.js')
  const r = spawnSync(process.execPath, [cli, 'explain', '--', 'true'], { cwd: ws, encoding: 'utf8', env: { ...process.env, SANDSPAWN_LINUX_ALLOW: 'landlock' } })
  assert.notEqual(r.status, 0, r.stdout)
  assert.doesNotMatch(r.stdout, /^sandbox: +bwrap$/m)
  assert.match(r.stderr, /Landlock/)
  // danger-full-access needs no mechanism: its plan is the command itself, whatever is allowed.
  assert.equal(buildSandboxCommand(['true'], { cwd: ws, sandbox: 'danger-full-access', platform: 'linux', linux: { allow: ['landlock'] } }).sandboxType, 'none')
})
