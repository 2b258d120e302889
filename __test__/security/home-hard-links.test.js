'use strict'
// An attacker's review (fixes17/hardlink.sh): dotfiles that are HARD links into the checkout a
// run works in (`ln dotfiles/bashrc ~/.bashrc`, `ln dotfiles/ssh_config ~/.ssh/config`, the home
// outside every root, the run in ~/dotfiles). The run appended to both; the host's next `bash -i`
// and `ssh` ran what it planted, and neither `hostRisks` nor `notEnforced` said a word. A hard
// link's other names cannot be found without a walk, so no mount can cover the inode: the run
// says so before (`notEnforced`) and reports the write after it (`hostRisks`), in bwrap and
// Landlock mode alike. Review mode needs neither: apply renames a new file into place.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree } = require('./helpers')

const ROOT = path.resolve(__dirname, '../..')

/** In a fresh node process whose HOME is `home` (the host's home is read from the process). */
function runAs(home, script, cwd, extra) {
  const options = { cwd, timeout: 20000, sandbox: { mode: 'workspace-write', ...(extra.sandbox || {}) }, linux: extra.linux }
  const js = `const s = require(${JSON.stringify(ROOT)});
    s.spawnSandboxed(['sh', '-c', ${JSON.stringify(script)}], ${JSON.stringify(options)})
      .then(async (r) => { if (r.changeSet) { r.applied = await s.applyChangeSet(r.changeSet.id).then(() => true, (e) => e.message) } process.stdout.write(JSON.stringify(r)) },
        (e) => process.stdout.write(JSON.stringify({ error: e.code, message: e.message })))`
  const r = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8', timeout: 60000, env: { ...process.env, HOME: home } })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

function dotfiles(t) {
  const tree = tempTree(t)
  const home = path.join(tree.root, 'home')
  const dots = path.join(home, 'dotfiles')
  fs.mkdirSync(dots, { recursive: true })
  fs.mkdirSync(path.join(home, '.ssh'))
  fs.writeFileSync(path.join(dots, 'bashrc'), '# bashrc\n')
  fs.linkSync(path.join(dots, 'bashrc'), path.join(home, '.bashrc'))
  fs.writeFileSync(path.join(dots, 'ssh_config'), 'Host x\n')
  fs.linkSync(path.join(dots, 'ssh_config'), path.join(home, '.ssh', 'config'))
  return { home, dots }
}

const WRITE = 'echo "echo planted" >> bashrc && printf "Host *\\n  ProxyCommand sh -c planted\\n" >> ssh_config && echo appended'

describe('home paths that are hard links into a writable root', () => {
  for (const mode of ['bwrap', 'landlock']) {
    test(`${mode}: said in notEnforced before the run, and a write through the other name is a host risk`, (t) => {
      const { home, dots } = dotfiles(t)
      const r = runAs(home, WRITE, dots, mode === 'landlock' ? { linux: { allow: ['landlock'] } } : {})
      assert.equal(r.error, undefined, r.message)
      if (mode === 'landlock' && r.sandboxType !== 'landlock') return t.skip('Landlock is not available here')
      assert.equal(r.stdout, 'appended\n', JSON.stringify(r))
      const notEnforced = r.sandboxDetails.notEnforced.join('\n')
      for (const p of [path.join(home, '.bashrc'), path.join(home, '.ssh', 'config')]) {
        assert.ok(notEnforced.includes(`${p} is a hard link`), `${p} in notEnforced: ${notEnforced}`)
        const risk = r.hostRisks.find((h) => h.path === p)
        assert.ok(risk, `${p} in hostRisks: ${JSON.stringify(r.hostRisks, null, 1)}`)
        assert.equal(risk.kind, 'protected-name-created')
        assert.match(risk.detail, /hard link/)
      }
    })
  }

  test('review: apply renames a new file into place, the home files keep what they had', (t) => {
    const { home, dots } = dotfiles(t)
    const r = runAs(home, WRITE, dots, { sandbox: { workspace: 'review' } })
    assert.equal(r.error, undefined, r.message)
    assert.equal(r.applied, true, JSON.stringify(r.applied))
    assert.match(fs.readFileSync(path.join(dots, 'bashrc'), 'utf8'), /planted/)
    assert.equal(fs.readFileSync(path.join(home, '.bashrc'), 'utf8'), '# bashrc\n')
    assert.equal(fs.readFileSync(path.join(home, '.ssh', 'config'), 'utf8'), 'Host x\n')
  })
})
