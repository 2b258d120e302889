'use strict'
// Found by an attacker's review (venv_pth.js): a Python virtual environment in the workspace
// (`python3 -m venv .venv` on the host) let a run plant code the host ran later, unreported: a
// `.pth` file in its site-packages (Python runs it at every start of that interpreter, and editors'
// Python extensions start the workspace's `.venv/bin/python` by themselves when the folder opens), a
// line appended to `bin/activate`, `pyvenv.cfg` (its `home` decides which interpreter runs). What pip
// never writes (`pyvenv.cfg`, `bin/python*`, `bin/activate*`) is read-only; what it may write (a
// `.pth`, `sitecustomize.py`) is reported, and held back in review mode. Nothing the run wrote is run
// on the host: the venv is a fixture of the shape `python3 -m venv` makes.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { changeSetStore, sandspawn, tempTree, sh, show } = require('./helpers')

const STORE = changeSetStore('sandspawn-venv-store-')

const SITE = '.venv/lib/python3.12/site-packages'

/** A virtual environment as `python3 -m venv .venv` leaves it, with one package installed. */
function makeVenv(ws) {
  const v = (p) => path.join(ws, '.venv', p)
  fs.mkdirSync(v('bin'), { recursive: true })
  fs.mkdirSync(path.join(ws, SITE, 'pkg'), { recursive: true })
  fs.writeFileSync(v('pyvenv.cfg'), 'home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n')
  fs.symlinkSync('/usr/bin/python3', v('bin/python3'))
  fs.symlinkSync('python3', v('bin/python'))
  fs.writeFileSync(v('bin/activate'), '# This file must be used with "source bin/activate"\n')
  fs.writeFileSync(v('bin/activate.fish'), '# fish\n')
  fs.writeFileSync(path.join(ws, SITE, 'distutils-precedence.pth'), "import os\n")
  fs.writeFileSync(path.join(ws, SITE, 'pkg/__init__.py'), '')
}

/** Each attempt on its own line: `ok <label>` or `refused <label>`. */
const ATTEMPTS = [
  ['pth', `printf 'import os\\n' > ${SITE}/zz_planted.pth`],
  ['pth-append', `echo 'import os' >> ${SITE}/distutils-precedence.pth`],
  ['sitecustomize', `echo 'import os' > ${SITE}/sitecustomize.py`],
  ['activate', `echo 'touch /tmp/x' >> .venv/bin/activate`],
  ['cfg', `echo 'home = /tmp/evil' >> .venv/pyvenv.cfg`],
  ['package', `echo 'x = 1' >> ${SITE}/pkg/__init__.py`],
  ['script', `echo '#!/bin/sh' > .venv/bin/mytool`],
  // hostc41: pip reads the environment's own `pip.conf` (its "site" configuration, sys.prefix's)
  // on every pip command run with it: an `index-url` makes the host's next `pip install` fetch
  // the package from there and run its setup.py.
  ['pipconf', `printf '[global]\\nindex-url = http://evil.invalid/simple\\n' > .venv/pip.conf`],
].map(([label, cmd]) => `if ( ${cmd} ) 2>/dev/null; then echo ok ${label}; else echo refused ${label}; fi`).join('\n')

const REPORTED = [`${SITE}/zz_planted.pth`, `${SITE}/distutils-precedence.pth`, `${SITE}/sitecustomize.py`, '.venv/pip.conf']

