'use strict'
// Issue 20 (first half): the bwrap shipped with sandspawn (`sandspawn-bwrap`, beside the addon)
// runs when the host has no usable bwrap, is reported as such, can be turned off, and is refused
// when it is not the binary this build was made with.
//
// The system bwrap is hidden by giving the child node process a PATH without it (capabilities look
// bwrap up in the host PATH). Each scenario runs in its own child (the probe cache is per process).

const { test, describe, after } = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

const ROOT = path.resolve(__dirname, '..')
const CLI = path.join(ROOT, 'bin', 'sandspawn.js')
const RESULT_TAG = '@@SANDSPAWN-BUNDLED-RESULT@@'
const TOOLS = ['sh', 'touch', 'cat', 'echo', 'id']

const tmpRoots = []
/**
 * A fake *system* bwrap must be found on PATH, and PATH search trusts only the system's own program
 * directories (root's, not writable by others). Rather than touch the host's, the child runs in a
 * private mount namespace with a fresh tmpfs over /usr/local/sbin holding only the fake.
 */
const SYSTEM_DIR = '/usr/local/sbin'
const hostTool = (t) => process.env.PATH.split(':').map((d) => path.join(d, t)).find((f) => path.isAbsolute(f) && fs.existsSync(f))
const UNSHARE = hostTool('unshare')
const SYSTEM_DIR_SKIP = (() => {
  if (process.getuid() !== 0) return `a fake system bwrap needs root (a tmpfs over ${SYSTEM_DIR} in a private mount namespace)`
  if (!UNSHARE || !hostTool('mount')) return 'unshare or mount is not installed'
  const r = spawnSync(UNSHARE, ['--mount', '--propagation', 'private', hostTool('mount'), '-t', 'tmpfs', 'none', SYSTEM_DIR], { encoding: 'utf8' })
  return r.status !== 0 && `cannot mount a tmpfs over ${SYSTEM_DIR} in a private mount namespace: ${r.stderr || r.error}`
})()
/** The argv prefix that runs a command with `fake` as ${SYSTEM_DIR}/bwrap (and nothing else there). */
function withSystemBwrap(fake) {
  const sh = `${hostTool('mount')} -t tmpfs -o mode=755 sandspawn-test ${SYSTEM_DIR} && ${hostTool('cp')} "$0" ${SYSTEM_DIR}/bwrap && ${hostTool('chmod')} 755 ${SYSTEM_DIR}/bwrap && exec "$@"`
  return [UNSHARE, '--mount', '--propagation', 'private', hostTool('sh'), '-c', sh, fake]
}

/** Under /var/tmp: the host /tmp is writable inside workspace-write runs, /var/tmp is not. */
function mkTemp(label) {
  const d = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', `sandspawn-bundled-${label}-`)))
  tmpRoots.push(d)
  return d
}
after(() => {
  for (const d of tmpRoots) fs.rmSync(d, { recursive: true, force: true })
})

/** A PATH directory holding only TOOLS (symlinks), i.e. no bwrap. */
function toolsOnlyPath() {
  const bin = mkTemp('bin')
  for (const tool of TOOLS) {
    const real = process.env.PATH.split(':').map((d) => path.join(d, tool)).find((f) => path.isAbsolute(f) && fs.existsSync(f))
    assert.ok(real, `no ${tool} on the host PATH`)
    fs.symlinkSync(real, path.join(bin, tool))
  }
  return bin
}

