'use strict'
// The CLI flags for the policy fields a person needs (issue 31): --protect-git / --no-protect-git,
// --protected-name / --no-protected-names, --tool-caches, --allow-private, --open-files; each end
// to end through the real CLI. Flags that make no sense for the mode are usage errors, and every
// error speaks in flags, never in API fields.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const http = require('node:http')
const path = require('node:path')
const { spawn, spawnSync, execFileSync } = require('node:child_process')

const CLI = path.join(__dirname, '..', 'bin', 'sandspawn.js')
const HANG_MS = 30_000
const ctx = (r) => `status ${r.status}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`

function tmp(t, tag) {
  // Not under /tmp: workspace-write makes /tmp writable, which would blur what a flag allowed.
  const dir = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', `ss-cli-policy-${tag}-`)))
  t.after(() => {
    spawnSync('chmod', ['-R', 'u+rwx', dir])
    fs.rmSync(dir, { recursive: true, force: true })
  })
  return dir
}

function cli(args, opts = {}) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL', ...opts })
}

/** The CLI run asynchronously (the test's own HTTP server must keep answering meanwhile). */
function cliAsync(args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { ...opts, stdio: ['ignore', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), HANG_MS)
    child.on('close', (status) => {
      clearTimeout(timer)
      resolve({ status, stdout, stderr })
    })
  })
}

function gitRepo(dir) {
  execFileSync('git', ['init', '-q', dir])
  return ['git', '-c', 'user.email=t@example.invalid', '-c', 'user.name=t', '-c', 'commit.gpgsign=false']
}

test('--no-protect-git lets the command commit; --protect-git (the default) keeps .git read-only', (t) => {
  const ws = tmp(t, 'git')
  const git = gitRepo(ws)
  const commit = [...git, 'commit', '-q', '--allow-empty', '-m', 'from the sandbox']
  for (const flags of [[], ['--protect-git']]) {
    const r = cli(['--cwd', ws, '--mode', 'workspace-write', ...flags, '--', ...commit])
    assert.notEqual(r.status, 0, `${flags.join(' ')}: ${ctx(r)}`)
    assert.match(r.stderr, /Read-only file system/, ctx(r))
  }
  const r = cli(['--cwd', ws, '--mode', 'workspace-write', '--no-protect-git', '--', ...commit])
  assert.equal(r.status, 0, ctx(r))
  assert.equal(execFileSync('git', ['-C', ws, 'log', '--format=%s'], { encoding: 'utf8' }), 'from the sandbox\n')
})

test('--protected-name adds to the defaults; --no-protected-names drops them; both: only the named ones', (t) => {
  const ws = tmp(t, 'names')
  // Existing files: a protected one is bound read-only (a missing one would be created and moved
  // aside after the run, which hostRisks reports).
  const write = (names) => `for f in ${names.join(' ')}; do echo x >> "$f" 2>/dev/null && echo "wrote $f" || echo "refused $f"; done`
  const run = (flags) => {
    for (const f of ['.envrc', '.toolrc']) fs.writeFileSync(path.join(ws, f), 'host\n')
    const r = cli(['--cwd', ws, '--mode', 'workspace-write', ...flags, 'sh', '-c', write(['.envrc', '.toolrc'])])
    assert.equal(r.status, 0, ctx(r))
    return r.stdout.trim().split('\n')
  }
  assert.deepEqual(run([]), ['refused .envrc', 'wrote .toolrc'], 'the defaults')
  assert.deepEqual(run(['--protected-name', '.toolrc']), ['refused .envrc', 'refused .toolrc'], 'added to the defaults')
  assert.deepEqual(run(['--no-protected-names']), ['wrote .envrc', 'wrote .toolrc'], 'none')
  assert.deepEqual(run(['--no-protected-names', '--protected-name', '.toolrc']), ['wrote .envrc', 'refused .toolrc'], 'only the named one')
})

test('the defaults --protected-name adds to are the library\'s', async (t) => {
  const { defaultProtectedNames } = require('../lib/cli/options')
  const { spawnSandboxed } = require('..')
  const { policyOf } = require('../lib/process')
  const r = await spawnSandboxed(['true'], { sandbox: { mode: 'workspace-write', tmp: 'read-only' }, cwd: tmp(t, 'names') })
  assert.deepEqual(defaultProtectedNames(), policyOf(r).protectedNames)
  assert.ok(defaultProtectedNames().includes('.envrc'), defaultProtectedNames().join(' '))
})

