'use strict'

// Found by an attacker's review (quiet22, nm_link.js): a symlink into `node_modules` (which the
// walk never enters) was judged only by the run that made it, when it led to nothing yet. A later
// run planted a repository where it leads (core.fsmonitor), a third one wrote its configuration
// again, and the host's `cd src/lib && git status` ran the fsmonitor: no run said a word. Each
// later run now judges such links again after it, a host-made one too.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { tempTree, show, sh, which } = require('./helpers')

const NO_GIT = which('git') === null && 'git is not installed'
const WW = { mode: 'workspace-write' }
const PLANT = [
  'set -e',
  'mkdir -p node_modules/x/.git/objects node_modules/x/.git/refs',
  "echo 'ref: refs/heads/main' > node_modules/x/.git/HEAD",
  "printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' > node_modules/x/.git/config",
  'echo planted',
].join('\n')
const REWRITE = "printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' >> node_modules/x/.git/config 2>/dev/null && echo wrote || echo refused"

function workspace(t) {
  const tree = tempTree(t)
  execFileSync('git', ['init', '-q', tree.ws])
  fs.mkdirSync(path.join(tree.ws, 'src'))
  fs.mkdirSync(path.join(tree.ws, 'node_modules/x'), { recursive: true })
  return tree
}

function linkRisk(r, ws) {
  return r.hostRisks.find((h) => h.path === path.join(ws, 'src/lib'))
}

describe('a symlink into node_modules judged again by later runs', { skip: NO_GIT }, () => {
  for (const mode of ['bwrap', 'landlock']) {
    const options = (ws) => ({ cwd: ws, sandbox: WW, ...(mode === 'landlock' ? { linux: { allow: ['landlock'] } } : {}) })

    test(`${mode}: a link made by one run, a repository planted where it leads by the next: the next run reports it, a third cannot write its configuration`, async (t) => {
      const { ws } = workspace(t)
      const r1 = await sh('ln -s ../node_modules/x src/lib && echo linked', options(ws))
      assert.equal(r1.stdout, 'linked\n', show(r1))
      assert.deepEqual(r1.hostRisks, [], 'nothing there yet')
      const r2 = await sh(PLANT, options(ws))
      assert.equal(r2.stdout, 'planted\n', show(r2))
      const risk = linkRisk(r2, ws)
      assert.ok(risk, `the link is reported by the run that planted: ${JSON.stringify(r2.hostRisks, null, 1)}`)
      assert.equal(risk.kind, 'git-directory-created')
      assert.match(risk.detail, /node_modules\/x\/\.git/)
      assert.match(risk.detail, /core\.fsmonitor/)
      const r3 = await sh(REWRITE, options(ws))
      assert.equal(r3.stdout, 'refused\n', `the repository the link leads to is kept read-only: ${show(r3)}`)
    })

    test(`${mode}: a link the host made before any run, a repository planted where it leads: the run reports it`, async (t) => {
      const { ws } = workspace(t)
      fs.symlinkSync('../node_modules/x', path.join(ws, 'src/lib'))
      const r = await sh(PLANT, options(ws))
      assert.equal(r.stdout, 'planted\n', show(r))
      const risk = linkRisk(r, ws)
      assert.ok(risk, `the link is reported: ${JSON.stringify(r.hostRisks, null, 1)}`)
      assert.equal(risk.kind, 'git-directory-created')
      assert.match(risk.detail, /core\.fsmonitor/)
      const r2 = await sh(REWRITE, options(ws))
      assert.equal(r2.stdout, 'refused\n', `the repository the link leads to is kept read-only now: ${show(r2)}`)
    })
  }
})
