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
const inner = path.join(__dirname, 'fixtures', 'landlock-inner.js')

function setup() {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'sandspawn-ll-')))
  const ws = path.join(dir, 'ws')
  const outside = path.join(dir, 'outside')
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true })
  fs.mkdirSync(path.join(ws, '.git', 'hooks'), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, 'ro'), 'keep')
  return { dir, ws, outside }
}

function scenario(name, env = {}) {
  const { dir, ws, outside } = setup()
  try {
    const out = execFileSync('bwrap', ['--unshare-user', '--unshare-pid', '--disable-userns', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--bind', dir, dir, '--', process.execPath, inner, ws, outside, '-', name], {
      env: { ...process.env, ...env },
      encoding: 'utf8',
    })
    return { result: JSON.parse(out.trim().split('\n').pop()), outside }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

test('without the opt-in, runs fail closed where user namespaces are blocked', () => {
  const { result } = scenario('refusedByDefault')
  assert.strictEqual(result.code, 'ERR_SANDBOX_UNAVAILABLE', JSON.stringify(result))
  assert.ok(result.causes.includes('landlock:not-allowed'), result.causes.join())
  assert.ok(result.fixes.some((f) => f.includes("allow: ['bwrap', 'landlock']")), result.fixes.join('\n'))
})

test('writes: inside the roots succeed, outside fail, .git stays protected, SANDSPAWN_LINUX_ALLOW is not passed in', () => {
  const { result } = scenario('writes', { SANDSPAWN_LINUX_ALLOW: 'bwrap,landlock' })
  assert.strictEqual(result.type, 'landlock')
  assert.ok(result.details.landlockAbi >= 3)
  assert.ok(result.details.notEnforced.includes('pid-isolation'))
  assert.strictEqual(result.stdout, 'in\ndenied-outside\ndenied-git\ndenied-hook\ndenied-top\ndenied-truncate\n0\n')
  // No mount namespace for the overlays: the default private caches are unavailable, and said so.
  assert.strictEqual(result.toolCaches, 'none')
})

test('TCP, UDP and Unix sockets cannot be created; socketpair works', () => {
  const { result } = scenario('sockets')
  assert.strictEqual(result.stdout, 'tcp:1 udp:1 unix:1 pair:ok', result.stderr)
})

test('the command cannot signal processes outside the run', () => {
  assert.strictEqual(scenario('killOutside').result.stdout, 'denied')
})

test('setsid daemons are killed when the command ends', () => {
  const { result } = scenario('daemonKilled')
  assert.deepStrictEqual(result, { exitCode: 7, alive: [] })
})

test('a timeout kills the whole tree', () => {
  assert.deepStrictEqual(scenario('timeoutKillsTree').result, { timedOut: true, signal: 'SIGTERM' })
})

test('a policy Landlock cannot express is refused, naming the rule', () => {
  const { result } = scenario('unsupported')
  assert.match(result.denyRead, /^ERR_SANDBOX_UNSUPPORTED: .*sandbox\.denyRead entry/)
  assert.match(result.tmpPrivate, /^ERR_SANDBOX_UNSUPPORTED: .*sandbox\.tmp: 'private'/)
  assert.match(result.networkPolicy, /^ERR_SANDBOX_UNSUPPORTED: .*NetworkPolicy/)
  assert.match(result.toolCachesPrivate, /^ERR_SANDBOX_UNSUPPORTED: .*sandbox\.toolCaches: 'private'/)
})