/** Run `body` (async, with `sp` = the package at `pkg`, and `out`) in a child node process. */
function runChild(body, { pkg = ROOT, env, cwd, wrap = [] }) {
  const script = `
const sp = require(${JSON.stringify(pkg)})
const out = {}
const rec = (e) => ({ ok: false, isSandboxError: e instanceof sp.SandboxError, code: e.code, message: e.message, attempts: e.attempts, fixes: e.fixes })
const settle = (p) => p.then((r) => ({ ok: true, exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr, sandboxType: r.sandboxType, sandboxDetails: r.sandboxDetails }), rec)
;(async () => {
${body}
})().then(
  () => { process.stdout.write('\\n${RESULT_TAG}' + JSON.stringify(out) + '\\n') },
  (e) => { process.stdout.write('\\n${RESULT_TAG}' + JSON.stringify({ fatal: String(e && e.stack || e) }) + '\\n') },
)
`
  const argv = [...wrap, process.execPath, '-e', script]
  const r = spawnSync(argv[0], argv.slice(1), {
    env: { ...process.env, SANDSPAWN_BWRAP: '', ...env },
    cwd,
    encoding: 'utf8',
    timeout: 60_000,
    killSignal: 'SIGKILL',
  })
  const ctx = `child exit ${r.status} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`
  assert.equal(r.error, undefined, ctx)
  const line = (r.stdout || '').split('\n').find((l) => l.startsWith(RESULT_TAG))
  assert.ok(line, `child printed no result\n${ctx}`)
  const out = JSON.parse(line.slice(RESULT_TAG.length))
  assert.equal(out.fatal, undefined, `${out.fatal}\n${ctx}`)
  return out
}

const ladder = (attempts) => (attempts || []).map((a) => `${a.mechanism}:${a.cause}`)

describe('no system bwrap on PATH', () => {
  test('runs are sandboxed by the bundled bwrap and say so', () => {
    const bin = toolsOnlyPath()
    const root = mkTemp('tree')
    const ws = path.join(root, 'ws')
    fs.mkdirSync(ws)
    const outside = path.join(root, 'outside')
    const out = runChild(
      `
      out.ww = await settle(sp.spawnSandboxed(['sh', '-c', 'touch inside; touch ${outside} 2>/dev/null; echo uid=$(id -u)'], { cwd: ${JSON.stringify(ws)}, sandbox: 'workspace-write' }))
      out.ro = await settle(sp.spawnSandboxed(['sh', '-c', 'touch ro-marker'], { cwd: ${JSON.stringify(ws)} }))
      out.caps = await sp.sandboxCapabilities()
      `,
      { env: { PATH: bin }, cwd: ws },
    )
    const ctx = JSON.stringify(out, null, 1)
    assert.equal(out.ww.ok, true, ctx)
    assert.equal(out.ww.sandboxType, 'bwrap', ctx)
    assert.deepEqual(out.ww.sandboxDetails, { bwrapSource: 'bundled', landlockAbi: null, notEnforced: [] }, ctx)
    assert.equal(fs.existsSync(path.join(ws, 'inside')), true, `the command did not run: ${ctx}`)
    assert.equal(fs.existsSync(outside), false, `a write outside the workspace succeeded: ${ctx}`)
    assert.equal(out.ro.ok, true, ctx)
    assert.notEqual(out.ro.exitCode, 0, `read-only run could write: ${ctx}`)
    assert.equal(fs.existsSync(path.join(ws, 'ro-marker')), false, ctx)
    assert.equal(out.caps.available, true, ctx)
    assert.equal(out.caps.sandboxDetails.bwrapSource, 'bundled', ctx)
    assert.equal(out.caps.bwrap.path, path.join(ROOT, 'sandspawn-bwrap'), ctx)
    assert.equal(out.caps.bwrap.version, '0.12.0', ctx)
    assert.deepEqual(ladder(out.caps.attempts), ['bwrap-system:bwrap-missing', 'bwrap-bundled:ok'], ctx)
  })

  test('the README quickstart works: `sandspawn -- echo hi`, and doctor shows the ladder', () => {
    const bin = toolsOnlyPath()
    const cwd = mkTemp('cli')
    const env = { ...process.env, PATH: bin, SANDSPAWN_BWRAP: '' }
    const r = spawnSync(process.execPath, [CLI, '--', 'echo', 'hi'], { cwd, env, encoding: 'utf8', timeout: 60_000 })
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
    assert.equal(r.stdout, 'hi\n', r.stderr)
    const d = spawnSync(process.execPath, [CLI, 'doctor'], { cwd, env, encoding: 'utf8', timeout: 60_000 })
    assert.equal(d.status, 0, `${d.stdout}\n${d.stderr}`)
    assert.match(d.stdout, /bwrap: .*sandspawn-bwrap \(0\.12\.0\), bundled/, d.stdout)
    assert.match(d.stdout, /ladder:\s+bwrap-system: bwrap-missing/, d.stdout)
    assert.match(d.stdout, /bwrap-bundled: used/, d.stdout)
  })

  test('linux.bundledBwrap: false rejects with attempts and fixes, and runs nothing', () => {
    const bin = toolsOnlyPath()
    const ws = mkTemp('off')
    const out = runChild(
      `
      out.spawn = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(ws)}, linux: { bundledBwrap: false } }))
      out.landlock = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(ws)}, linux: { bundledBwrap: false, allow: ['bwrap', 'landlock'] } }))
      out.caps = await sp.sandboxCapabilities({ linux: { bundledBwrap: false } })
      `,
      { env: { PATH: bin }, cwd: ws },
    )
    const ctx = JSON.stringify(out, null, 1)
    assert.equal(out.spawn.ok, false, ctx)
    assert.equal(out.spawn.isSandboxError, true, ctx)
    assert.equal(out.spawn.code, 'ERR_SANDBOX_UNAVAILABLE', ctx)
    assert.deepEqual(ladder(out.spawn.attempts), ['bwrap-system:bwrap-missing', 'bwrap-bundled:disabled', 'landlock:not-allowed'], ctx)
    for (const a of out.spawn.attempts) assert.ok(typeof a.message === 'string' && a.message.length > 0, ctx)
    assert.match(out.spawn.fixes[0], /apt-get install -y bubblewrap/, ctx)
    assert.ok(out.spawn.fixes.some((f) => /bundledBwrap: true/.test(f)), ctx)
    assert.match(out.spawn.message, /tried: bwrap-system/, ctx)
    // With the opt-in, the Landlock rung runs (this kernel has Landlock ABI >= 3), and says so.
    assert.equal(out.landlock.ok, true, ctx)
    assert.equal(out.landlock.sandboxType, 'landlock', ctx)
    assert.ok(out.landlock.sandboxDetails.landlockAbi >= 3, ctx)
    assert.ok(out.landlock.sandboxDetails.notEnforced.includes('pid-isolation'), ctx)
    assert.equal(out.caps.available, false, ctx)
    assert.equal(out.caps.sandboxDetails.bwrapSource, null, ctx)
    assert.deepEqual(out.caps.attempts, out.spawn.attempts, ctx)
    assert.deepEqual(out.caps.fixes, out.spawn.fixes, ctx)
    assert.equal(fs.existsSync(path.join(ws, 'MARKER')), false, `the command ran: ${ctx}`)
  })
})

