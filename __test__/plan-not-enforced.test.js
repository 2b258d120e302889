'use strict'
// A launch plan says what it does not enforce, as spawnSandboxed's result does
// (`sandboxDetails.notEnforced`): a plan another spawner runs has no result of its own, so what the
// policy leaves unguarded must be in the plan, and `sandspawn explain` must print it.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { buildSandboxCommand, spawnSandboxed } = require('..')

const CLI = path.join(__dirname, '..', 'bin', 'sandspawn.js')

// A repository 34 directories below the workspace: past the walk's bound of 32 levels, so its
// `.git` is not kept read-only (the README's bound), which a run says in its notEnforced.
function deepRepository(t) {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-plan-ne-')))
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }))
  const rel = Array(34).fill('d').join('/')
  fs.mkdirSync(path.join(ws, rel, '.git', 'hooks'), { recursive: true })
  fs.writeFileSync(path.join(ws, rel, '.git', 'config'), '[core]\n')
  fs.writeFileSync(path.join(ws, rel, '.git', 'HEAD'), 'ref: refs/heads/main\n')
  return { ws, config: path.join(ws, rel, '.git', 'config'), rel }
}

test('a plan for a workspace past the walk\'s bound says so in notEnforced, as the run does', async (t) => {
  const { ws, config, rel } = deepRepository(t)
  const cmd = ['sh', '-c', `printf '\\tfsmonitor = /tmp/planted\\n' >> ${rel}/.git/config`]
  const options = { cwd: ws, sandbox: 'workspace-write' }
  const plan = buildSandboxCommand(cmd, options)
  // Before the plan runs: what its placeholders leave behind is the next run's to remove.
  const run = await spawnSandboxed(['true'], options)
  assert.deepEqual(plan.notEnforced, run.sandboxDetails.notEnforced, 'the plan says what the run says')
  // Found by an attacker's review (mode36): the plan carried no notEnforced, and run by hand it let
  // the command write the deep repository's config (core.fsmonitor, which the host's next
  // `git status` there runs) with nothing said, where spawnSandboxed's result names the bound.
  const ran = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, argv0: plan.argv0 })
  assert.equal(ran.status, 0, String(ran.stderr))
  assert.match(fs.readFileSync(config, 'utf8'), /fsmonitor/, 'the bound is real: the plan does not keep the repository')
  assert.ok(Array.isArray(plan.notEnforced), 'a plan carries notEnforced')
  assert.ok(plan.notEnforced.some((l) => /stopped at its bound/.test(l) && /not protected/.test(l)), JSON.stringify(plan.notEnforced))
  // A Seatbelt plan rests on the same walk and says the same.
  const mac = buildSandboxCommand(cmd, { ...options, platform: 'darwin' })
  assert.ok(mac.notEnforced.some((l) => /stopped at its bound/.test(l)), JSON.stringify(mac.notEnforced))
})

test('a plan with nothing left unenforced says so with an empty list', (t) => {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-plan-ne-')))
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }))
  assert.deepEqual(buildSandboxCommand(['true'], { cwd: ws, sandbox: 'read-only' }).notEnforced, [])
})

test('`sandspawn explain` prints what the plan does not enforce (text and --json)', (t) => {
  const { ws } = deepRepository(t)
  const text = spawnSync(process.execPath, [CLI, 'explain', '--mode', 'workspace-write', '--cwd', ws, '--', 'true'], { encoding: 'utf8' })
  assert.equal(text.status, 0, text.stderr)
  assert.match(text.stdout, /not enforced:[\s\S]*stopped at its bound/)
  const json = spawnSync(process.execPath, [CLI, 'explain', '--json', '--mode', 'workspace-write', '--cwd', ws, '--', 'true'], { encoding: 'utf8' })
  assert.equal(json.status, 0, json.stderr)
  assert.ok(JSON.parse(json.stdout).notEnforced.some((l) => /stopped at its bound/.test(l)))
})
