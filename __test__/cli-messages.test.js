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