describe('when the system bwrap exists', { skip: SYSTEM_DIR_SKIP }, () => {
  /** How to run a child whose PATH finds a fake system bwrap (${SYSTEM_DIR}, before the tools). */
  function fakeSystem(script) {
    const fake = path.join(mkTemp('fake'), 'bwrap')
    fs.writeFileSync(fake, `#!/bin/sh\n${script}\n`, { mode: 0o755 })
    return { env: { PATH: `${SYSTEM_DIR}:${toolsOnlyPath()}` }, wrap: withSystemBwrap(fake) }
  }

  test('too old (0.6.1) or failing its flag probe: the bundled one takes over', () => {
    const ws = mkTemp('old')
    for (const [script, cause] of [
      ["case \"$1\" in --version) echo 'bubblewrap 0.6.1';; *) exit 0;; esac", 'bwrap-too-old'],
      ["case \"$1\" in --version) echo 'bubblewrap 0.8.0';; *) echo 'bwrap: Unknown option --perms' >&2; exit 1;; esac", 'old-bwrap'],
    ]) {
      const out = runChild(
        `out.r = await settle(sp.spawnSandboxed(['sh', '-c', 'echo ok'], { cwd: ${JSON.stringify(ws)} }))
         out.caps = await sp.sandboxCapabilities()`,
        { ...fakeSystem(script), cwd: ws },
      )
      const ctx = JSON.stringify(out, null, 1)
      assert.equal(out.r.ok, true, ctx)
      assert.equal(out.r.stdout, 'ok\n', ctx)
      assert.equal(out.r.sandboxDetails.bwrapSource, 'bundled', ctx)
      assert.deepEqual(ladder(out.caps.attempts), [`bwrap-system:${cause}`, 'bwrap-bundled:ok'], ctx)
    }
  })

  test('blocked user namespaces: the bundled one is not tried', () => {
    const ws = mkTemp('userns')
    const script = "case \"$1\" in --version) echo 'bubblewrap 0.8.0';; *) echo 'bwrap: No permissions to creating new namespace, likely because the kernel does not allow non-privileged user namespaces.' >&2; exit 1;; esac"
    const out = runChild(`out.r = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER'], { cwd: ${JSON.stringify(ws)} }))`, {
      ...fakeSystem(script),
      cwd: ws,
    })
    const ctx = JSON.stringify(out, null, 1)
    assert.equal(out.r.code, 'ERR_SANDBOX_UNAVAILABLE', ctx)
    assert.equal(out.r.attempts[1].mechanism, 'bwrap-bundled', ctx)
    assert.equal(out.r.attempts[1].cause, 'not-tried-host', ctx)
    assert.equal(fs.existsSync(path.join(ws, 'MARKER')), false, ctx)
  })
})

