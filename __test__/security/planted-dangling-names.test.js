'use strict'
// Found by an attacker's review (revb36, attacking plan36's change to how the policy reads a
// symlink at a protected name): a protected name that is a symlink has its target kept read-only,
// but a dangling one (the user's `.envrc -> tools/envrc`, `tools` not made yet; a gitignored local
// file linked from the checkout) had no target to keep, and the name was left unheld: a default
// workspace-write run made `tools/envrc`, and the host's `.envrc` (which direnv runs when a shell
// enters the directory) read the run's text, with hostRisks [] (bwrap and the Landlock mode). Where
// a dangling link leads is kept absent now, through the missing directories of its way.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { sh, show, tempTree } = require('./helpers')

/** name -> its dangling link's text, and the script that makes what it leads to. */
const LINKS = [
  ['.envrc', 'tools/envrc', 'mkdir -p tools && echo "touch /tmp/pwned" > tools/envrc'],
  ['.mcp.json', 'cfg/mcp.json', 'echo "{\\"mcpServers\\":{}}" > cfg/mcp.json'],
  ['sub/.bashrc', 'rc/bashrc', 'mkdir -p sub/rc && echo "touch /tmp/pwned" > sub/rc/bashrc'],
]

describe("a protected name that is the user's dangling symlink", () => {
  for (const mechanism of ['bwrap', 'landlock']) {
    test(`${mechanism}: what it leads to cannot be made by a run, or is said`, async (t) => {
      const tree = tempTree(t, { git: true })
      fs.mkdirSync(path.join(tree.ws, 'cfg'))
      // A nested repository: its top's names are the walk's, not the workspace top's.
      fs.mkdirSync(path.join(tree.ws, 'sub'))
      execFileSync('git', ['init', '-q', path.join(tree.ws, 'sub')])
      for (const [name, to] of LINKS) fs.symlinkSync(to, path.join(tree.ws, name))
      const options = { cwd: tree.ws, sandbox: { mode: 'workspace-write' } }
      if (mechanism === 'landlock') options.linux = { allow: ['landlock'] }
      const r = await sh(LINKS.map(([, , make]) => `(${make})`).join('; ') + '; true', options)
      assert.equal(r.exitCode, 0, show(r))
      const unsaid = []
      for (const [name, to] of LINKS) {
        const link = path.join(tree.ws, name)
        const target = path.join(path.dirname(link), to)
        const said = r.hostRisks.some((h) => h.path === link || h.path === target || (target.startsWith(h.path + '/') && h.path.length > path.dirname(link).length))
        let text = null
        try {
          text = fs.readFileSync(link, 'utf8')
        } catch {}
        if (text !== null && !said) unsaid.push(`${name} reads the run's ${JSON.stringify(text)}`)
      }
      assert.deepEqual(unsaid, [], `with nothing said: ${JSON.stringify(r.hostRisks)}`)
      // Nothing left where the links lead after the run (what the run made there is moved aside).
      for (const [name, to] of LINKS) assert.equal(fs.existsSync(path.join(tree.ws, path.dirname(name), to)), false, to)
    })
  }
})

// Found by an attacker's review (rev37, attacking revb36's Carver::dangling): a protected name's
// symlink is followed through other symlinks of the workspace, and only where the chain ends was
// kept (read-only, or absent when dangling): the links on the way were not held. A default
// workspace-write run in bwrap replaced `a` of `.envrc -> a -> real` (and of a dangling chain, and
// of a loop `.envrc -> a -> .envrc`, which a way past 40 links cannot follow) with a file of its
// own, and `.envrc -> tools/x/../envrc.local` (`..` after a missing name, which leads_to does not
// follow) let it make `tools/envrc.local`: the host's `.envrc` read the run's text with hostRisks [].
const CHAINS = [
  ['through an existing chain', (ws) => { fs.writeFileSync(path.join(ws, 'real'), 'ok'); fs.symlinkSync('a', path.join(ws, '.envrc')); fs.symlinkSync('real', path.join(ws, 'a')) }, 'rm a && echo "touch /tmp/pwned" > a'],
  ['through a dangling chain', (ws) => { fs.symlinkSync('a', path.join(ws, '.envrc')); fs.symlinkSync('tools/envrc', path.join(ws, 'a')) }, 'rm a && echo "touch /tmp/pwned" > a'],
  ['in a loop', (ws) => { fs.symlinkSync('a', path.join(ws, '.envrc')); fs.symlinkSync('.envrc', path.join(ws, 'a')) }, 'rm a && echo "touch /tmp/pwned" > a'],
  ["with '..' after a missing name", (ws) => fs.symlinkSync('tools/x/../envrc.local', path.join(ws, '.envrc')), 'mkdir -p tools/x && echo "touch /tmp/pwned" > tools/envrc.local'],
]

describe("a protected name's symlink chain", () => {
  for (const mechanism of ['bwrap', 'landlock']) {
    test(`${mechanism}: a run cannot change where it leads unsaid`, async (t) => {
      const unsaid = []
      for (const [label, setup, script] of CHAINS) {
        const tree = tempTree(t, { git: true })
        setup(tree.ws)
        const options = { cwd: tree.ws, sandbox: { mode: 'workspace-write' } }
        if (mechanism === 'landlock') options.linux = { allow: ['landlock'] }
        const r = await sh(`(${script}) 2>/dev/null; true`, options)
        assert.equal(r.exitCode, 0, show(r))
        let text = null
        try {
          text = fs.readFileSync(path.join(tree.ws, '.envrc'), 'utf8')
        } catch {}
        if (text !== null && text.includes('pwned') && r.hostRisks.length === 0) unsaid.push(`${label}: .envrc reads the run's ${JSON.stringify(text)}`)
      }
      assert.deepEqual(unsaid, [])
    })
  }
})
