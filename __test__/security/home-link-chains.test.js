'use strict'
// Home links that reach their file through a symlink inside the writable root a run works in
// (GNU stow, a dotfiles manager's "active" profile): `~/.bashrc -> dotfiles/active/bashrc ->
// ../pkgs/bash/bashrc`, the home outside every root, the run in ~/dotfiles. The link
// `active/bashrc` is held for the run and put back after it if the run replaced it (11d8a0d). An
// attacker's review (fixes18/dirswap.sh) replaced the DIRECTORY holding it instead: `mv active
// active.old; ln -s evil active`. The link could not be put back through a symlink, the run said
// "NOT undone", and the host's next `bash -i` ran the planted `evil/bashrc`. The directories
// between the root and each held link now stay where they are (bwrap: mount points; Landlock:
// granted entry by entry), and what a run swapped on the way is undone after it all the same.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree } = require('./helpers')

const ROOT = path.resolve(__dirname, '../..')

/** In a fresh node process whose HOME is `home` (the host's home is read from the process). */
function runAs(home, script, cwd, linux) {
  const options = { cwd, timeout: 20000, sandbox: { mode: 'workspace-write' }, linux }
  const js = `require(${JSON.stringify(ROOT)}).spawnSandboxed(['sh', '-c', ${JSON.stringify(script)}], ${JSON.stringify(options)})
    .then((r) => process.stdout.write(JSON.stringify(r)), (e) => process.stdout.write(JSON.stringify({ error: e.code, message: e.message })))`
  const r = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8', timeout: 60000, env: { ...process.env, HOME: home } })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

/**
 * `~/.bashrc -> dotfiles/<dir>/bashrc`, a link to the file in `pkgs/bash` (inside the root
 * `dotfiles`, or beside it in the home when `outside`: then no read-only path of the root is there
 * to keep anything above the link in place).
 */
function chain(t, dir, outside) {
  const tree = tempTree(t)
  const home = path.join(tree.root, 'home')
  const dots = path.join(home, 'dotfiles')
  const pkgs = path.join(outside ? home : dots, 'pkgs', 'bash')
  fs.mkdirSync(pkgs, { recursive: true })
  fs.mkdirSync(path.join(dots, dir), { recursive: true })
  fs.writeFileSync(path.join(pkgs, 'bashrc'), '# bashrc\n')
  const link = path.join(dots, dir, 'bashrc')
  const target = path.relative(path.dirname(link), path.join(pkgs, 'bashrc'))
  fs.symlinkSync(target, link)
  fs.symlinkSync(`dotfiles/${dir}/bashrc`, path.join(home, '.bashrc'))
  return { home, dots, link, target, dir }
}

const PLANT = 'mkdir -p evil/b && echo "echo planted" > evil/bashrc && echo "echo planted" > evil/b/bashrc'
const CASES = [
  // fixes18/dirswap.sh: the link's directory swapped for a symlink to a directory of the run's.
  ['the directory holding the link replaced by a symlink', 'active', false, `${PLANT} && mv active active.old && ln -s evil active`],
  ['the same, the chain ending outside the root', 'active', true, `${PLANT} && mv active active.old && ln -s evil active`],
  ['a directory two levels above the link renamed and replaced by a symlink', 'a/b', false, `${PLANT} && mv a a.old && ln -s evil a`],
  ['the directory holding the link replaced by a new one holding a planted file', 'active', true, 'mv active active.old && mkdir active && echo "echo planted" > active/bashrc'],
]

describe('the directories on the way to a held home link stay, or are put back', () => {
  for (const mode of ['bwrap', 'landlock']) {
    for (const [name, dir, outside, attack] of CASES) {
      test(`${mode}: ${name}: the host's ~/.bashrc still leads to its file`, (t) => {
        const c = chain(t, dir, outside)
        const r = runAs(c.home, `${attack} && echo swapped; true`, c.dots, mode === 'landlock' ? { allow: ['landlock'] } : undefined)
        assert.equal(r.error, undefined, r.message)
        if (mode === 'landlock' && r.sandboxType !== 'landlock') return t.skip('Landlock is not available here')
        const said = `${r.stdout}${r.stderr}\n${JSON.stringify(r.hostRisks, null, 1)}`
        assert.equal(fs.readFileSync(path.join(c.home, '.bashrc'), 'utf8'), '# bashrc\n', `the host reads the planted bashrc\n${said}`)
        const top = path.join(c.dots, dir.split('/')[0])
        assert.ok(fs.lstatSync(top).isDirectory(), `${top} is a directory\n${said}`)
        assert.equal(fs.readlinkSync(c.link), c.target, said)
        for (const h of r.hostRisks) assert.ok(!/NOT undone/.test(h.detail), `${h.path}: ${h.detail}`)
        if (r.stdout.includes('swapped')) {
          assert.ok(r.hostRisks.some((h) => h.path.startsWith(c.dots) && /undone/.test(h.detail)), `a swap that happened is reported\n${said}`)
        }
      })
    }
  }
})
