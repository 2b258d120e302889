'use strict'
// A `SANDSPAWN_BWRAP` that a run, or another local user, could change is refused, not executed.
//
// Found by an attacker's review: only the file the override resolves to was held read-only. With
// the override naming a symlink (or a path through a linked or renamable directory) in a directory
// a run may write (a writable root, the default writable /tmp), one run re-pointed the link and the
// next run (a new host process) executed the planted "bwrap" on the host, outside any sandbox, with
// no hostRisks. And the override file had no owner or mode check at all: a 0777 file another user
// rewrote ran as root (the bundled bwrap and the PATH candidates are refused in that case).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { sandspawn, rmrf, q } = require('./helpers')

/** A working bwrap to copy: the system's, else the bundled one. */
function realBwrap() {
  const bundled = path.resolve(__dirname, '../../sandspawn-bwrap')
  return fs.existsSync('/usr/bin/bwrap') ? '/usr/bin/bwrap' : bundled
}

/**
 * A private directory under `parent` (the clone's target/ unless given; the user's home when that
 * cannot be written: the suite's second pass runs as an ordinary user in a copy root staged),
 * removed after the test.
 */
function scratch(t, parent = ownTarget()) {
  fs.mkdirSync(parent, { recursive: true })
  const d = fs.realpathSync(fs.mkdtempSync(path.join(parent, 'override-bwrap-')))
  fs.chmodSync(d, 0o755)
  t.after(() => rmrf(d))
  fs.mkdirSync(path.join(d, 'ws'))
  return d
}

function ownTarget() {
  const target = path.resolve(__dirname, '../../target')
  try {
    fs.mkdirSync(target, { recursive: true })
    fs.accessSync(target, fs.constants.W_OK)
    return target
  } catch {
    return path.join(require('node:os').homedir(), 'target')
  }
}

/** Runs `fn` with `SANDSPAWN_BWRAP` set to `value` (the probe cache is keyed by it). */
async function withOverride(value, fn) {
  const saved = process.env.SANDSPAWN_BWRAP
  process.env.SANDSPAWN_BWRAP = value
  try {
    return await fn()
  } finally {
    if (saved === undefined) delete process.env.SANDSPAWN_BWRAP
    else process.env.SANDSPAWN_BWRAP = saved
  }
}

const run = (cmd, options) => sandspawn.spawnSandboxed(['sh', '-c', cmd], { timeout: 60_000, ...options }).catch((e) => ({ error: e.code, message: e.message }))

/** What a run plants in `dir`: a "bwrap" that leaves `marker` when the host executes it. */
const evil = (dir, marker) => `printf '#!/bin/sh\\ntouch ${marker}\\nexec ${realBwrap()} "$@"\\n' > ${dir}/evil && chmod 755 ${dir}/evil`

const WRITABLE = /writable root|this run may write|could write/

/** Run 1 tries to plant with `cmd`, run 2 is the next run: both are refused and nothing planted runs. */
async function twoRuns(override, cmd, options, marker) {
  await withOverride(override, async () => {
    const r1 = await run(cmd, options)
    const r2 = await run('true', options)
    assertRefused(r1, marker, WRITABLE)
    assertRefused(r2, marker, WRITABLE)
  })
}

/** Both runs are refused before anything runs, naming the cause, and the marker never appears. */
function assertRefused(r, marker, cause) {
  const ctx = JSON.stringify(r, null, 1)
  assert.equal(fs.existsSync(marker), false, `the host executed the run-planted bwrap: ${ctx}`)
  assert.equal(r.error, 'ERR_SANDBOX_UNAVAILABLE', ctx)
  assert.match(r.message, cause, ctx)
  assert.match(r.message, /SANDSPAWN_BWRAP/, ctx)
}

test('an override through a symlink in a writable root is refused: a run could re-point it for the next run', async (t) => {
  const d = scratch(t)
  const tools = path.join(d, 'tools')
  fs.mkdirSync(path.join(tools, 'real'), { recursive: true })
  fs.copyFileSync(realBwrap(), path.join(tools, 'real/bwrap'))
  fs.chmodSync(path.join(tools, 'real/bwrap'), 0o755)
  fs.symlinkSync('real/bwrap', path.join(tools, 'bwrap'))
  const marker = path.join(d, 'HOST_RAN_PLANTED_BWRAP')
  const options = { cwd: path.join(d, 'ws'), sandbox: { mode: 'workspace-write', writableRoots: [tools] } }
  await twoRuns(path.join(tools, 'bwrap'), `${evil(tools, marker)} && ln -sfn evil ${q(path.join(tools, 'bwrap'))} && echo retargeted`, options, marker)
})

test('an override below a linked directory in the default writable /tmp is refused', async (t) => {
  const d = scratch(t, os.tmpdir())
  const v1 = path.join(d, 'bubblewrap-0.8')
  fs.mkdirSync(v1)
  fs.copyFileSync(realBwrap(), path.join(v1, 'bwrap'))
  fs.chmodSync(path.join(v1, 'bwrap'), 0o755)
  fs.symlinkSync('bubblewrap-0.8', path.join(d, 'current'))
  const marker = path.join(d, 'HOST_RAN_PLANTED_BWRAP')
  const options = { cwd: path.join(d, 'ws'), sandbox: 'workspace-write' }
  const swap = `mkdir ${d}/mine && ${evil(`${d}/mine`, marker)} && mv ${d}/mine/evil ${d}/mine/bwrap && ln -sfn mine ${d}/current.new && mv -T ${d}/current.new ${d}/current && echo swapped`
  await twoRuns(path.join(d, 'current/bwrap'), swap, options, marker)
})