describe('a bundled bwrap that is not the one this build was made with', () => {
  /** A copy of the installed package (as npm would lay it out), to tamper with safely. */
  function copyPackage() {
    const dir = mkTemp('pkg')
    for (const f of fs.readdirSync(ROOT)) {
      if (/^(index\.(js|mjs|d\.ts)|binding\.(js|d\.ts)|package\.json|lib|bin)$/.test(f) || /\.node$/.test(f) || /^sandspawn-(bwrap|helper$)/.test(f)) {
        fs.cpSync(path.join(ROOT, f), path.join(dir, f), { recursive: true })
      }
    }
    return dir
  }

  test('is refused (checksum mismatch) and nothing runs; the intact copy works', () => {
    const bin = toolsOnlyPath()
    const ws = mkTemp('tamper')
    const pkg = copyPackage()
    const body = `
      out.r = await settle(sp.spawnSandboxed(['sh', '-c', 'touch MARKER; echo ran'], { cwd: ${JSON.stringify(ws)}, sandbox: 'workspace-write' }))
      out.caps = await sp.sandboxCapabilities()`
    const intact = runChild(body, { pkg, env: { PATH: bin }, cwd: ws })
    assert.equal(intact.r.ok, true, JSON.stringify(intact, null, 1))
    assert.equal(intact.r.sandboxDetails.bwrapSource, 'bundled')
    assert.equal(intact.caps.bwrap.path, path.join(pkg, 'sandspawn-bwrap'), 'the copy did not use its own bundled bwrap')
    fs.rmSync(path.join(ws, 'MARKER'))

    // Flip one byte (same size, so only the digest can tell).
    const exe = path.join(pkg, 'sandspawn-bwrap')
    const bytes = fs.readFileSync(exe)
    bytes[bytes.length >> 1] ^= 0x01
    fs.writeFileSync(exe, bytes)
    const out = runChild(body, { pkg, env: { PATH: bin }, cwd: ws })
    const ctx = JSON.stringify(out, null, 1)
    assert.equal(out.r.ok, false, ctx)
    assert.equal(out.r.code, 'ERR_SANDBOX_UNAVAILABLE', ctx)
    assert.deepEqual(ladder(out.r.attempts).slice(0, 2), ['bwrap-system:bwrap-missing', 'bwrap-bundled:bundled-bwrap-digest-mismatch'], ctx)
    assert.match(out.r.attempts[1].message, /SHA-256/, ctx)
    assert.ok(out.r.fixes.some((f) => /reinstall sandspawn/.test(f)), ctx)
    assert.equal(out.caps.available, false, ctx)
    assert.equal(fs.existsSync(path.join(ws, 'MARKER')), false, `the tampered binary ran the command: ${ctx}`)
  })
})
