'use strict'
// The command line as people use it: the command without `--`, --version and help, errors in the
// words of the flags, relative paths against --cwd, --json for every outcome, stdin forwarded,
// signals forwarded (exit 128 + n), the denial line's remedy, and --ask printing it once.
// Every test spawns the real CLI.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn, spawnSync } = require('node:child_process')

const CLI = path.join(__dirname, '..', 'bin', 'sandspawn.js')
const { version } = require('../package.json')
// Generous hang bound for one CLI run (never a speed assertion).
const HANG_MS = 30_000

const cli = (args, opts = {}) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL', ...opts })
const tmp = (tag) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `ss-cli-${tag}-`)))
const ctx = (r) => `status ${r.status} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`

// ---- the command line's shape ---------------------------------------------------------------

test('the command may follow the options without --; its own flags stay its own', () => {
  const r = cli(['echo', 'hi'])
  assert.equal(r.status, 0, ctx(r))
  assert.equal(r.stdout, 'hi\n')
  const withOptions = cli(['--mode', 'read-only', '--timeout', '20000', 'sh', '-c', 'exit 3'])
  assert.equal(withOptions.status, 3, ctx(withOptions))
  // --json after the command word belongs to the command.
  const theirs = cli(['echo', '--json', '--mode'])
  assert.equal(theirs.status, 0, ctx(theirs))
  assert.equal(theirs.stdout, '--json --mode\n')
  // A program named like a subcommand runs after --.
  const dashed = cli(['--', 'sh', '-c', 'echo after-dashes'])
  assert.equal(dashed.stdout, 'after-dashes\n', ctx(dashed))
})

test('--version prints the package version; help, --help and <subcommand> --help are short and exit 0', () => {
  const v = cli(['--version'])
  assert.equal(v.status, 0, ctx(v))
  assert.equal(v.stdout, `${version}\n`)
  assert.deepEqual(JSON.parse(cli(['--json', '--version']).stdout), { version })
  for (const args of [['help'], ['--help'], ['-h'], ['help', 'explain'], ['explain', '--help'], ['doctor', '--help'], ['help', 'doctor']]) {
    const r = cli(args)
    assert.equal(r.status, 0, `${args.join(' ')}\n${ctx(r)}`)
    assert.match(r.stdout, /^Usage: sandspawn/, args.join(' '))
    assert.ok(r.stdout.split('\n').length <= 30, `help for ${args.join(' ')} is ${r.stdout.split('\n').length} lines`)
  }
  assert.match(cli(['explain', '--help']).stdout, /--platform/)
  assert.doesNotMatch(cli(['doctor', '--help']).stdout, /--writable/)
})

