#!/usr/bin/env node
'use strict'
// `npm test`: the layering check, build if stale, then cargo test, the node --test suites, a strict type check of
// index.d.ts, and the Jest + ts-jest smoke test. Stops at the first failing step.
// `node scripts/test.js STEP...` runs only those steps (by key: layers, build, cargo, node, bundled,
// types, jest, unprivileged), e.g. `cargo node` for .ci/run's pass without a system bwrap.

const path = require('node:path')
const { spawnSync } = require('node:child_process')
const fs = require('node:fs')

const root = path.resolve(__dirname, '..')
const bin = (name) => path.join(root, 'node_modules', '.bin', name)

// [key, name, command, args, extra environment, why it would be skipped]
const steps = [
  ['layers', 'check-layers (no import circles in the crates)', process.execPath, [path.join(__dirname, 'check-layers.js')]],
  ['build', 'build (if stale)', process.execPath, [path.join(__dirname, 'ensure-built.js')]],
  // The core's runner tests run real sandboxes, which need the helper beside the test binary.
  ['cargo', 'cargo build (helper for the Rust tests)', 'cargo', ['build', '--quiet', '-p', 'sandspawn-helper']],
  ['cargo', 'cargo test', 'cargo', ['test', '--quiet', '--workspace']],
  ['node', 'node --test', process.execPath, ['--test', '--test-concurrency=1', '__test__/']],
  // The escape tests again, with the system bwrap hidden: sandspawn's bundled bwrap must hold too.
  ['bundled', 'node --test __test__/security/ (bundled bwrap)', process.execPath, ['--test', '--test-concurrency=1', '__test__/security/'], { SANDSPAWN_TEST_BWRAP: 'bundled' }, withoutSystemBwrap],
  ['types', 'tsc --noEmit (strict, isolatedModules)', bin('tsc'), ['--noEmit', '-p', '__test__/types/tsconfig.json']],
  ['jest', 'jest + ts-jest smoke test', bin('jest'), ['--config', '__test__/jest/jest.config.js']],
]
const KEYS = [...new Set(steps.map((s) => s[0])), 'unprivileged']
const only = process.argv.slice(2)
const unknown = only.filter((k) => !KEYS.includes(k))
if (unknown.length) {
  console.error(`scripts/test.js: unknown step ${unknown.join(', ')} (steps: ${KEYS.join(', ')})`)
  process.exit(2)
}
const wanted = (key) => only.length === 0 || only.includes(key)

// Suites that run workspace-write with the real HOME get private tool caches (the default): their
// store goes to a scratch directory, not this machine's ~/.local/state, and is removed at the end.
// Not under /tmp, which some suites replace with a private one.
fs.mkdirSync(path.join(root, 'target'), { recursive: true })
const cacheStore = fs.mkdtempSync(path.join(root, 'target', 'test-tool-caches-'))
const removeStore = () => {
  // Overlayfs work leftovers have mode 000, Go's module cache is read-only.
  spawnSync('chmod', ['-R', 'u+rwx', cacheStore])
  fs.rmSync(cacheStore, { recursive: true, force: true })
}
for (const [key, name, cmd, args, env, skip] of steps) {
  if (!wanted(key)) continue
  const why = skip && skip()
  if (why) {
    console.log(`\n=== ${name}: skipped: ${why} ===`)
    continue
  }
  console.log(`\n=== ${name} ===`)
  const report = args[0] === '--test' ? path.join(root, 'target', `test-report-${key}.tap`) : null
  const r = spawnSync(cmd, report ? withReport(args, report) : args, { cwd: root, stdio: 'inherit', env: { ...process.env, SANDSPAWN_TOOL_CACHE_DIR: cacheStore, ...env } })
  if (report) summarizeFailures(report)
  if (r.status !== 0) {
    removeStore()
    console.error(`\nnpm test: step "${name}" failed (${r.error ? r.error.message : `exit ${r.status}`})`)
    process.exit(1)
  }
}
removeStore()
if (wanted('unprivileged')) unprivilegedPass()
console.log(`\nnpm test: all steps passed${only.length ? ` (${only.join(', ')})` : ''}`)

