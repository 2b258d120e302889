'use strict'
// With the network off a failed fetch cannot succeed later, so package managers must not retry it
// (README, Running package managers): here cargo, which retried a failed lookup three times
// (about 11 s) before it said why. Its own words say whether it retried: "spurious network error
// (N tries remaining)".

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { spawnSandboxed } = require('..')

const cargo = spawnSync('cargo', ['--version'], { encoding: 'utf8' })
const noCargo = cargo.status !== 0 && `cargo is not installed here (${cargo.error ? cargo.error.message : cargo.stderr.trim()})`

test('cargo with the network off fails at its first attempt, and says why', { skip: noCargo }, async (t) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join('/var/tmp', 'sandspawn-offline-cargo-')))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const ws = path.join(dir, 'ws')
  fs.mkdirSync(path.join(ws, 'src'), { recursive: true })
  // A dependency no cache holds: cargo must ask the registry for it.
  fs.writeFileSync(path.join(ws, 'Cargo.toml'), '[package]\nname = "offline-probe"\nversion = "0.1.0"\nedition = "2021"\n[dependencies]\nsandspawn-never-published-xyz = "1"\n')
  fs.writeFileSync(path.join(ws, 'src', 'main.rs'), 'fn main() {}\n')
  // A cargo home of its own (empty index), and rustup's toolchains as they are.
  const env = { CARGO_HOME: path.join(dir, 'cargo-home'), RUSTUP_HOME: process.env.RUSTUP_HOME || path.join(os.homedir(), '.rustup') }
  const r = await spawnSandboxed(['cargo', 'generate-lockfile'], { cwd: ws, sandbox: 'workspace-write', env, timeout: 60_000 })
  assert.equal(r.timedOut, false, r.stderr)
  assert.notEqual(r.exitCode, 0, r.stderr)
  assert.doesNotMatch(r.stderr, /spurious network error/, 'cargo retried a lookup that cannot succeed')
  assert.match(r.stderr, /Could not resolve host/)
  assert.equal(r.denial && r.denial.reason, 'network_unreachable')
})