describe("a virtual environment's interpreter files", () => {
  for (const mode of ['bwrap', 'landlock']) {
    test(`${mode}: pyvenv.cfg and bin/activate are read-only (Landlock: bin/activate reported), .pth files and sitecustomize.py written are reported; packages and scripts are written`, async (t) => {
      const tree = tempTree(t)
      makeVenv(tree.ws)
      const options = { cwd: tree.ws, sandbox: { mode: 'workspace-write' } }
      if (mode === 'landlock') options.linux = { allow: ['landlock'] }
      const r = await sh(ATTEMPTS, options)
      assert.equal(r.exitCode, 0, show(r))
      const lines = r.stdout.trim().split('\n')
      // The Landlock mode refuses a new entry at the environment's top (it holds the read-only
      // pyvenv.cfg): a new pip.conf there is refused, not reported.
      const written = ['pth', 'pth-append', 'sitecustomize', 'package', 'script', ...(mode === 'bwrap' ? ['pipconf'] : [])]
      for (const label of written) assert.ok(lines.includes(`ok ${label}`), `${label}: ${show(r)}`)
      // The Landlock mode cannot keep a file of `bin` read-only without `bin` taking no new
      // entries (pip's scripts): it reports bin/activate changed instead.
      const refused = mode === 'bwrap' ? ['activate', 'cfg'] : ['cfg', 'pipconf']
      for (const label of refused) assert.ok(lines.includes(`refused ${label}`), `${label}: ${show(r)}`)
      assert.equal(fs.readFileSync(path.join(tree.ws, '.venv/pyvenv.cfg'), 'utf8').includes('evil'), false)
      const reported = mode === 'bwrap' ? REPORTED : [...REPORTED.filter((p) => p !== '.venv/pip.conf'), '.venv/bin/activate']
      for (const rel of reported) {
        const risk = r.hostRisks.find((h) => h.path === path.join(tree.ws, rel))
        assert.ok(risk, `${rel} is reported: ${JSON.stringify(r.hostRisks, null, 1)}`)
        assert.equal(risk.kind, 'protected-name-created', rel)
        assert.match(risk.detail, /Python/, rel)
      }
      assert.equal(r.hostRisks.length, reported.length, JSON.stringify(r.hostRisks, null, 1))
    })
  }

  test('an ordinary run in a workspace with a virtual environment reports nothing', async (t) => {
    const tree = tempTree(t)
    makeVenv(tree.ws)
    // A pip.conf outside an environment is no environment's: pip does not read it.
    const r = await sh(`echo 'x = 2' >> ${SITE}/pkg/__init__.py && mkdir docs && echo '[global]' > docs/pip.conf && echo done`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' } })
    assert.equal(r.stdout, 'done\n', show(r))
    assert.deepEqual(r.hostRisks, [])
  })

  test('review: each of them is a host risk, held back from a plain apply; packages and scripts land', async (t) => {
    const tree = tempTree(t)
    makeVenv(tree.ws)
    const r = await sh(ATTEMPTS, { cwd: tree.ws, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.equal(r.exitCode, 0, show(r))
    assert.ok(r.changeSet, show(r))
    const risky = r.changeSet.hostRisks.map((h) => path.relative(tree.ws, h.path)).sort()
    assert.deepEqual(risky, [...REPORTED, '.venv/bin/activate', '.venv/pyvenv.cfg'].sort(), JSON.stringify(r.changeSet.hostRisks, null, 1))
    const applied = await sandspawn.applyChangeSet(r.changeSet.id, {})
    assert.equal(fs.existsSync(path.join(tree.ws, SITE, 'zz_planted.pth')), false)
    assert.equal(fs.existsSync(path.join(tree.ws, SITE, 'sitecustomize.py')), false)
    assert.equal(fs.existsSync(path.join(tree.ws, '.venv/pip.conf')), false)
    assert.equal(fs.readFileSync(path.join(tree.ws, '.venv/bin/activate'), 'utf8').includes('touch'), false)
    assert.equal(fs.readFileSync(path.join(tree.ws, '.venv/pyvenv.cfg'), 'utf8').includes('evil'), false)
    assert.equal(fs.readFileSync(path.join(tree.ws, SITE, 'pkg/__init__.py'), 'utf8'), 'x = 1\n')
    assert.ok(fs.existsSync(path.join(tree.ws, '.venv/bin/mytool')))
    assert.ok(applied.heldBack.length >= 5, JSON.stringify(applied))
  })
})

// Found by an attacker's review (venv_swap.js): the files above are found by their place, and the
// walk does not follow a symlink, so a run that made a directory on the way to site-packages a link
// (`mv lib/python3.12 stash; ln -s stash lib/python3.12`, or `lib` itself) wrote its `.pth` where
// the walk saw no site-packages; and a package named `sitecustomize` (a directory, its code in
// `__init__.py`) is imported as `sitecustomize.py` is. Each is reported (held back in review).
const SWAPS = {
  pyver: `cd .venv/lib && mv python3.12 stash && ln -s stash python3.12 && printf 'import os\\n' > stash/site-packages/zz.pth`,
  lib: `cd .venv && mv lib lib2 && ln -s lib2 lib && printf 'import os\\n' > lib2/python3.12/site-packages/zz.pth`,
  pkg: `mkdir ${SITE}/sitecustomize && printf 'import os\\n' > ${SITE}/sitecustomize/__init__.py`,
}

describe('the way to site-packages and a sitecustomize package', () => {
  for (const mode of ['bwrap', 'landlock', 'review']) {
    for (const [variant, cmd] of Object.entries(SWAPS)) {
      test(`${mode}: ${variant} is refused or reported`, async (t) => {
        const tree = tempTree(t)
        makeVenv(tree.ws)
        const sandbox = { mode: 'workspace-write' }
        if (mode === 'review') sandbox.workspace = 'review'
        const options = { cwd: tree.ws, sandbox }
        if (mode === 'landlock') options.linux = { allow: ['landlock'] }
        const r = await sh(`if ( ${cmd} ) 2>/dev/null; then echo planted; else echo refused; fi`, options)
        assert.equal(r.exitCode, 0, show(r))
        if (r.stdout === 'refused\n') return
        assert.equal(r.stdout, 'planted\n', show(r))
        const risks = mode === 'review' ? r.changeSet.hostRisks : r.hostRisks
        const under = risks.filter((h) => h.path.startsWith(path.join(tree.ws, '.venv')) && h.kind === 'protected-name-created')
        assert.ok(under.length > 0, `${variant}: ${JSON.stringify(risks, null, 1)}`)
        if (mode === 'review') {
          await sandspawn.applyChangeSet(r.changeSet.id, {})
          const site = path.join(tree.ws, SITE)
          assert.equal(fs.existsSync(path.join(site, 'zz.pth')) || fs.existsSync(path.join(site, 'sitecustomize')), false, 'held back')
        }
      })
    }
  }
})