/**
 * `node --test` ARGS with a second TAP reporter writing to FILE, besides the one on standard output:
 * CI keeps only the tail of a long log, which never names a failure that happened early.
 */
function withReport(args, file) {
  fs.rmSync(file, { force: true })
  return ['--test-reporter=tap', '--test-reporter-destination=stdout', '--test-reporter=tap', `--test-reporter-destination=${file}`, ...args]
}

/**
 * Prints, last, each failed test of the TAP report FILE (not the suites failing only because of
 * them) with the first lines of its diagnostics, then removes the file. Says nothing when all passed.
 */
function summarizeFailures(file) {
  let lines
  try {
    lines = fs.readFileSync(file, 'utf8').split('\n')
  } catch {
    return
  } finally {
    fs.rmSync(file, { force: true })
  }
  const failed = []
  const names = [] // names[depth]: the test being reported at that depth (4 spaces a level)
  lines.forEach((line, i) => {
    const depth = (line.match(/^ */)[0].length / 4) | 0
    const subtest = line.match(/^\s*# Subtest: (.*)/)
    if (subtest) names[depth] = subtest[1]
    if (!/^\s*not ok \d+ - /.test(line)) return
    const end = lines.indexOf(line.replace(/not ok.*/, '  ...'), i + 1)
    const block = lines.slice(i + 1, end < 0 ? i + 1 : end + 1)
    if (block.some((l) => /failureType: 'subtestsFailed'/.test(l))) return
    failed.push([names.slice(0, depth + 1).join(' > '), ...block.slice(0, 40)].join('\n'))
  })
  if (failed.length) console.log(`\n--- ${failed.length} failed test(s), again in short ---\n${failed.join('\n')}`)
}

/** Why a pass of its own on the bundled bwrap would repeat the first one, or null. */
function withoutSystemBwrap() {
  if (process.env.SANDSPAWN_BWRAP) return null
  const onPath = (process.env.PATH || '').split(':').some((dir) => {
    try {
      fs.accessSync(path.join(dir || '.', 'bwrap'), fs.constants.X_OK)
      return true
    } catch {
      return false
    }
  })
  return onPath ? null : 'no system bwrap on PATH, so the pass above already ran every test on the bundled one'
}

/**
 * The escape tests once more as a user other than root, when these tests run as root: bwrap
 * behaves differently for other users (it nests a user namespace of its own), and a run that
 * works as root may not work for the users sandspawn is for. That user runs a copy of the package
 * and the tests it can read (a checkout under a 0700 home is not readable to it; see
 * __test__/fixtures/other-user.js). Needs `setpriv`; otherwise it says why it did not run.
 */
function unprivilegedPass() {
  const name = 'node --test __test__/security/ (as an unprivileged user)'
  const uid = 64125 // no test uses it
  if (process.getuid() !== 0) return console.log(`\n=== ${name}: not needed, these tests ran as uid ${process.getuid()} ===`)
  const otherUser = require('../__test__/fixtures/other-user')
  const why = otherUser.cannotRunAs(uid)
  if (why) return console.log(`\n=== ${name}: skipped: ${why} ===`)
  const copy = otherUser.stagedCheckout()
  const home = fs.mkdtempSync('/var/tmp/sandspawn-test-user-')
  fs.chownSync(home, uid, uid)
  const env = { PATH: process.env.PATH, HOME: home, SANDSPAWN_TOOL_CACHE_DIR: path.join(home, 'tool-caches') }
  let r
  try {
    console.log(`\n=== ${name}, in a copy it can read: ${copy} ===`)
    const report = path.join(home, 'test-report.tap')
    const [cmd, args] = otherUser.asUser(uid, withReport(['--test', '--test-concurrency=1', '__test__/security/'], report))
    r = spawnSync(cmd, args, { cwd: copy, stdio: 'inherit', env })
    summarizeFailures(report)
  } finally {
    // Also when the step failed: process.exit would skip a finally, and the home stayed behind.
    spawnSync('chmod', ['-R', 'u+rwx', home])
    fs.rmSync(home, { recursive: true, force: true })
  }
  if (r.status !== 0) {
    console.error(`\nnpm test: step "${name}" failed (${r.error ? r.error.message : `exit ${r.status}`})`)
    process.exit(1)
  }
}