test('a usage error is one line naming the flag plus a one-line hint, exit 2', () => {
  for (const [args, words] of [
    [['--bogus', 'true'], /^sandspawn: unknown option --bogus$/],
    [['--mode'], /^sandspawn: --mode needs a value$/],
    [['--json=yes', 'true'], /^sandspawn: --json takes no value$/],
    [['--timeout', 'soon', 'true'], /^sandspawn: --timeout must be a number/],
    [['--platform', 'darwin', 'true'], /^sandspawn: --platform is allowed only with `sandspawn explain`$/],
    [['doctor', 'extra'], /^sandspawn: `sandspawn doctor` takes no command/],
    [['explain'], /^sandspawn: no command given$/],
    [[], /^sandspawn: no command given$/],
  ]) {
    const r = cli(args)
    assert.equal(r.status, 2, `${args.join(' ')}\n${ctx(r)}`)
    const lines = r.stderr.trimEnd().split('\n')
    assert.equal(lines.length, 2, `${args.join(' ')}\n${ctx(r)}`)
    assert.match(lines[0], words)
    assert.match(lines[1], /^usage: sandspawn .*\(see `sandspawn help/)
    assert.equal(r.stdout, '')
  }
})

// ---- errors in the words of the command line ------------------------------------------------

test('errors name the CLI flag, never an API field, and carry no Rust "(os error N)" text', () => {
  const ws = tmp('flags')
  const cases = [
    [['--cwd', '/no/such/dir', 'true'], /^sandspawn: --cwd: \/no\/such\/dir does not exist$/],
    [['--cwd', '/etc/passwd', 'true'], /^sandspawn: --cwd: \/etc\/passwd is not a directory$/],
    [['--cwd', ws, '--writable', 'missing', 'true'], new RegExp(`^sandspawn: --writable missing: ${ws}/missing does not exist$`)],
    [['--mode', 'bogus', 'true'], /^sandspawn: --mode: unknown sandbox mode "bogus"/],
    [['--tmp', 'shared', 'true'], /^sandspawn: --tmp: must be 'writable', 'private' or 'read-only'/],
    [['--mode', 'read-only', '--writable', ws, 'true'], /^sandspawn: --writable: only allowed with --mode workspace-write/],
    [['--mode', 'danger-full-access', '--deny-read', ws, 'true'], /^sandspawn: --deny-read: cannot be enforced with --mode danger-full-access/],
    [['no-such-command-xyz'], /^sandspawn: no-such-command-xyz: command not found/],
    [['/etc/passwd'], /^sandspawn: \/etc\/passwd: command is not executable/],
  ]
  for (const [args, words] of cases) {
    const r = cli(args)
    assert.match(r.stderr.split('\n')[0], words, `${args.join(' ')}\n${ctx(r)}`)
    assert.doesNotMatch(r.stderr, /options\.|writableRoots|denyRead|os error|^spawn /m, `${args.join(' ')}\n${ctx(r)}`)
  }
  assert.equal(cli(['no-such-command-xyz']).status, 127)
  assert.equal(cli(['/etc/passwd']).status, 126)
  assert.equal(cli(['--cwd', '/no/such/dir', 'true']).status, 2)
  fs.rmSync(ws, { recursive: true })
})

test('relative --writable, --read-only and --deny-read resolve against --cwd, not the shell directory', () => {
  const ws = tmp('rel')
  fs.mkdirSync(path.join(ws, 'work'))
  fs.mkdirSync(path.join(ws, 'out'))
  fs.mkdirSync(path.join(ws, 'work', 'locked'))
  fs.writeFileSync(path.join(ws, 'work', 'secret'), 'top secret\n')
  const elsewhere = tmp('shell-dir') // the CLI's own cwd: nothing there matches
  const run = (args) => cli(['--cwd', path.join(ws, 'work'), ...args], { cwd: elsewhere })
  // ../out is ws/out only when resolved against --cwd (from `elsewhere` it would not exist).
  const w = run(['--writable', '../out', 'sh', '-c', `echo ok > ${ws}/out/f`])
  assert.equal(w.status, 0, ctx(w))
  assert.equal(fs.readFileSync(path.join(ws, 'out', 'f'), 'utf8'), 'ok\n')
  const ro = run(['--mode', 'workspace-write', '--read-only', 'locked', 'sh', '-c', `echo no > ${ws}/work/locked/f`])
  assert.notEqual(ro.status, 0, ctx(ro))
  assert.equal(fs.existsSync(path.join(ws, 'work', 'locked', 'f')), false)
  const dr = run(['--deny-read', 'secret', 'cat', `${ws}/work/secret`])
  assert.notEqual(dr.status, 0, ctx(dr))
  assert.doesNotMatch(dr.stdout, /top secret/)
  // A relative --cwd itself resolves against the shell's directory, as any CLI's does.
  const relCwd = cli(['--cwd', path.basename(ws), 'pwd'], { cwd: path.dirname(ws) })
  assert.equal(relCwd.stdout, `${ws}\n`, ctx(relCwd))
  fs.rmSync(ws, { recursive: true })
  fs.rmSync(elsewhere, { recursive: true })
})

test('a path flag written with = keeps its ~ (no shell expands it there): refused, never a path below the cwd that denies nothing', () => {
  // `--deny-read=~/.ssh` reached the CLI as `~/.ssh` (bash and zsh expand a tilde only at the start
  // of a word or in an assignment), was resolved against the cwd to `<cwd>/~/.ssh`, which does not
  // exist and so masks nothing: the command read ~/.ssh/id_x, nothing said (found by an attacker's
  // review, mode33).
  const ws = tmp('tilde')
  const home = tmp('tilde-home')
  fs.mkdirSync(path.join(home, '.ssh'))
  fs.writeFileSync(path.join(home, '.ssh', 'id_x'), 'PRIVATE KEY\n')
  const env = { ...process.env, HOME: home }
  const shell = spawnSync('bash', ['-c', 'printf %s --deny-read=~/.ssh'], { encoding: 'utf8', env })
  assert.equal(shell.stdout, '--deny-read=~/.ssh', 'bash leaves the tilde after = as it is')
  for (const flag of ['--deny-read', '--read-only', '--writable', '--cwd']) {
    const r = cli(['--no-pty', `${flag}=~/.ssh`, 'cat', path.join(home, '.ssh', 'id_x')], { cwd: ws, env })
    assert.doesNotMatch(r.stdout, /PRIVATE KEY/, `${flag}: ${ctx(r)}`)
    assert.equal(r.status, 2, `${flag}: ${ctx(r)}`)
    assert.match(r.stderr, new RegExp(`^sandspawn: ${flag} ~/\\.ssh: `), `${flag}: ${ctx(r)}`)
    assert.match(r.stderr, /\$HOME|expand/, `${flag}: ${ctx(r)}`)
  }
  // `~user` too; a path that only holds a ~ later on is a path like any other.
  const other = cli(['--no-pty', '--deny-read=~root/.ssh', 'true'], { cwd: ws, env })
  assert.equal(other.status, 2, ctx(other))
  fs.mkdirSync(path.join(ws, 'a~b'))
  const plain = cli(['--no-pty', '--deny-read=a~b', 'true'], { cwd: ws, env })
  assert.equal(plain.status, 0, ctx(plain))
  // A directory really named ~ is still reachable as ./~.
  fs.mkdirSync(path.join(ws, '~'))
  fs.writeFileSync(path.join(ws, '~', 'f'), 'tilde dir\n')
  const dotted = cli(['--no-pty', '--deny-read=./~', 'cat', path.join(ws, '~', 'f')], { cwd: ws, env })
  assert.doesNotMatch(dotted.stdout, /tilde dir/, ctx(dotted))
  fs.rmSync(ws, { recursive: true })
  fs.rmSync(home, { recursive: true })
})

test('a path flag with .. after a symlink names what the kernel finds there, as the command does, not the lexical path', () => {
  // `--deny-read link/../secret` (link -> other/dir) was resolved by path.resolve, which drops
  // `link/..` as text: the CLI denied ws/secret, while the command's `cat link/../secret` (the
  // kernel going up from the link's target) read other/secret, nothing said; the same with the
  // absolute spelling and --read-only. The library resolves `..` as the kernel does (found by an
  // attacker's review, mode33).
  const root = tmp('dotdot')
  const ws = path.join(root, 'ws')
  const other = path.join(root, 'other')
  fs.mkdirSync(path.join(other, 'dir'), { recursive: true })
  fs.mkdirSync(ws)
  fs.writeFileSync(path.join(other, 'secret'), 'OTHER SECRET\n')
  fs.writeFileSync(path.join(ws, 'secret'), 'ws secret\n')
  fs.symlinkSync(path.join(other, 'dir'), path.join(ws, 'link'))
  for (const spelled of ['link/../secret', `${ws}/link/../secret`]) {
    const r = cli(['--no-pty', '--deny-read', spelled, 'cat', 'link/../secret'], { cwd: ws })
    assert.doesNotMatch(r.stdout, /OTHER SECRET/, `${spelled}: ${ctx(r)}`)
    assert.notEqual(r.status, 0, `${spelled}: ${ctx(r)}`)
  }
  const ro = cli(['--no-pty', '--writable', other, '--read-only', 'link/../secret', 'sh', '-c', 'echo changed > link/../secret'], { cwd: ws })
  assert.notEqual(ro.status, 0, ctx(ro))
  assert.equal(fs.readFileSync(path.join(other, 'secret'), 'utf8'), 'OTHER SECRET\n', ctx(ro))
  // Plain relative paths are as before.
  const plain = cli(['--no-pty', '--deny-read', './secret', 'cat', 'secret'], { cwd: ws })
  assert.doesNotMatch(plain.stdout, /ws secret/, ctx(plain))
  fs.rmSync(root, { recursive: true })
})

test('--cwd with .. after a symlink runs the command where the kernel (and the API\'s cwd) finds it, and relative flags resolve from there', () => {
  // `--cwd link/..` (link -> sub/deeper) is ws/sub to the kernel, to `ls link/..` and to the API's
  // `cwd`, but the CLI's path.resolve dropped `link/..` as text: a workspace-write run got ws
  // writable instead of ws/sub and planted a file at its top, and `--deny-read secret` denied
  // ws/secret while the command read ws/sub/secret there (found by an attacker's review, mode34).
  const ws = tmp('cwd-dotdot')
  const sub = path.join(ws, 'sub')
  fs.mkdirSync(path.join(sub, 'deeper'), { recursive: true })
  fs.symlinkSync('sub/deeper', path.join(ws, 'link'))
  fs.writeFileSync(path.join(sub, 'secret'), 'SUB SECRET\n')
  for (const spelled of ['link/..', `${ws}/link/..`, './link/./..']) {
    const r = cli(['--no-pty', '--mode', 'workspace-write', '--tmp', 'read-only', '--cwd', spelled, 'sh', '-c', 'pwd -P; echo p > planted'], { cwd: ws })
    assert.equal(r.status, 0, `${spelled}: ${ctx(r)}`)
    assert.equal(r.stdout.trim(), sub, `${spelled}: the command runs where the kernel's ${spelled} is: ${ctx(r)}`)
    assert.ok(!fs.existsSync(path.join(ws, 'planted')), `${spelled}: the workspace's top, never named, was writable: ${ctx(r)}`)
    fs.rmSync(path.join(sub, 'planted'), { force: true })
    const denied = cli(['--no-pty', '--cwd', spelled, '--deny-read', 'secret', 'cat', 'secret'], { cwd: ws })
    assert.doesNotMatch(denied.stdout, /SUB SECRET/, `${spelled}: --deny-read secret names another file than the command's secret: ${ctx(denied)}`)
  }
  fs.rmSync(ws, { recursive: true })
})

test('an empty path flag (a variable the shell left empty: --cwd "$PROJECT") is refused, never the shell\'s directory', () => {
  // `--cwd ''` ran the command in the shell's own directory, writable in workspace-write (an
  // agent's `--cwd "$PROJECT"` with PROJECT unset: its home); the API refuses an empty path, the
  // CLI took it for `.` (found by an attacker's review, mode33).
  const shellDir = tmp('empty-cwd')
  for (const flag of ['--cwd', '--writable', '--read-only', '--deny-read']) {
    for (const args of [[flag, ''], [`${flag}=`]]) {
      const r = cli(['--no-pty', '--mode', 'workspace-write', ...args, 'sh', '-c', 'echo planted > marker'], { cwd: shellDir })
      assert.equal(r.status, 2, `${args.join(' ')}: ${ctx(r)}`)
      assert.match(r.stderr, new RegExp(`^sandspawn: ${flag}: an empty path`), `${args.join(' ')}: ${ctx(r)}`)
      assert.equal(fs.existsSync(path.join(shellDir, 'marker')), false, `${args.join(' ')}: ${ctx(r)}`)
    }
  }
  fs.rmSync(shellDir, { recursive: true })
})

// ---- --json for every outcome ---------------------------------------------------------------

test('--json: errors are { error: { code, message } } on stdout; doctor and explain print JSON', () => {
  const parse = (r) => {
    try {
      return JSON.parse(r.stdout)
    } catch {
      assert.fail(`stdout is not JSON\n${ctx(r)}`)
    }
  }
  for (const [args, code, status] of [
    [['--json', 'no-such-command-xyz'], 'ENOENT', 127],
    [['--json', '--cwd', '/no/such/dir', 'true'], 'ERR_SANDBOX_INVALID_OPTIONS', 2],
    [['--json', '--bogus', 'true'], 'ERR_SANDBOX_INVALID_OPTIONS', 2],
    [['--json', '--timeout', 'x', 'true'], 'ERR_SANDBOX_INVALID_OPTIONS', 2],
    [['--json'], 'ERR_SANDBOX_INVALID_OPTIONS', 2],
  ]) {
    const r = cli(args)
    assert.equal(r.status, status, `${args.join(' ')}\n${ctx(r)}`)
    const body = parse(r)
    assert.deepEqual(Object.keys(body), ['error'])
    assert.equal(body.error.code, code)
    assert.equal(typeof body.error.message, 'string')
    assert.doesNotMatch(body.error.message, /options\.|os error/)
  }
  const doctor = cli(['doctor', '--json'])
  const caps = parse(doctor)
  assert.equal(typeof caps.available, 'boolean')
  assert.equal(doctor.status, caps.available ? 0 : 1)
  const explain = cli(['explain', '--json', '--mode', 'workspace-write', 'ls'])
  assert.equal(explain.status, 0, ctx(explain))
  const plan = parse(explain)
  assert.equal(plan.sandboxType, 'bwrap')
  assert.equal(plan.args.at(-1), 'ls')
  assert.equal(plan.envSet.SANDSPAWN_SANDBOX, 'bwrap')
  // Self-contained: the helper applies the seccomp filter inside, no descriptor is needed.
  assert.deepEqual(plan.extraFds, [])
  assert.ok(plan.args.includes('--filter=inet') && plan.args.includes('--own-userns'), plan.args.join(' '))
})

// ---- stdin ----------------------------------------------------------------------------------

test('piped stdin reaches the command, all of it, and its end closes the command\'s stdin', () => {
  const r = cli(['cat'], { input: 'data\n' })
  assert.equal(r.status, 0, ctx(r))
  assert.equal(r.stdout, 'data\n')
  // More than any pipe buffer: forwarded chunk by chunk, nothing lost.
  const big = Buffer.alloc(8 * 1024 * 1024, 'abcdefgh')
  const wc = cli(['wc', '-c'], { input: big })
  assert.equal(wc.status, 0, ctx(wc))
  assert.equal(wc.stdout.trim(), String(big.length))
})

test('a small piped input that arrives with its end is never lost (25 runs)', async () => {
  // The end of input must not overtake the write in flight (it did, in about 1 run of 10).
  const runOnce = () =>
    new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, '--json', 'cat'], { stdio: ['pipe', 'pipe', 'pipe'] })
      child.stdin.end('data\n')
      collect(child).then(resolve)
    })
  for (let round = 0; round < 5; round++) {
    const outs = await Promise.all([1, 2, 3, 4, 5].map(runOnce))
    for (const out of outs) {
      assert.equal(out.code, 0, out.stderr)
      assert.equal(JSON.parse(out.stdout).stdout, 'data\n')
    }
  }
})

