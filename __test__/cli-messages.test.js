'use strict'
// Messages that point at the real cause (issue 31): sandspawn nested in another sandbox on a host
// without a system bwrap says so first (not "install bubblewrap"), and a path a command printed
// that lies in its private tool cache (npm's "complete log" of a failed run) is mapped to where
// the file really is on the host. Every test spawns the real CLI.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { ladderBwrap } = require('./fixtures/ladder-bwrap')

const CLI = path.join(__dirname, '..', 'bin', 'sandspawn.js')
const HANG_MS = 60_000
const ctx = (r) => `status ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`

function tmp(t, tag) {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', `ss-cli-msg-${tag}-`)))
  t.after(() => {
    spawnSync('chmod', ['-R', 'u+rwx', dir])
    fs.rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

const outer = ladderBwrap()
test('nested in a sandbox that forbids user namespaces, on a host without a system bwrap: the nesting is the reason given, first', { skip: outer.path === null && outer.reason }, (t) => {
  const dir = tmp(t, 'nested')
  // The outer sandbox as another sandspawn, Codex or Claude Code makes it; PATH without any bwrap,
  // as on a fresh machine, so the bundled one is what fails inside.
  const argv = [outer.path, '--unshare-user', '--disable-userns', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', dir, dir, '--chdir', dir, '--',
    process.execPath, CLI, '/bin/echo', 'hi']
  const r = spawnSync(argv[0], argv.slice(1), { encoding: 'utf8', env: { PATH: '/nonexistent', HOME: dir }, timeout: HANG_MS, killSignal: 'SIGKILL' })
  assert.equal(r.status, 125, ctx(r))
  const first = r.stderr.split('\n')[0]
  assert.match(first, /^sandspawn: sandbox unavailable: bwrap may not create another namespace: this process is already inside a sandbox/, ctx(r))
  assert.ok(first.indexOf('install bubblewrap') < 0 || first.indexOf('install bubblewrap') > first.indexOf('already inside a sandbox'), ctx(r))
  assert.match(first, /Fix: run sandspawn outside the enclosing sandbox/, ctx(r))
})

test("npm's \"complete log\" path in a private cache is mapped to the file on the host", (t) => {
  const home = tmp(t, 'npm')
  const ws = path.join(home, 'ws')
  fs.mkdirSync(ws)
  fs.mkdirSync(path.join(home, '.npm'))
  const store = path.join(home, 'store')
  // The network is off: the lookup of a .invalid registry fails at once, and npm writes its log.
  // Without the npm_config_* variables `npm test` exports (its cache, /root/.npm, is no cache of
  // this HOME), so the inner npm uses ~/.npm as a user's npm would.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)))
  const r = spawnSync(process.execPath, [CLI, '--mode', 'workspace-write', 'npm', 'view', 'left-pad', 'version', '--registry', 'http://registry.example.invalid/'], {
    cwd: ws,
    encoding: 'utf8',
    env: { ...env, HOME: home, SANDSPAWN_TOOL_CACHE_DIR: store, npm_config_update_notifier: 'false' },
    timeout: HANG_MS,
    killSignal: 'SIGKILL',
  })
  assert.notEqual(r.status, 0, ctx(r))
  const printed = /complete log of this run can be found in:\s*(\S+\.log)/.exec(r.stderr)
  assert.ok(printed, ctx(r))
  assert.ok(printed[1].startsWith(path.join(home, '.npm', '_logs') + '/'), ctx(r))
  assert.equal(fs.existsSync(printed[1]), false, 'the file is not where npm says (the host cache is untouched)')
  const note = r.stderr.split('\n').find((l) => l.startsWith('sandspawn: note: '))
  assert.ok(note, ctx(r))
  const real = /on the host it is (\S+)$/.exec(note)[1]
  // The workspace's caches in the store, the run's writes folded into the npm cache's base.
  const scope = path.relative(store, real).split(path.sep)
  assert.deepEqual([scope[0], ...scope.slice(2)], ['workspaces', 'npm', 'base', '_logs', path.basename(printed[1])], real)
  assert.match(fs.readFileSync(real, 'utf8'), /verbose/, 'the note names the real log')
})

test('a cache path the command printed cannot erase the host-risk warning: notes are escaped, warnings come last', (t) => {
  // The attacker's run: a nested repository with core.fsmonitor (a host risk the CLI warns about),
  // then a file in ~/.npm/_logs (a private cache) whose name moves the cursor up and erases lines,
  // printed like npm's log path. The note echoed the name raw, after the warning, and erased it.
  const { screenLines } = require('./fixtures/screen-state')
  const home = tmp(t, 'note-esc')
  const ws = path.join(home, 'ws')
  fs.mkdirSync(ws)
  fs.mkdirSync(path.join(home, '.npm'))
  const script = [
    'mkdir sub && git -C sub init -q && git -C sub config core.fsmonitor "touch /var/tmp/ss-fsmon-pwned"',
    'E=$(printf "\\033"); NAME="x$(for i in 1 2 3 4 5; do printf "%s[1A%s[2K" "$E" "$E"; done)"',
    'mkdir -p "$HOME/.npm/_logs" && echo log > "$HOME/.npm/_logs/$NAME"',
    'echo "A complete log of this run can be found in: $HOME/.npm/_logs/$NAME" >&2',
  ].join('; ')
  const r = spawnSync(process.execPath, [CLI, '--mode', 'workspace-write', 'sh', '-c', script], {
    cwd: ws,
    encoding: 'utf8',
    env: { ...process.env, HOME: home, SANDSPAWN_TOOL_CACHE_DIR: path.join(home, 'store') },
    timeout: HANG_MS,
    killSignal: 'SIGKILL',
  })
  assert.equal(r.status, 0, ctx(r))
  const ours = r.stderr.split('\n').filter((l) => l.startsWith('sandspawn: '))
  const note = ours.find((l) => l.startsWith('sandspawn: note: '))
  assert.ok(note, ctx(r))
  assert.match(note, /_logs\/x\\e\[1A\\e\[2K/, 'the name is shown escaped')
  assert.equal(/[\x00-\x1f\x7f]/.test(note), false, JSON.stringify(note))
  // The warning is sandspawn's last line, and still on the screen.
  assert.match(ours.at(-1), /^sandspawn: warning: .*sub\/\.git\b/, ctx(r))
  const screen = screenLines(r.stdout + r.stderr)
  assert.ok(screen.some((l) => /^sandspawn: warning: .*sub\/\.git\b/.test(l)), screen.join('\n'))
})

test('a cache path printed back to back for 1 MiB costs the CLI a bounded time and memory, and the host-risk warning still comes', (t) => {
  // The attacker's run: stdout is the private npm cache's path, `$HOME/.npm/`, written back to back
  // 1 MiB long with nothing that ends a path, then an .envrc planted (a host risk the CLI warns
  // about, after the notes). Each of the ~60,000 places the path begins at was looked at with all
  // the output after it (a search to its end, a normalized copy kept in a Set): quadratic, 160 KB
  // of it took the CLI 30 s of CPU and 1.1 GB, and 1 MiB ran it out of memory before the warning.
  const home = tmp(t, 'note-cost')
  const ws = path.join(home, 'ws')
  fs.mkdirSync(ws)
  fs.mkdirSync(path.join(home, '.npm'))
  const script = 'yes "$HOME/.npm/" | tr -d "\\n" | head -c 1048576; echo; : > .envrc'
  const started = Date.now()
  const r = spawnSync(process.execPath, ['--max-old-space-size=256', CLI, '--mode', 'workspace-write', 'sh', '-c', script], {
    cwd: ws,
    encoding: 'utf8',
    maxBuffer: 8 * 1024 * 1024,
    env: { ...process.env, HOME: home, SANDSPAWN_TOOL_CACHE_DIR: path.join(home, 'store') },
    timeout: HANG_MS,
    killSignal: 'SIGKILL',
  })
  const took = Date.now() - started
  const shown = { status: r.status, signal: r.signal, stdout: `${(r.stdout || '').length} chars`, stderr: (r.stderr || '').slice(-2000) }
  assert.equal(r.status, 0, ctx(shown))
  assert.match(r.stderr.split('\n').filter((l) => l.startsWith('sandspawn: ')).at(-1) || '', /^sandspawn: warning: protected-name-created: .*\.envrc/, ctx(shown))
  assert.ok(took < 20_000, `the CLI took ${took} ms`)
})

// Found by an attacker's review (mode33): mode32 renamed the Landlock mode's refusals, but
// `sandspawn explain`'s refusals of what a plan cannot keep, `--protected-name .git`'s and `review`'s
// unknown id still named API fields and functions ("--network as a NetworkPolicy" for
// --allow-domain, "spawnSandboxed or startSandboxed", "build the plan with network: true",
// "Leave toolCaches out", "sandbox.protectGit", "options.changeSet"): errors name CLI flags
// (API.md, the CLI's second round).
test("explain's, --protected-name's and review's refusals name the CLI's flags and commands, never API fields", (t) => {
  const cwd = tmp(t, 'api-words')
  const API_WORDS = /options\.|sandbox\.[a-zA-Z]|NetworkPolicy|spawnSandboxed|startSandboxed|toolCaches|network: true|changeSet/
  const cases = [
    [['explain', '--allow-domain', 'x.test', 'true'], /--allow-domain/],
    [['explain', '--review', 'true'], /--review/],
    [['explain', '--mode', 'workspace-write', '--tool-caches', 'private', 'true'], /--tool-caches/],
    [['--mode', 'workspace-write', '--protected-name', '.git', 'true'], /--no-protect-git/],
    [['review', 'apply', 'cs-nope'], /cs-nope/],
    [['review', 'show', 'nope'], /nope/],
  ]
  for (const [args, names] of cases) {
    const r = spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
    assert.notEqual(r.status, 0, `${args.join(' ')}\n${ctx(r)}`)
    assert.match(r.stderr, names, `${args.join(' ')}\n${ctx(r)}`)
    assert.doesNotMatch(r.stderr, API_WORDS, `${args.join(' ')}\n${ctx(r)}`)
  }
})