test('--tool-caches none keeps the caches read-only; private (the default) gives a copy-on-write one', (t) => {
  const home = tmp(t, 'home')
  const ws = path.join(home, 'ws')
  fs.mkdirSync(ws)
  fs.mkdirSync(path.join(home, '.npm'))
  fs.writeFileSync(path.join(home, '.npm', 'host'), 'host\n')
  const env = { ...process.env, HOME: home, SANDSPAWN_TOOL_CACHE_DIR: path.join(home, 'store') }
  const script = 'echo new > "$HOME/.npm/new" && echo WROTE'
  const none = cli(['--cwd', ws, '--mode', 'workspace-write', '--tool-caches', 'none', '--json', 'sh', '-c', script], { env })
  const noneResult = JSON.parse(none.stdout)
  assert.equal(noneResult.toolCaches.mode, 'none', ctx(none))
  assert.notEqual(noneResult.exitCode, 0, ctx(none))
  assert.match(noneResult.stderr, /Read-only file system/)
  const priv = cli(['--cwd', ws, '--mode', 'workspace-write', '--tool-caches', 'private', '--json', 'sh', '-c', script], { env })
  const privResult = JSON.parse(priv.stdout)
  assert.equal(privResult.toolCaches.mode, 'private', ctx(priv))
  assert.equal(privResult.stdout, 'WROTE\n', ctx(priv))
  assert.deepEqual(fs.readdirSync(path.join(home, '.npm')), ['host'], 'the host cache is unchanged')
})

test('--allow-private lets the allow-list reach a loopback service; without it the proxy refuses it', async (t) => {
  const server = http.createServer((req, res) => res.end('hello from the host\n'))
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => server.close())
  const url = `http://127.0.0.1:${server.address().port}/`
  // curl through the proxy for every host (NO_PROXY would send 127.0.0.1 around it).
  const fetch = ['curl', '-fsS', '--noproxy', '', url]
  const refused = await cliAsync(['--allow-domain', '127.0.0.1', ...fetch])
  assert.notEqual(refused.status, 0, ctx(refused))
  assert.match(refused.stderr, /403|private_address|blocked/, ctx(refused))
  const allowed = await cliAsync(['--allow-domain', '127.0.0.1', '--allow-private', '127.0.0.1/32', ...fetch])
  assert.equal(allowed.status, 0, ctx(allowed))
  assert.equal(allowed.stdout, 'hello from the host\n')
})

test('--open-files N is the descriptor limit the command sees', () => {
  for (const mode of ['read-only', 'danger-full-access']) {
    const r = cli(['--mode', mode, '--open-files', '64', 'sh', '-c', 'ulimit -n'])
    assert.equal(r.status, 0, ctx(r))
    assert.equal(r.stdout, '64\n', `${mode}: ${ctx(r)}`)
  }
})