test('an override in a directory a run could rename (a writable root above it) is refused', async (t) => {
  const d = scratch(t)
  const tools = path.join(d, 'tools')
  fs.mkdirSync(tools)
  fs.copyFileSync(realBwrap(), path.join(tools, 'bwrap'))
  fs.chmodSync(path.join(tools, 'bwrap'), 0o755)
  const marker = path.join(d, 'HOST_RAN_PLANTED_BWRAP')
  const options = { cwd: path.join(d, 'ws'), sandbox: { mode: 'workspace-write', writableRoots: [d] } }
  const swap = `mv ${tools} ${tools}.old; mkdir ${tools} && ${evil(tools, marker)} && mv ${tools}/evil ${tools}/bwrap && echo swapped`
  await twoRuns(path.join(tools, 'bwrap'), swap, options, marker)
})

test('an override file writable by others, or in a directory another user owns, is refused', async (t) => {
  const d = scratch(t)
  const file = path.join(d, 'bwrap')
  fs.copyFileSync(realBwrap(), file)
  fs.chmodSync(file, 0o777)
  const options = { cwd: path.join(d, 'ws'), sandbox: 'read-only' }
  await withOverride(file, async () => {
    const r = await run('true', options)
    const caps = await sandspawn.sandboxCapabilities()
    const ctx = JSON.stringify({ r, caps }, null, 1)
    assert.equal(r.error, 'ERR_SANDBOX_UNAVAILABLE', ctx)
    assert.match(r.message, /writable by everyone/, ctx)
    assert.equal(caps.available, false, ctx)
  })
  fs.chmodSync(file, 0o755)
  if (process.getuid() === 0) {
    // Another user's directory (nobody's): they could replace the file in it.
    const theirs = path.join(d, 'theirs')
    fs.mkdirSync(theirs, { mode: 0o755 })
    fs.copyFileSync(realBwrap(), path.join(theirs, 'bwrap'))
    fs.chmodSync(path.join(theirs, 'bwrap'), 0o755)
    fs.chownSync(theirs, 65534, 65534)
    await withOverride(path.join(theirs, 'bwrap'), async () => {
      const r = await run('true', options)
      assert.equal(r.error, 'ERR_SANDBOX_UNAVAILABLE', JSON.stringify(r))
      assert.match(r.message, /owned by uid 65534/, JSON.stringify(r))
    })
  }
  // The control: the same file, root's or this user's and writable by nobody else, runs.
  await withOverride(file, async () => {
    const r = await run('echo ok', options)
    assert.equal(r.stdout, 'ok\n', JSON.stringify(r))
  })
})

// Found by an attacker's review: the README advised an override under /tmp with runs given
// `sandbox.tmp: 'private'`. But /tmp is shared with every sandspawn run on the host: a run of
// another process (no override, the default writable /tmp) replaced the file, and the next run
// of the process with the override executed it on the host. Refused whatever this run's policy.
test('an override in a shared temporary directory is refused, even for runs with a private /tmp', async (t) => {
  const d = scratch(t, os.tmpdir())
  const file = path.join(d, 'bwrap')
  fs.copyFileSync(realBwrap(), file)
  fs.chmodSync(file, 0o755)
  const marker = path.join(d, 'HOST_RAN_PLANTED_BWRAP')
  const privateTmp = { cwd: path.join(d, 'ws'), sandbox: { mode: 'workspace-write', tmp: 'private' } }
  const shared = /shared temporary directory/
  const r1 = await withOverride(file, () => run('echo first', privateTmp))
  // Another process's run: no override, the default writable /tmp.
  const other = await withOverride('', () => run(`${evil(d, marker)} && mv ${d}/evil ${file} && echo replaced`, { cwd: path.join(d, 'ws'), sandbox: 'workspace-write' }))
  const r2 = await withOverride(file, () => run('echo second', privateTmp))
  const ctx = JSON.stringify({ other }, null, 1)
  assertRefused(r1, marker, shared)
  assertRefused(r2, marker, shared)
  assert.equal(fs.existsSync(marker), false, ctx)
})

// Found by an attacker's review: the override file had a second name (a hard link) in a
// workspace. The path checks look at names only: a Landlock run rewrote the file in place through
// the workspace's name, and the next bwrap run executed it on the host.
test('an override file with another hard link is refused: a run could rewrite it through that name', async (t) => {
  const d = scratch(t)
  fs.mkdirSync(path.join(d, 'opt/bin'), { recursive: true })
  const file = path.join(d, 'opt/bin/bwrap')
  fs.copyFileSync(realBwrap(), file)
  fs.chmodSync(file, 0o755)
  const ws = path.join(d, 'ws')
  fs.mkdirSync(path.join(ws, 'tools'))
  fs.linkSync(file, path.join(ws, 'tools/bwrap'))
  const marker = path.join(d, 'HOST_RAN_PLANTED_BWRAP')
  const rewrite = `printf '#!/bin/sh\\ntouch ${marker}\\nexec ${realBwrap()} "$@"\\n' > tools/bwrap && echo rewrote`
  const linked = /hard link/
  await withOverride(file, async () => {
    const r1 = await run(rewrite, { cwd: ws, sandbox: 'workspace-write', linux: { allow: ['landlock'] } })
    const r2 = await run('echo hello', { cwd: ws, sandbox: 'workspace-write' })
    assertRefused(r1, marker, linked)
    assertRefused(r2, marker, linked)
  })
})
