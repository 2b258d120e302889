'use strict'
// SANDSPAWN_LINUX_ALLOW (the host-only opt-in) as runs, sandboxCapabilities() and the CLI see it.
// Found by an attacker's review: with SANDSPAWN_LINUX_ALLOW=landlock every run without a `linux`
// option used the weaker Landlock mode although bwrap works, while `sandspawn doctor` and
// sandboxCapabilities() (which ignored the variable) said bwrap, and the CLI's output said nothing.
// Every case runs in a child process whose environment holds the variable.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const CLI = path.join(ROOT, 'bin', 'sandspawn.js')
// Generous hang bound for one child (never a speed assertion).
const HANG_MS = 60_000
const ctx = (r) => `status ${r.status} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`

function child(args, env, cwd) {
  const r = spawnSync(process.execPath, args, { cwd, env: { ...process.env, ...env }, encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
  assert.equal(r.signal, null, ctx(r))
  return r
}

/** `sandboxCapabilities(options)` in a child whose environment has `env`. */
function capsWith(env, options) {
  const js = `require(${JSON.stringify(ROOT)}).sandboxCapabilities(${options === undefined ? '' : JSON.stringify(options)}).then((c) => console.log(JSON.stringify(c)))`
  const r = child(['-e', js], env)
  assert.equal(r.status, 0, ctx(r))
  return JSON.parse(r.stdout)
}

const landlockHere = process.platform === 'linux' && capsWith({ SANDSPAWN_LINUX_ALLOW: '' }, { linux: { allow: ['landlock'] } }).available
const bwrapHere = process.platform === 'linux' && capsWith({ SANDSPAWN_LINUX_ALLOW: '' }).available
const skip = !(landlockHere && bwrapHere) && 'needs both bwrap and Landlock ABI >= 3 here'
const ONLY_LANDLOCK = { SANDSPAWN_LINUX_ALLOW: 'landlock' }

const workspace = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-allow-env-')))

test('sandboxCapabilities() honours SANDSPAWN_LINUX_ALLOW as a run does, and names it', { skip }, () => {
  for (const options of [undefined, {}, { linux: {} }]) {
    const caps = capsWith(ONLY_LANDLOCK, options)
    assert.equal(caps.sandboxType, 'landlock', JSON.stringify(options))
    assert.ok(caps.sandboxDetails.notEnforced.some((e) => e.includes('SANDSPAWN_LINUX_ALLOW=landlock')), JSON.stringify(caps.sandboxDetails))
    const bwrapRung = caps.attempts.find((a) => a.mechanism === 'bwrap-system')
    assert.match(bwrapRung.message, /SANDSPAWN_LINUX_ALLOW=landlock/, JSON.stringify(caps.attempts))
  }
  // An explicit `linux.allow` still wins over the variable, in both.
  assert.equal(capsWith(ONLY_LANDLOCK, { linux: { allow: ['bwrap'] } }).sandboxType, 'bwrap')
  // Without the variable: bwrap, and nothing said about it.
  const plain = capsWith({ SANDSPAWN_LINUX_ALLOW: '' })
  assert.equal(plain.sandboxType, 'bwrap')
  assert.deepEqual(plain.sandboxDetails.notEnforced, [])
})

test('a run that the variable put in the Landlock mode says so in its result', { skip }, () => {
  const js = `require(${JSON.stringify(ROOT)}).spawnSandboxed(['true']).then((r) => console.log(JSON.stringify(r)))`
  const cwd = workspace()
  const r = child(['-e', js], ONLY_LANDLOCK, cwd)
  fs.rmSync(cwd, { recursive: true, force: true })
  assert.equal(r.status, 0, ctx(r))
  const result = JSON.parse(r.stdout)
  assert.equal(result.sandboxType, 'landlock')
  assert.ok(result.sandboxDetails.notEnforced.some((e) => e.includes('SANDSPAWN_LINUX_ALLOW=landlock')), JSON.stringify(result.sandboxDetails))
})

test('`sandspawn doctor` honours SANDSPAWN_LINUX_ALLOW and names it', { skip }, () => {
  const json = child([CLI, 'doctor', '--json'], ONLY_LANDLOCK)
  assert.equal(JSON.parse(json.stdout).sandboxType, 'landlock', ctx(json))
  const text = child([CLI, 'doctor'], ONLY_LANDLOCK)
  assert.equal(text.status, 0, ctx(text))
  assert.match(text.stdout, /sandbox: +landlock/, ctx(text))
  assert.match(text.stdout, /SANDSPAWN_LINUX_ALLOW=landlock/, ctx(text))
  assert.match(text.stdout, /pid-isolation/, ctx(text))
  assert.match(text.stdout, /bwrap: +not used/, ctx(text))
})

test('the CLI says on stderr, in one line, that a run was weaker than bwrap and why', { skip }, (t) => {
  const cwd = workspace()
  t.after(() => fs.rmSync(cwd, { recursive: true, force: true }))
  const weak = child([CLI, '--mode', 'workspace-write', '--', 'sh', '-c', 'echo $SANDSPAWN_SANDBOX'], ONLY_LANDLOCK, cwd)
  assert.equal(weak.status, 0, ctx(weak))
  assert.equal(weak.stdout, 'landlock\n')
  const lines = weak.stderr.split('\n').filter((l) => /landlock/i.test(l))
  assert.equal(lines.length, 1, ctx(weak))
  // The reason first, then what it costs.
  assert.match(lines[0], /^sandspawn: notice: .*SANDSPAWN_LINUX_ALLOW=landlock.*pid-isolation/, ctx(weak))
  // Without the variable: bwrap, and nothing said.
  const strong = child([CLI, '--mode', 'workspace-write', '--', 'sh', '-c', 'echo $SANDSPAWN_SANDBOX'], { SANDSPAWN_LINUX_ALLOW: '' }, cwd)
  assert.equal(strong.stdout, 'bwrap\n', ctx(strong))
  assert.equal(strong.stderr, '', ctx(strong))
  // --json: the result itself says it (sandboxType, notEnforced).
  const json = child([CLI, '--json', '--', 'true'], ONLY_LANDLOCK, cwd)
  assert.equal(JSON.parse(json.stdout).sandboxType, 'landlock', ctx(json))
})

// Found by an attacker's review (mode32): where only the Landlock mode may run, the CLI's refusals
// named API fields and functions ("sandbox.workspace 'review'", "sandbox.tmp: 'private'",
// "sandbox.denyRead entry", "a NetworkPolicy", "run ... without pty", "Run the command with
// spawnSandboxed"), so a CLI user on a terminal, whose every run gets a pty there, was told to run
// "without pty" and not that --no-pty does it. Errors name CLI flags (API.md, the CLI's second round).
test('where only the Landlock mode may run, the CLI refusals name its flags, never API fields', { skip }, (t) => {
  const cwd = workspace()
  t.after(() => fs.rmSync(cwd, { recursive: true, force: true }))
  const API_WORDS = /options\.|sandbox\.[a-zA-Z]|NetworkPolicy|spawnSandboxed|startSandboxed|linux\.allow|without pty/
  const cases = [
    [['--mode', 'workspace-write', '--review'], /--review/],
    [['--mode', 'workspace-write', '--tmp', 'private'], /--tmp private/],
    [['--deny-read', '/etc'], /--deny-read \/etc/],
    [['--allow-domain', 'x.test'], /--allow-domain/],
    [['explain'], /sandspawn explain/],
  ]
  for (const [flags, names] of cases) {
    const r = child([CLI, ...flags, '--', 'true'], ONLY_LANDLOCK, cwd)
    assert.notEqual(r.status, 0, `${flags.join(' ')}\n${ctx(r)}`)
    assert.match(r.stderr, names, `${flags.join(' ')}\n${ctx(r)}`)
    assert.doesNotMatch(r.stderr, API_WORDS, `${flags.join(' ')}\n${ctx(r)}`)
  }
  // On a terminal every run asks for a pty, which this mode refuses: the way out is --no-pty.
  const tty = spawnSync('script', ['-qec', `${JSON.stringify(process.execPath)} ${JSON.stringify(CLI)} -- true`, '/dev/null'], {
    cwd,
    env: { ...process.env, ...ONLY_LANDLOCK },
    encoding: 'utf8',
    timeout: HANG_MS,
    killSignal: 'SIGKILL',
  })
  assert.match(tty.stdout, /--no-pty/, ctx(tty))
  assert.doesNotMatch(tty.stdout, API_WORDS, ctx(tty))
})