test('flags that make no sense for the mode are usage errors, naming the flag and the mode', () => {
  const cases = [
    [['--read-only', '/nope'], /^sandspawn: --read-only: only allowed with --mode workspace-write/],
    [['--mode', 'read-only', '--writable', '/var/tmp'], /^sandspawn: --writable: only allowed with --mode workspace-write/],
    [['--protect-git'], /^sandspawn: --protect-git: only allowed with --mode workspace-write/],
    [['--no-protect-git'], /^sandspawn: --no-protect-git: only allowed with --mode workspace-write/],
    [['--protected-name', '.toolrc'], /^sandspawn: --protected-name: only allowed with --mode workspace-write/],
    [['--no-protected-names'], /^sandspawn: --no-protected-names: only allowed with --mode workspace-write/],
    [['--tool-caches', 'none'], /^sandspawn: --tool-caches: only allowed with --mode workspace-write/],
    [['--mode', 'danger-full-access', '--read-only', '/nope'], /^sandspawn: --read-only: only allowed with --mode workspace-write/],
    [['--mode', 'danger-full-access', '--network'], /^sandspawn: --network: makes no sense with --mode danger-full-access/],
    [['--mode', 'danger-full-access', '--tmp', 'private'], /^sandspawn: --tmp: cannot be enforced with --mode danger-full-access/],
    [['--mode', 'danger-full-access', '--allow-landlock'], /^sandspawn: --allow-landlock: makes no sense with --mode danger-full-access/],
    [['--allow-private', '10.0.0.0/8'], /^sandspawn: --allow-private: only allowed with --allow-domain/],
    [['--network', '--allow-private', '10.0.0.0/8'], /^sandspawn: --allow-private: only allowed with --allow-domain/],
    [['--mode', 'workspace-write', '--protect-git', '--no-protect-git'], /^sandspawn: --protect-git and --no-protect-git contradict each other/],
  ]
  for (const [flags, words] of cases) {
    for (const sub of [[], ['explain']]) {
      const r = cli([...sub, ...flags, 'true'])
      assert.equal(r.status, 2, `${[...sub, ...flags].join(' ')}\n${ctx(r)}`)
      assert.match(r.stderr.split('\n')[0], words, `${[...sub, ...flags].join(' ')}\n${ctx(r)}`)
    }
  }
})

test('errors about these flags name the flag and what was typed, never an API field', () => {
  const cases = [
    [['--allow-domain', '*'], /^sandspawn: --allow-domain \*: /],
    // A wildcard on a public suffix (every site of every owner under it): found by an attacker's
    // review (mode30), it was taken.
    [['--allow-domain', 'ok.example', '--allow-domain', '*.co.uk'], /^sandspawn: --allow-domain \*\.co\.uk: .*public suffix.*registrable domain/],
    [['--allow-domain', 'ok.example', '--deny-domain', 'http://x.example'], /^sandspawn: --deny-domain http:\/\/x\.example: /],
    [['--allow-domain', 'ok.example', '--allow-private', 'bogus'], /^sandspawn: --allow-private bogus: /],
    [['--mode', 'workspace-write', '--protected-name', 'a/b'], /^sandspawn: --protected-name a\/b: /],
    [['--mode', 'workspace-write', '--tool-caches', 'public'], /^sandspawn: --tool-caches: must be 'private', 'shared' or 'none'/],
    [['--open-files', '0'], /^sandspawn: --open-files must be a positive integer/],
    [['--open-files', '99999999'], /^sandspawn: --open-files: /],
  ]
  for (const [flags, words] of cases) {
    const r = cli([...flags, 'true'])
    assert.equal(r.status, 2, `${flags.join(' ')}\n${ctx(r)}`)
    assert.match(r.stderr.split('\n')[0], words, `${flags.join(' ')}\n${ctx(r)}`)
    assert.doesNotMatch(r.stderr, /options\.|sandbox\.[a-zA-Z]|allowedDomains|deniedDomains|allowPrivateAddresses|protectedNames|toolCaches|openFiles/, `${flags.join(' ')}\n${ctx(r)}`)
    const json = JSON.parse(cli(['--json', ...flags, 'true']).stdout)
    assert.equal(json.error.code, 'ERR_SANDBOX_INVALID_OPTIONS')
    assert.match(`sandspawn: ${json.error.message}`, words)
  }
})

test('the denial line for .git and a protected name names the flag that would allow it', (t) => {
  const ws = tmp(t, 'denial')
  gitRepo(ws)
  const line = (r) => r.stderr.split('\n').find((l) => l.startsWith('sandspawn: sandbox denied')) ?? ''
  const git = cli(['--cwd', ws, '--mode', 'workspace-write', 'sh', '-c', 'echo x > .git/config'])
  assert.match(line(git), /\.git stays read-only inside writable directories; --no-protect-git would allow it$/, ctx(git))
  fs.writeFileSync(path.join(ws, '.envrc'), 'host\n')
  const envrc = cli(['--cwd', ws, '--mode', 'workspace-write', 'sh', '-c', 'echo x > .envrc'])
  assert.match(line(envrc), /\.envrc is a protected name .*; --no-protected-names would allow it$/, ctx(envrc))
  assert.doesNotMatch(line(envrc), /--writable/, 'the directory is writable already')
})