test('stdin from /dev/null, or closed, still ends the run', () => {
  const devnull = cli(['cat'], { stdio: ['ignore', 'pipe', 'pipe'] })
  assert.equal(devnull.status, 0, ctx(devnull))
  assert.equal(devnull.stdout, '')
  const closed = spawnSync('sh', ['-c', `exec "${process.execPath}" "${CLI}" sh -c 'cat; echo end' <&-`], { encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
  assert.equal(closed.status, 0, ctx(closed))
  assert.equal(closed.stdout, 'end\n')
})

test('a command that never reads stdin does not keep the CLI waiting on it', async () => {
  // The CLI's stdin stays open and unwritten: it must still exit when the command does.
  const child = spawn(process.execPath, [CLI, 'sh', '-c', 'echo done'], { stdio: ['pipe', 'pipe', 'pipe'] })
  const out = await collect(child)
  assert.equal(out.code, 0, out.stderr)
  assert.equal(out.stdout, 'done\n')
  child.stdin.destroy()
  // An endless producer: the CLI exits, and the producer dies of SIGPIPE.
  const endless = spawnSync('sh', ['-c', `yes | "${process.execPath}" "${CLI}" true; echo "cli=$?"`], { encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
  assert.equal(endless.signal, null, ctx(endless))
  assert.equal(endless.stdout, 'cli=0\n')
})

test('when the reader of its stdout goes away, the CLI ends the command like a pipeline does (141), without a stack trace', () => {
  const r = spawnSync('bash', ['-c', `"${process.execPath}" "${CLI}" yes | head -n 2; echo "cli=\${PIPESTATUS[0]}" >&2`], { encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
  assert.equal(r.signal, null, ctx(r))
  assert.equal(r.stdout, 'y\ny\n')
  assert.match(r.stderr, /cli=141$/m, ctx(r))
  assert.doesNotMatch(r.stderr, /EPIPE|at /, ctx(r))
})

// ---- signals --------------------------------------------------------------------------------

/** A CLI running `sh` that starts a marked background sleep, once it says it is ready. */
async function startTree(extra = [], script = 'sleep 987.SUFFIX & echo ready; wait') {
  const mark = `987.${process.pid}${Math.floor(Math.random() * 1e6)}`
  const child = spawn(process.execPath, [CLI, ...extra, 'sh', '-c', script.replace('987.SUFFIX', mark)], { stdio: ['ignore', 'pipe', 'pipe'] })
  const done = collect(child)
  await new Promise((resolve, reject) => {
    let seen = ''
    child.stdout.on('data', (d) => {
      seen += d
      if (seen.includes('ready')) resolve()
    })
    child.once('exit', () => reject(new Error(`the CLI exited before the command was ready: ${seen}`)))
  })
  // `echo ready` can run before the background sleep has exec'd: wait until it is on the host.
  await until(() => pidsWith(mark).length > 0)
  return { child, done, mark }
}

/** Host pids of `sleep <mark>` (the sandboxed tree is visible from the host; the CLI is not a match). */
function pidsWith(mark) {
  const found = []
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `sleep\0${mark}\0`) found.push(pid)
    } catch {
      // gone meanwhile
    }
  }
  return found
}

for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  test(`${signal} to the CLI reaches the sandboxed tree, which is gone when the CLI exits ${status}`, async () => {
    const { child, done, mark } = await startTree()
    child.kill(signal)
    const out = await done
    assert.equal(out.code, status, out.stderr)
    assert.deepEqual(pidsWith(mark), [])
  })
}

test('a command that ignores SIGINT is killed by a second one', async () => {
  const { child, done, mark } = await startTree([], "trap '' INT; sleep 987.SUFFIX & echo ready; wait; wait")
  child.kill('SIGINT')
  await new Promise((r) => setTimeout(r, 300))
  child.kill('SIGINT')
  const out = await done
  assert.equal(out.code, 130, out.stderr)
  assert.deepEqual(pidsWith(mark), [])
})

test('--json after SIGINT still prints the result (with the signal) and exits 130', async () => {
  // With --json nothing is streamed: readiness is the marked sleep showing up on the host.
  const mark = `987.${process.pid}${Math.floor(Math.random() * 1e6)}`
  const child = spawn(process.execPath, [CLI, '--json', 'sh', '-c', `sleep ${mark}`], { stdio: ['ignore', 'pipe', 'pipe'] })
  const done = collect(child)
  await until(() => pidsWith(mark).length > 0)
  child.kill('SIGINT')
  const out = await done
  assert.equal(out.code, 130, out.stderr)
  assert.equal(JSON.parse(out.stdout).signal, 'SIGINT')
  assert.deepEqual(pidsWith(mark), [])
})

// ---- denials --------------------------------------------------------------------------------

test('the denial line says which flag would allow it', () => {
  const ws = tmp('denial')
  const etc = cli(['sh', '-c', 'echo x > /etc/sandspawn-cli-denial'], { cwd: ws })
  const etcLine = etc.stderr.split('\n').find((l) => l.startsWith('sandspawn: sandbox denied'))
  assert.match(etcLine, /read_only_file_system: \/etc\/sandspawn-cli-denial\); to allow it, add --writable \/etc$/, ctx(etc))
  const here = cli(['sh', '-c', `mkdir -p ${ws}/sub && echo x > ${ws}/sub/f`], { cwd: ws })
  assert.match(here.stderr, new RegExp(`to allow it, add --mode workspace-write \\(makes ${ws} writable\\) or --writable ${ws}$`, 'm'), ctx(here))
  const net = cli(['sh', '-c', 'echo "curl: (6) Could not resolve host: example.invalid" >&2; exit 6'], { cwd: ws })
  assert.match(net.stderr, /sandbox denied this command \(network_unreachable\); to allow it, add --network$/m, ctx(net))
  fs.rmSync(ws, { recursive: true })
})

// Found by an attacker's review: a denied write under /sys got "to allow it, add --writable /sys/...",
// and following it let a root command change the host's kernel settings. Such roots are refused
// now; the line says so instead of suggesting one. (The line alone: nothing writes under /sys.)
test('the denial line never suggests --writable for a kernel filesystem (/sys, /proc, cgroupfs)', () => {
  const { denialLine } = require('../lib/cli/denial-line')
  const ws = tmp('denial-kernel')
  const options = { cwd: ws, sandbox: { mode: 'read-only' } }
  const line = (p) => denialLine({ kind: 'filesystem', reason: 'read_only_file_system', path: p }, options, 'bwrap')
  const kernel = ['/sys/kernel/mm/transparent_hugepage/khugepaged/pages_to_scan', '/sys/kernel/mm/sandspawn-missing', '/proc/irq/0/smp_affinity', '/proc/sys/kernel/hostname', '/sys/fs/cgroup/unified/cgroup.procs']
  for (const p of kernel) {
    assert.doesNotMatch(line(p), /--writable|--mode workspace-write/, p)
    assert.match(line(p), /kernel settings cannot be made writable from a sandbox/, p)
  }
  const inWorkspace = path.join(ws, 'sys', 'f')
  assert.match(line(inWorkspace), new RegExp(`--writable ${ws}$`), 'a path merely named sys is no kernel setting')
  assert.match(line('/etc/x'), /to allow it, add --writable \/etc$/)
  fs.rmSync(ws, { recursive: true })
})

// Found by an attacker's review (mode33): the path comes from the command's output, and a faked
// "Read-only file system" for /root/.ssh/authorized_keys got "to allow it, add --writable /root".
test('the denial line never suggests --writable for the home, a directory holding it, or its keys', () => {
  const { denialLine } = require('../lib/cli/denial-line')
  const ws = tmp('denial-home')
  const home = fs.realpathSync(os.homedir())
  const options = { cwd: ws, sandbox: { mode: 'read-only' } }
  const line = (p) => denialLine({ kind: 'filesystem', reason: 'read_only_file_system', path: p }, options, 'bwrap')
  for (const p of [path.join(home, '.ssh', 'authorized_keys'), path.join(home, '.bashrc'), path.join(home, '.sandspawn-missing', 'x'), '/sandspawn-missing', path.join(home, '.gnupg', 'x', 'y')]) {
    assert.doesNotMatch(line(p), /to allow it, add --writable/, p)
    assert.match(line(p), /not suggesting --writable .*(your home|holds your home|lies in your home's)/, p)
  }
  assert.match(line('/etc/x'), /to allow it, add --writable \/etc$/, 'elsewhere the flag is still suggested')
  fs.rmSync(ws, { recursive: true })
})

const QUESTION = 'Run again without the sandbox? [yes/N] '
/** The CLI on a terminal that types as `steps` say (fixtures/typing-driver.py): `{ stdout }` is the screen. */
function typing(steps, args) {
  const driver = path.join(__dirname, 'fixtures', 'typing-driver.py')
  const r = spawnSync('python3', [driver, JSON.stringify(steps), process.execPath, CLI, ...args], { encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
  return { ...r, stdout: r.status === 0 ? JSON.parse(r.stdout).output : r.stdout }
}

test('--ask on a terminal prints the denial line once, asks, and a "n" keeps the sandbox', () => {
  const out = tmp('ask')
  // `script` gives the CLI a terminal on stdin, so --ask really asks.
  const r = typing([[QUESTION, 'n\r']], ['--ask', 'sh', '-c', `echo x > ${out}/f`])
  assert.equal(r.signal, null, ctx(r))
  const text = r.stdout.replace(/\r/g, '')
  assert.match(text, /Run again without the sandbox\? \[yes\/N\]/, ctx(r))
  assert.equal(text.split('\n').filter((l) => l.includes('sandbox denied this command')).length, 1, ctx(r))
  assert.equal(fs.existsSync(path.join(out, 'f')), false)
  fs.rmSync(out, { recursive: true })
})

test('--ask: what the command printed cannot hide the question to run again without the sandbox', () => {
  // A fake question, then conceal (or a window-title string left open, or line drawing): the real
  // question was invisible, and the "y" meant for the fake one ran the command unsandboxed.
  const { printedReadably } = require('./fixtures/screen-state')
  // Left and right margins one column apart (DECLRMM on, then DECSLRM): found by an attacker's
  // review (mode28), each line of sandspawn's then came one character a row on xterm.
  // A hyperlink left open (OSC 8): sandspawn's lines became the command's link, so a click on the
  // path a warning names opened where the command chose (an attacker's review, mode30: in xterm.js,
  // VS Code's terminal, the link outlived the reset).
  // Synchronized output left on (mode 2026): the terminal draws nothing more until it ends, so the
  // question was not on the screen (an attacker's review, mode30: xterm.js gives up after a second,
  // other terminals may wait longer).
  for (const trap of ['\\033[8m', '\\033]2;', '\\033(0', '\\033]10;#000000\\007\\033]11;#000000\\007', '\\033[?69h\\033[3;3s', '\\033]8;;file:///tmp/decoy\\033\\\\', '\\033[?2026h']) {
    const out = tmp('ask-spoof')
    try {
      const cmd = `printf 'Re-run the failed tests? [y/N] ${trap}'; echo x > ${out}/f`
      const r = typing([[QUESTION, 'n\r']], ['--ask', 'sh', '-c', cmd])
      assert.equal(r.signal, null, ctx(r))
      for (const line of ['sandspawn: sandbox denied this command', QUESTION]) {
        assert.ok(printedReadably(r.stdout, line), `after ${trap}: ${JSON.stringify(r.stdout)}`)
      }
      assert.equal(fs.existsSync(path.join(out, 'f')), false)
    } finally {
      fs.rmSync(out, { recursive: true, force: true })
    }
  }
})

// Found by an attacker's review (mode29): with stderr not the terminal (`2>/dev/null`, `2>err.log`)
// the CLI still asked "Run again without the sandbox?" on the terminal, its question and the
// denial line written where nobody saw them: the "yes" a user typed for the command's own prompt
// ("Type yes to continue:") on that terminal ran the command without the sandbox.
test('--ask with stderr not on the terminal: the question nobody sees is not asked, and "yes" typed for the command\'s own prompt runs nothing unsandboxed', () => {
  const out = tmp('ask-hidden')
  try {
    const script = [
      `if touch ${out}/ran 2>/dev/null; then echo RAN-UNSANDBOXED; exit 0; fi`,
      "printf 'Type yes to continue: '",
      `echo "touch: cannot touch '${out}/ran': Read-only file system" >&2`,
      'exit 1',
    ].join('\n')
    fs.writeFileSync(path.join(out, 'job.sh'), script)
    for (const err of ['/dev/null', path.join(out, 'err.log')]) {
      const driver = path.join(__dirname, 'fixtures', 'typing-driver.py')
      const argv = ['sh', '-c', `exec "$0" "$@" 2>'${err}'`, process.execPath, CLI, '--ask', 'sh', path.join(out, 'job.sh')]
      const r = spawnSync('python3', [driver, JSON.stringify([['continue: ', 'yes\r']]), ...argv], { encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
      assert.equal(r.status, 0, ctx(r))
      const seen = JSON.parse(r.stdout)
      assert.equal(fs.existsSync(path.join(out, 'ran')), false, `stderr to ${err}: the command ran again without the sandbox, its question never on the screen:\n${seen.output}`)
      assert.doesNotMatch(seen.output, /RAN-UNSANDBOXED/)
      if (err !== '/dev/null') assert.match(fs.readFileSync(err, 'utf8'), /--ask: not asking to run again without the sandbox: stderr is not the terminal/)
    }
    // Stderr on the terminal by /dev/tty (whose descriptor names no terminal itself) is asked on.
    const driver = path.join(__dirname, 'fixtures', 'typing-driver.py')
    const argv = ['sh', '-c', 'exec "$0" "$@" 2>/dev/tty', process.execPath, CLI, '--ask', 'sh', path.join(out, 'job.sh')]
    const asked = spawnSync('python3', [driver, JSON.stringify([[QUESTION, 'no\r']]), ...argv], { encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
    assert.equal(asked.status, 0, ctx(asked))
    assert.deepEqual(JSON.parse(asked.stdout).unused, [], asked.stdout)
    assert.equal(fs.existsSync(path.join(out, 'ran')), false)
  } finally {
    fs.rmSync(out, { recursive: true, force: true })
  }
})

test('explain quotes an argument with invisible or C1 characters as a word bash reads back byte for byte, in any locale', () => {
  // Found by an attacker's review: U+0085 was printed as $'...\\x85...', which bash reads as the
  // single byte 0x85, not the character: the printed command named another path.
  const arg = 'dir\u0085name\u00ad\u200b\u009b\u{e0041}end\u001b'
  const r = cli(['explain', '--mode', 'read-only', '--', 'printf', '%s', arg])
  assert.equal(r.status, 0, ctx(r))
  const word = r.stdout.split(/\s+/).find((w) => w.startsWith("$'") && w.includes('dir'))
  assert.ok(word, r.stdout)
  for (const locale of ['C', 'C.UTF-8']) {
    const back = require('node:child_process').execFileSync('bash', ['-c', `printf %s ${word}`], { env: { ...process.env, LC_ALL: locale } })
    assert.equal(back.toString('hex'), Buffer.from(arg, 'utf8').toString('hex'), `${locale}: ${word}`)
  }
})

test('explain and errors show names from the workspace escaped: no sequence of theirs reaches the terminal', () => {
  // A nested repository whose directory name moves the cursor up and erases: the plan names its
  // .git (kept read-only), and explain printed the name raw.
  const { screenLines } = require('./fixtures/screen-state')
  const ws = tmp('explain-esc')
  try {
    const name = `x${'\x1b[1A\x1b[2K'.repeat(8)}`
    fs.mkdirSync(path.join(ws, name, '.git'), { recursive: true })
    const r = cli(['explain', '--mode', 'workspace-write', '--', 'true'], { cwd: ws })
    assert.equal(r.status, 0, ctx(r))
    assert.equal(r.stdout.includes('\x1b'), false, JSON.stringify(r.stdout))
    assert.match(r.stdout, /\$'[^' ]*x\\e\[1A\\e\[2K/, 'the name as a $\'...\' word of its escapes')
    assert.equal(screenLines(r.stdout)[0], 'sandbox:  bwrap')
    // An error naming a path the workspace chose (a cwd below it that does not exist).
    const missing = cli(['--cwd', path.join(ws, name, 'missing'), '--', 'true'], { cwd: ws })
    assert.notEqual(missing.status, 0, ctx(missing))
    assert.equal(missing.stderr.includes('\x1b'), false, JSON.stringify(missing.stderr))
    assert.match(missing.stderr, /x\\e\[1A\\e\[2K.*missing/, ctx(missing))
  } finally {
    fs.rmSync(ws, { recursive: true, force: true })
  }
})

test('--json on a terminal: nothing of the command reaches it raw, C1 controls and format characters included', () => {
  // An attacker's review (mode30): JSON.stringify escapes C0 controls but writes C1 controls
  // (U+0080-U+009F), bidi overrides and the other invisible characters as they are. xterm.js (VS
  // Code's terminal) acts on U+009B as on ESC [: a command whose output held
  // CSI H, CSI 2J, CSI 3J, a fake result, then CSI 8m erased the host-risk warning printed just
  // before the JSON and the screen, drew 'hostRisks: []' and concealed the real result below it.
  const ws = tmp('json-c1')
  try {
    const shown = '\u009b0m\u009bH\u009b2J\u009b3J{ "hostRisks": [] }\u0085\u202e\u200b\u2028\u{e0041}\u009b8m\u009dend'
    const script = `git init -q sub; printf '%s' '${shown}'; mkdir -p 'n\u009b2J'`
    const r = cli(['--json', '--mode', 'workspace-write', '--', 'sh', '-c', script], { cwd: ws })
    assert.equal(r.status, 0, ctx(r))
    const raw = [...r.stdout].filter((c) => /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}\p{Zl}\p{Zp}\p{Cn}\p{Cs}]/u.test(c) && c !== '\n')
    assert.deepEqual(raw.map((c) => `U+${c.codePointAt(0).toString(16)}`), [], 'written raw on the terminal')
    const result = JSON.parse(r.stdout)
    assert.equal(result.stdout, shown, 'the JSON still holds the command\'s output exactly')
    assert.ok(result.hostRisks.some((h) => h.kind === 'repository-created'), r.stdout)
    // Errors too: a cwd the workspace named.
    const missing = cli(['--json', '--cwd', path.join(ws, 'n\u009b2J', 'missing'), '--', 'true'], { cwd: ws })
    assert.notEqual(missing.status, 0, ctx(missing))
    assert.equal(/[\u0080-\u009f]/.test(missing.stdout), false, JSON.stringify(missing.stdout))
    assert.match(JSON.parse(missing.stdout).error.message, /n\u009b2J/)
  } finally {
    fs.rmSync(ws, { recursive: true, force: true })
  }
})

/** Poll `condition` every 20 ms; fails after the hang bound. */
async function until(condition) {
  const deadline = Date.now() + HANG_MS
  while (!condition()) {
    if (Date.now() > deadline) assert.fail('condition not reached within the hang bound')
    await new Promise((r) => setTimeout(r, 20))
  }
}

function collect(child) {
  return new Promise((resolve) => {
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_MS)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

test('the reset before sandspawn\'s lines notes default colours redefined in any chunk, also split between two', () => {
  // In a process of its own: the module keeps what the output did so far.
  const js = `
    const t = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'cli', 'terminal-reset.js'))})
    const tty = { isTTY: true }
    const seen = []
    t.observe(Buffer.from('plain output\\n')); seen.push(t.terminalReset(tty) === t.RESET)
    t.observe(Buffer.from('text \\x1b]1')); t.observe(Buffer.from('1;#000000\\x07 more')); seen.push(t.terminalReset(tty) === t.RESET + t.COLOUR_RESET)
    seen.push(t.terminalReset({ isTTY: false }) === '')
    process.stdout.write(JSON.stringify(seen))`
  const r = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8' })
  assert.deepEqual(JSON.parse(r.stdout), [true, true, true], r.stderr)
})

test('sandspawn\'s lines after the output start on a fresh line, cleared below on a terminal, whatever its last byte', () => {
  // An attacker's review: output ending inside an OSC string whose last byte is LF passed for a
  // line start (the terminal ignores that LF), and the question followed the command's text on its
  // line; text drawn below (then the cursor moved up) read as the question's end. In a process of
  // its own: the module keeps what it saw.
  const js = `
    const t = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'cli', 'terminal-reset.js'))})
    const tty = { isTTY: true }
    const file = { isTTY: false }
    const seen = []
    seen.push(t.freshLine(tty)) // nothing printed yet: the cursor is where the shell left it
    t.observe(Buffer.from('plain\\n')); seen.push(t.freshLine(tty))
    seen.push(t.freshLine(tty)) // right after a line of ours
    t.observe(Buffer.from('text -> \\x1b]0;x\\n')); seen.push(t.freshLine(tty))
    t.observe(Buffer.from('no newline')); seen.push(t.freshLine(file))
    t.observe('ends\\n'); seen.push(t.freshLine(file))
    process.stdout.write(JSON.stringify(seen))`
  const r = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8' })
  const { RESET, COLOUR_RESET } = require('../lib/cli/terminal-reset')
  assert.deepEqual(JSON.parse(r.stdout), [`${RESET}\x1b[J`, `${RESET}\r\n\x1b[J`, `${RESET}\x1b[J`, `${RESET}${COLOUR_RESET}\r\n\x1b[J`, '\n', ''], r.stderr)
})

test('the default colours are set back after any OSC in the output, however its number is written', () => {
  // Terminals read an OSC's number as an integer and tmux skips C0 characters inside it, so
  // ESC ]010; and ESC ]1^A0; set the default foreground as ESC ]10; does: a check of the number's
  // spelling let a run turn the screen black on black before sandspawn's question (found by an
  // attacker's review, in tmux). Each case in a process of its own: the module keeps what it saw.
  const cases = ['\\x1b]010;#000000\\x07', '\\x1b]0011;#000000\\x1b\\\\', '\\x1b]1\\x010;#000000\\x07', '\\x9d011;#000000\\x07', '\\x1b]4;7;#000000\\x07', '\\x1b', ']0;title\\x07']
  for (const [i, c] of [[0, [cases[0]]], [1, [cases[1]]], [2, [cases[2]]], [3, [cases[3]]], [4, [cases[4]]], [5, [cases[5], cases[6]]]]) {
    const js = `
      const t = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'cli', 'terminal-reset.js'))})
      for (const chunk of ${JSON.stringify(c)}) t.observe(Buffer.from(eval('"' + chunk + '"'), 'latin1'))
      process.stdout.write(JSON.stringify(t.terminalReset({ isTTY: true }) === t.RESET + t.COLOUR_RESET))`
    const r = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8' })
    assert.equal(r.stdout, 'true', `case ${i}: ${JSON.stringify(c)} ${r.stderr}`)
  }
})

test('after a scroll region the command set, sandspawn\'s lines all stay on the screen (in tmux, a real terminal)', (t) => {
  // A command that confines scrolling to two rows (DECSTBM) made each of sandspawn's later lines
  // scroll the one before out of sight: of a review listing or host-risk warnings only the last
  // line and the question were left (found by a review of the terminal reset, shown in tmux).
  const tmux = spawnSync('tmux', ['-V'], { encoding: 'utf8' })
  if (tmux.status !== 0) return t.skip('tmux is not installed: no terminal emulator to look at')
  const dir = tmp('scroll')
  const env = { ...process.env, TMUX_TMPDIR: dir }
  const run = (args) => spawnSync('tmux', ['-f', '/dev/null', ...args], { encoding: 'utf8', env, timeout: HANG_MS })
  try {
    const script = path.join(dir, 'show.js')
    fs.writeFileSync(script, `
      const { terminalReset } = require(${JSON.stringify(path.join(__dirname, '..', 'lib', 'cli', 'terminal-reset.js'))})
      process.stdout.write('before\\n\\x1b[3;4r\\x1b[4;1H')
      process.stdout.write(terminalReset(process.stdout) + 'risk one\\nrisk two\\nrisk three\\nquestion? [y/N]', () => setTimeout(() => {}, 20_000))`)
    assert.equal(run(['new-session', '-d', '-s', 'scroll', '-x', '80', '-y', '12', `${process.execPath} ${script}`]).status, 0)
    let screen = ''
    for (let i = 0; i < 100 && !screen.includes('question?'); i++) {
      spawnSync('sleep', ['0.05'])
      screen = run(['capture-pane', '-p', '-t', 'scroll']).stdout
    }
    const lines = screen.split('\n').filter(Boolean)
    assert.deepEqual(lines, ['before', 'risk one', 'risk two', 'risk three', 'question? [y/N]'], screen)
  } finally {
    run(['kill-server'])
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

/**
 * Run `js` (a node script; RESET_MODULE names lib/cli/terminal-reset.js in it) in a detached tmux
 * pane of 60x12, a real terminal emulator, and call `look(tmux)` with a runner of tmux commands
 * once `ready` is on the screen. Skips where tmux is not installed.
 */
function inTmux(t, tag, js, ready, look) {
  const tmux = spawnSync('tmux', ['-V'], { encoding: 'utf8' })
  if (tmux.status !== 0) return t.skip('tmux is not installed: no terminal emulator to look at')
  const dir = tmp(tag)
  const env = { ...process.env, TMUX_TMPDIR: dir }
  const run = (args) => spawnSync('tmux', ['-f', '/dev/null', ...args], { encoding: 'utf8', env, timeout: HANG_MS })
  const screen = () => run(['capture-pane', '-p', '-S', '-200', '-t', tag]).stdout
  try {
    const script = path.join(dir, 'show.js')
    const resetModule = JSON.stringify(path.join(__dirname, '..', 'lib', 'cli', 'terminal-reset.js'))
    fs.writeFileSync(script, js.replaceAll('RESET_MODULE', resetModule).replaceAll('DIR', JSON.stringify(dir)))
    assert.equal(run(['new-session', '-d', '-s', tag, '-x', '60', '-y', '12', `${process.execPath} ${script}`]).status, 0)
    for (let i = 0; i < 200 && !screen().includes(ready); i++) spawnSync('sleep', ['0.05'])
    look({ run, screen, dir })
  } finally {
    run(['kill-server'])
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

test('a command that leaves the terminal on the alternate screen: sandspawn\'s lines are all shown on the main screen, and nothing of the user\'s is erased (in tmux)', (t) => {
  // The alternate screen has no scrollback: a review listing or host-risk warnings longer than the
  // screen scrolled off its top, and all of them vanished when the terminal left it later (found by
  // a review of the terminal reset). The second case guards against leaving it blindly: ESC [?1049l
  // also puts the cursor where an earlier full-screen program (here at the top) entered it, and the
  // erase below sandspawn's fresh line then wiped the user's screen.
  const cases = {
    'left on': '\\x1b[?1049h\\x1b[Hfull-screen app\\r\\nits row 2',
    'never used (an earlier one at the top)': '\\x1b[H\\x1b[?1049h\\x1b[?1049l\\x1b[12;1Hcommand output\\r\\nmore',
  }
  for (const [name, output] of Object.entries(cases)) {
    const js = `
      const t = require(RESET_MODULE)
      let user = ''
      for (let i = 1; i <= 20; i++) user += 'user history ' + i + '\\r\\n'
      const output = ${JSON.stringify(output)}.replace(/\\\\x1b/g, '\\x1b').replace(/\\\\r\\\\n/g, '\\r\\n')
      process.stdout.write(user + output)
      t.observe(Buffer.from(output))
      let ours = []
      for (let i = 1; i <= 20; i++) ours.push('sandspawn line ' + i)
      process.stdout.write(t.freshLine(process.stdout) + ours.join('\\n') + '\\nquestion? [y/N]', () => setTimeout(() => {}, 20_000))`
    inTmux(t, 'alt', js, 'question?', ({ run, screen }) => {
      const lines = screen().split('\n')
      const alternate = run(['display', '-p', '-t', 'alt', '#{alternate_on}']).stdout.trim()
      for (let i = 1; i <= 20; i++) {
        assert.ok(lines.includes(`sandspawn line ${i}`), `${name}: sandspawn line ${i} lost (alternate screen: ${alternate})\n${lines.join('\n')}`)
        assert.ok(lines.includes(`user history ${i}`), `${name}: user history ${i} erased\n${lines.join('\n')}`)
      }
      assert.equal(alternate, '0', name)
    })
  }
})

test('after the command turned on bracketed paste, the application keypad, mouse reporting and insert mode, the answer typed or pasted at sandspawn\'s question is read as typed (in tmux)', (t) => {
  // Left on by the command, each changed what the user's keys send or how their echo looks
  // (found by a review of the terminal reset): "yes" pasted arrived as ESC[200~yes ESC[201~ (not
  // "yes": a refusal), the keypad's Enter sent ESC O M and ended no line, any mouse move sent
  // ESC[<35;... (the network question takes the first byte: refused), and with insert mode a
  // Backspace's echo (BS SP BS) pushed the erased letter right instead of blanking it, so the line
  // on the screen was not the answer read.
  const js = `
    const t = require(RESET_MODULE)
    const output = 'command output \\x1b[?2004h\\x1b=\\x1b[?1003h\\x1b[?1006h\\x1b[4h'
    process.stdout.write(output)
    t.observe(Buffer.from(output))
    process.stdout.write(t.freshLine(process.stdout) + 'question? ')
    const lines = []
    // Written whole, then renamed: the test reads it while this writes, and a file being rewritten
    // in place is empty for a moment (CI read 'Unexpected end of JSON input' once).
    const fs = require('fs'), path = require('path')
    process.stdin.on('data', (d) => { lines.push(String(d)); fs.writeFileSync(path.join(DIR, 'answer.new'), JSON.stringify(lines)); fs.renameSync(path.join(DIR, 'answer.new'), path.join(DIR, 'answer')) })`
  inTmux(t, 'modes', js, 'question?', ({ run, screen, dir }) => {
    const flags = run(['display', '-p', '-t', 'modes', '#{keypad_flag} #{mouse_any_flag} #{mouse_sgr_flag} #{insert_flag}']).stdout.trim()
    run(['send-keys', '-t', 'modes', '-l', 'yesx'])
    run(['send-keys', '-t', 'modes', 'BSpace'])
    // The line as shown once the Backspace's echo is on the screen.
    const line = () => screen().split('\n').find((l) => l.startsWith('question?')) || ''
    for (let i = 0; i < 100 && !(line().includes('yes') && !line().includes('yesx')); i++) spawnSync('sleep', ['0.05'])
    const shown = line()
    run(['send-keys', '-t', 'modes', 'C-u'])
    run(['set-buffer', 'yes'])
    run(['paste-buffer', '-p', '-t', 'modes'])
    run(['send-keys', '-t', 'modes', 'Enter'])
    run(['send-keys', '-t', 'modes', '-l', 'no'])
    run(['send-keys', '-t', 'modes', 'KPEnter'])
    const file = path.join(dir, 'answer')
    const read = () => (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : [])
    for (let i = 0; i < 60 && read().length < 2; i++) spawnSync('sleep', ['0.05'])
    assert.deepEqual({ flags, shown, answers: read() }, { flags: '0 0 0 0', shown: 'question? yes', answers: ['yes\n', 'no\n'] })
  })
})
