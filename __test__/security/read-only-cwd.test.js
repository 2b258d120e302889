'use strict'
// A readOnlyPaths entry that is the run's own working directory (the cwd of a workspace-write run,
// with or without writableRoots below it: "only out/ may change").
//
// Found by an attacker's review (mode34):
// - bwrap: the helper entered the planned working directory (planned_mounts) before it made its
//   read-only carve-outs (read_only::bind_all), so the command's cwd stayed the directory beneath
//   the read-only copy: by an absolute path the cwd was read-only, by a relative one it was the
//   writable bind, and `rm src/del.c`, `mv`, `mkdir`, `ln -s`, `chmod 777` changed the host's
//   "read-only" workspace (file writes were refused by the helper's Landlock layer, but an empty
//   file was still created), hostRisks [], nothing in notEnforced;
// - the Landlock mode: a read-only path equal to a writable root was not "inside" it, so the root
//   was granted whole and the entry dropped: every write landed, nothing said.
// What bwrap does by absolute path is what the API promises ("kept read-only even inside a
// writable root"): the entry is read-only, a root deeper in it writable.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { run, show, tempTree } = require('./helpers')

const PROBE = `
import os
def t(name, f):
    try:
        f()
        print('WROTE', name)
    except OSError as e:
        print('refused', name, e.errno)
t('new file', lambda: open('new.sh', 'x').write('echo evil'))
t('new file in src', lambda: open('src/evil.c', 'x').write('evil'))
t('rewrite', lambda: open('src/main.c', 'r+').write('EVIL'))
t('unlink', lambda: os.unlink('src/del.c'))
t('rename', lambda: os.rename('src/ren.c', 'src/ren2.c'))
t('mkdir', lambda: os.mkdir('newdir'))
t('symlink', lambda: os.symlink('/etc/passwd', 'lnk'))
t('out/', lambda: open('out/a.o', 'x').write('built'))
`
// The Landlock mode governs no modes (its notEnforced says `file-modes`): chmod is bwrap's alone.
const CHMOD = "t('chmod', lambda: os.chmod('src/main.c', 0o777))\n"

/** ws with src/{main,del,ren}.c and out/; what the host has afterwards, for comparing. */
function workspace(t) {
  const { ws } = tempTree(t)
  fs.mkdirSync(path.join(ws, 'src'))
  fs.mkdirSync(path.join(ws, 'out'))
  for (const f of ['main.c', 'del.c', 'ren.c']) fs.writeFileSync(path.join(ws, 'src', f), 'orig\n')
  return ws
}
function hostView(ws) {
  const out = []
  const walk = (d) => {
    for (const n of fs.readdirSync(d).sort()) {
      const p = path.join(d, n)
      const st = fs.lstatSync(p)
      out.push(`${path.relative(ws, p)} ${(st.mode & 0o7777).toString(8)}${st.isFile() ? ` ${fs.readFileSync(p, 'utf8').trim()}` : ''}`)
      if (st.isDirectory()) walk(p)
    }
  }
  walk(ws)
  return out
}

for (const mode of ['bwrap', 'landlock']) {
  for (const out of [true, false]) {
    test(`${mode}: readOnlyPaths [cwd]${out ? ' with writableRoots [cwd/out]' : ''}: nothing of the cwd changes by a relative path${out ? '; out/ stays writable' : ''}`, async (t) => {
      const ws = workspace(t)
      const before = hostView(ws)
      const sandbox = { mode: 'workspace-write', readOnlyPaths: [ws], ...(out ? { writableRoots: [path.join(ws, 'out')] } : {}) }
      const r = await run(['python3', '-c', PROBE + (mode === 'bwrap' ? CHMOD : '')], { cwd: ws, sandbox, linux: { allow: [mode] } })
      if (r.sandboxType !== mode) return t.skip(`no ${mode} here: ${r.sandboxType}`)
      assert.equal(r.exitCode, 0, show(r))
      const wrote = r.stdout.split('\n').filter((l) => l.startsWith('WROTE')).map((l) => l.slice(6))
      assert.deepEqual(wrote, out ? ['out/'] : [], `the read-only cwd was changed: ${show(r)}`)
      const after = hostView(ws).filter((l) => !l.startsWith('out/a.o '))
      assert.deepEqual(after, before, show(r))
    })
  }
}
