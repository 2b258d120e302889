'use strict'
// Found by an attacker's review (tools23, names_probe.js): files beside the listed protected and
// report-only names that host tools load and act on by themselves were planted with `hostRisks: []`
// (bwrap and review; review's apply landed them): GitHub Copilot CLI's `.github/hooks/*.json`,
// Cline's `.clinerules/hooks`, Bun's `.env.<mode>[.local]`, hk's `hk.pkl`, VS Code's
// `*.code-workspace`, lazy.nvim's `.lazy.lua`, Emacs's `.dir-locals.el`, Amp's `.amp`. Each is
// planted for real in each mode, and the outcome asserted on the host.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sandspawn, tempTree, show, sh, q, BASE } = require('./helpers')

const STORE = fs.mkdtempSync(path.join(BASE, 'sandspawn-planted-names-'))
process.env.SANDSPAWN_CHANGE_SET_DIR = STORE
process.on('exit', () => fs.rmSync(STORE, { recursive: true, force: true }))

/** Kept absent at the workspace's top (moved aside and reported), as `.claude` and `.nvim.lua` are. */
const KEPT = ['.clinerules/hooks/TaskStart', '.lazy.lua', '.dir-locals.el', '.dir-locals-2.el', '.amp/settings.json', '.github/hooks/session.json']
/** Report-only, as `.env` and lefthook's files are: created, and reported. */
const REPORTED = ['.env.local', '.env.development', '.env.test', '.env.production', '.env.development.local', '.env.test.local', '.env.production.local', 'hk.pkl', 'hk.local.pkl', '.config/hk.pkl', '.config/hk.local.pkl', 'proj.code-workspace', 'sub/x.code-workspace']
const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

function plant(list) {
  return list.map((rel) => `mkdir -p ${q(path.dirname(rel))} 2>/dev/null; echo planted > ${q(rel)}`).join('; ') + '; true'
}

/** The hostRisks entry for `rel` (or for a directory above it that the risk names). */
function riskFor(risks, ws, rel) {
  return risks.find((h) => h.kind === 'protected-name-created' && (h.path === path.join(ws, rel) || path.join(ws, rel).startsWith(h.path + '/')))
}

describe('names host tools act on beside the listed ones', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: each is kept absent or reported`, async (t) => {
      const tree = tempTree(t)
      fs.mkdirSync(path.join(tree.ws, '.github/workflows'), { recursive: true })
      const r = await sh(plant([...KEPT, ...REPORTED]), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      for (const rel of KEPT) {
        assert.equal(fs.existsSync(path.join(tree.ws, rel)), false, `${rel} stayed\n${JSON.stringify(r.hostRisks)}`)
        assert.ok(riskFor(r.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.hostRisks)}`)
      }
      for (const rel of REPORTED) assert.ok(riskFor(r.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.hostRisks)}`)
      // `.github` itself is the project's (workflows): writing there is no risk.
      const quiet = await sh('echo "on: push" > .github/workflows/ci.yml', { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(quiet.exitCode, 0, show(quiet))
      assert.deepEqual(quiet.hostRisks, [], show(quiet))
    })
  }

  test('review: each is a risk of the change set and held back by apply', async (t) => {
    const tree = tempTree(t)
    const all = [...KEPT, ...REPORTED]
    const r = await sandspawn.spawnSandboxed(['sh', '-c', `${plant(all)}; mkdir -p .github/workflows && echo x > .github/workflows/ci.yml`], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.ok(r.changeSet, show(r))
    for (const rel of all) assert.ok(riskFor(r.changeSet.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.changeSet.hostRisks)}`)
    const res = await sandspawn.applyChangeSet(r.changeSet.id, {})
    for (const rel of all) assert.equal(fs.existsSync(path.join(tree.ws, rel)), false, `${rel} landed`)
    assert.equal(fs.readFileSync(path.join(tree.ws, '.github/workflows/ci.yml'), 'utf8'), 'x\n', JSON.stringify(res))
  })
})
