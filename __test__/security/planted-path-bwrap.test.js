'use strict'
// A bwrap one run plants where a later run's PATH finds it is never executed on the host.
//
// Found by review: as root, every file a run writes is root's, so "root's file in root's
// directories" proved nothing. A workspace-write run in a monorepo root (outside HOME and the
// temporary directories, e.g. /app) wrote `node_modules/.bin/bwrap`; a later run from a package
// below it, started by `npm run` (which puts every ancestor's node_modules/.bin first on PATH), ran
// that file on the host as root, with `bwrapSource: 'system'`. Now a bwrap on PATH is used only
// from the system's own program directories (or a Nix/Guix store).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sandspawn, rmrf, q } = require('./helpers')

const SKIP = process.getuid() !== 0 && 'the attack needs root: only root\'s runs write files the old ownership rule trusted'

/** A monorepo outside HOME and the temporary directories, in root's own directories (the clone's target/). */
function monorepo(t) {
  const target = path.resolve(__dirname, '../../target')
  fs.mkdirSync(target, { recursive: true })
  const root = fs.mkdtempSync(path.join(target, 'planted-bwrap-'))
  fs.chmodSync(root, 0o755)
  t.after(() => rmrf(root))
  const mono = path.join(root, 'mono')
  fs.mkdirSync(path.join(mono, 'packages/a'), { recursive: true, mode: 0o755 })
  return { mono, pkg: path.join(mono, 'packages/a'), marker: path.join(root, 'HOST_RAN_PLANTED_BWRAP') }
}

/**
 * Run `fn` with `PATH` set to `value` (the probe cache is keyed by PATH, so no verdict leaks) and
 * the process in `cwd` (as `npm run` would start it; `sandboxCapabilities()` discovers from there).
 */
async function withPathIn(value, cwd, fn) {
  const saved = [process.env.PATH, process.cwd()]
  process.env.PATH = value
  process.chdir(cwd)
  try {
    return await fn()
  } finally {
    process.env.PATH = saved[0]
    process.chdir(saved[1])
  }
}

test('a bwrap planted in <monorepo>/node_modules/.bin by a root run is not run by a later `npm run` below it', { skip: SKIP }, async (t) => {
  const { mono, pkg, marker } = monorepo(t)
  const plant = `mkdir -p node_modules/.bin && printf '#!/bin/sh\\necho "host ran planted bwrap: $*" >> %s\\nexit 1\\n' ${q(marker)} > node_modules/.bin/bwrap && chmod 755 node_modules/.bin/bwrap && echo planted`
  const r1 = await sandspawn.spawnSandboxed(['sh', '-c', plant], { cwd: mono, sandbox: 'workspace-write' })
  assert.equal(r1.stdout, 'planted\n', JSON.stringify(r1))
  const planted = path.join(mono, 'node_modules/.bin/bwrap')
  assert.equal(fs.statSync(planted).uid, 0, 'the planted file is root\'s (the case the ownership rule missed)')

  // What `npm run` in packages/a puts before the host PATH.
  const npmPath = [path.join(pkg, 'node_modules/.bin'), path.join(mono, 'node_modules/.bin'), process.env.PATH].join(':')
  const { r2, caps } = await withPathIn(npmPath, pkg, async () => ({
    r2: await sandspawn.spawnSandboxed(['echo', 'hello'], { cwd: pkg }).catch((e) => ({ error: e.message })),
    caps: await sandspawn.sandboxCapabilities(),
  }))
  const ctx = JSON.stringify({ r2, caps }, null, 1)
  assert.equal(fs.existsSync(marker), false, `the planted bwrap ran on the host: ${fs.existsSync(marker) && fs.readFileSync(marker, 'utf8')}`)
  assert.equal(r2.stdout, 'hello\n', ctx)
  assert.notEqual(caps.bwrap && caps.bwrap.path, planted, ctx)

  // Only the planted one on PATH: it is reported as skipped, with the rule and the remedy, and the
  // bundled bwrap runs the command.
  const tools = fs.mkdtempSync(path.join(path.dirname(mono), 'tools-'))
  for (const tool of ['echo', 'sh']) fs.symlinkSync(process.env.PATH.split(':').map((d) => path.join(d, tool)).find((f) => path.isAbsolute(f) && fs.existsSync(f)), path.join(tools, tool))
  const onlyPlanted = `${path.join(mono, 'node_modules/.bin')}:${tools}`
  const { r3, caps3 } = await withPathIn(onlyPlanted, pkg, async () => ({
    r3: await sandspawn.spawnSandboxed(['echo', 'hello'], { cwd: pkg }).catch((e) => ({ error: e.message })),
    caps3: await sandspawn.sandboxCapabilities(),
  }))
  const ctx3 = JSON.stringify({ r3, caps3 }, null, 1)
  assert.equal(fs.existsSync(marker), false, `the planted bwrap ran on the host: ${ctx3}`)
  assert.equal(r3.stdout, 'hello\n', ctx3)
  assert.equal(r3.sandboxDetails.bwrapSource, 'bundled', ctx3)
  const skipped = caps3.attempts[0]
  assert.equal(skipped.mechanism, 'bwrap-system', ctx3)
  assert.ok(skipped.message.includes(planted) && /system program directory/.test(skipped.message) && skipped.message.includes('SANDSPAWN_BWRAP=/path/to/bwrap'), ctx3)
})
