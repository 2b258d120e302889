'use strict'
// pnpm (package-import-method 'auto' on ext4) and uv (link-mode 'hardlink' on Linux) install a
// project's packages as hard links to the files of a store every project of the user links: a run
// that may write its node_modules/.pnpm or .venv writes that store's files, and so every other
// project's copy (an attacker's review: a run in workspace A appended code to its left-pad, and
// `require("left-pad")` in workspace B ran it). No overlay can cover a file that is its own name
// in the workspace, so the result says so before the run (`sandboxDetails.notEnforced`). The
// links are made here as pnpm and uv make them; neither tool is needed.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')

const { spawnSandboxed } = require('..')

const linux = process.platform === 'linux'
// `npm test` passes npm's settings to this process (`npm_config_userconfig` names the real
// `~/.npmrc`, which pnpm reads before `$HOME/.npmrc`): the runs here judge the homes they make.
for (const k of Object.keys(process.env).filter((k) => /^npm_config_/i.test(k))) delete process.env[k]
const base = fs.mkdtempSync(path.join(fs.existsSync('/var/tmp') ? '/var/tmp' : require('node:os').tmpdir(), 'sandspawn-linked-'))
test.after(async () => {
  await require('../binding').toolCachesSettled()
  fs.rmSync(base, { recursive: true, force: true })
})

/** A home with a store file and a workspace whose `installed` file is a hard link to it. */
function layout(name, store, installed) {
  const dir = path.join(base, name)
  const home = path.join(dir, 'home')
  const storeFile = path.join(home, store, 'files/4f/2a9c0b1e-index')
  fs.mkdirSync(path.dirname(storeFile), { recursive: true })
  fs.writeFileSync(storeFile, 'module.exports = 1\n')
  const ws = path.join(dir, 'ws')
  fs.mkdirSync(path.dirname(path.join(ws, installed)), { recursive: true })
  fs.linkSync(storeFile, path.join(ws, installed))
  return { home: fs.realpathSync(home), ws: fs.realpathSync(ws) }
}

async function notEnforced(ws, home) {
  const r = await spawnSandboxed(['true'], { cwd: ws, sandbox: 'workspace-write', env: { ...process.env, HOME: home } })
  assert.equal(r.exitCode, 0, r.stderr)
  return r.sandboxDetails.notEnforced
}

test('a workspace whose node_modules/.pnpm is linked into pnpm\'s store says so', { skip: !linux }, async () => {
  const { home, ws } = layout('pnpm', '.local/share/pnpm/store', 'node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/index.js')
  const said = (await notEnforced(ws, home)).filter((n) => n.includes('node_modules/.pnpm'))
  assert.equal(said.length, 1, JSON.stringify(said))
  assert.ok(said[0].includes(path.join(ws, 'node_modules/.pnpm')) && said[0].includes(path.join(home, '.local/share/pnpm/store')), said[0])
  assert.match(said[0], /package-import-method/)
})

test('a workspace whose .venv is linked into uv\'s cache says so', { skip: !linux }, async () => {
  const { home, ws } = layout('uv', '.cache/uv', '.venv/lib/python3.12/site-packages/six.py')
  const said = (await notEnforced(ws, home)).filter((n) => n.includes('.venv'))
  assert.equal(said.length, 1, JSON.stringify(said))
  assert.ok(said[0].includes(path.join(ws, '.venv')) && said[0].includes(path.join(home, '.cache/uv')), said[0])
  assert.match(said[0], /UV_LINK_MODE/)
})

test('a directory that is no store is not named as one', { skip: !linux }, async () => {
  // Only what names this home: the host's own store may lie on this filesystem too.
  const { home, ws } = layout('nostore', 'elsewhere', 'node_modules/.pnpm/a@1.0.0/node_modules/a/index.js')
  const said = (await notEnforced(ws, home)).filter((n) => n.includes(home))
  assert.deepEqual(said, [])
})

// Found by an attacker's review: a store named only in a configuration file (pnpm's documented
// `store-dir` in the project's `.npmrc`, the user's `~/.npmrc` or the global npmrc; uv's
// `cache-dir` in `uv.toml` or `pyproject.toml`'s `[tool.uv]`) was not looked for, and the run that
// appended to a linked file changed every project linked to that store with nothing said.
/** A store at `dir/store` (no place the environment names) and a workspace whose `installed` file is linked into it. */
function outsideLayout(name, installed) {
  const dir = path.join(base, name)
  const { home, ws } = layout(name, '.unused', installed)
  const store = path.join(dir, 'store')
  fs.mkdirSync(path.join(store, 'v10/files/ab'), { recursive: true })
  const blob = path.join(store, 'v10/files/ab/cdef')
  fs.writeFileSync(blob, 'module.exports = 1\n')
  fs.rmSync(path.join(ws, installed))
  fs.linkSync(blob, path.join(ws, installed))
  return { home, ws, store: fs.realpathSync(store) }
}

for (const where of ['the project\'s .npmrc', '~/.npmrc']) {
  test(`a pnpm store named by store-dir in ${where} is said`, { skip: !linux }, async () => {
    const { home, ws, store } = outsideLayout(`npmrc-${where.startsWith('~') ? 'user' : 'project'}`, 'node_modules/.pnpm/left-pad@1.3.0/node_modules/left-pad/index.js')
    fs.writeFileSync(path.join(where.startsWith('~') ? home : ws, '.npmrc'), `registry=https://registry.npmjs.org/\nstore-dir = ${store}\n`)
    const said = (await notEnforced(ws, home)).filter((n) => n.includes('node_modules/.pnpm'))
    assert.equal(said.length, 1, JSON.stringify(said))
    assert.ok(said[0].includes(`pnpm's store ${store}`), said[0])
  })
}

for (const [file, text] of [['uv.toml', (c) => `cache-dir = "${c}"\n`], ['pyproject.toml', (c) => `[project]\nname = "x"\n\n[tool.uv]\ncache-dir = "${c}"\n`]]) {
  test(`a uv cache named by cache-dir in ${file} is said`, { skip: !linux }, async () => {
    const { home, ws, store } = outsideLayout(`uv-${file}`, '.venv/lib/python3.12/site-packages/six.py')
    fs.writeFileSync(path.join(ws, file), text(store))
    const said = (await notEnforced(ws, home)).filter((n) => n.includes('.venv'))
    assert.equal(said.length, 1, JSON.stringify(said))
    assert.ok(said[0].includes(`uv's cache ${store}`), said[0])
  })
}

test('packages hard-linked into a store no configuration names are said all the same, copies are not', { skip: !linux }, async () => {
  const { home, ws } = outsideLayout('unknown', 'node_modules/.pnpm/@scope+a@1.0.0/node_modules/@scope/a/index.js')
  fs.mkdirSync(path.join(ws, '.venv/lib/python3.12/site-packages/six-1.0.dist-info'), { recursive: true })
  fs.linkSync(path.join(ws, 'node_modules/.pnpm/@scope+a@1.0.0/node_modules/@scope/a/index.js'), path.join(ws, '.venv/lib/python3.12/site-packages/six-1.0.dist-info/METADATA'))
  const said = (await notEnforced(ws, home)).filter((n) => n.startsWith('hard-linked packages'))
  assert.equal(said.length, 2, JSON.stringify(said))
  assert.ok(said[0].includes(path.join(ws, 'node_modules/.pnpm')) && /3 names/.test(said[0]), said[0])
  assert.ok(said[1].includes(path.join(ws, '.venv')), said[1])
  // Copies (one name each, as package-import-method=copy and UV_LINK_MODE=copy make them): nothing.
  for (const f of ['node_modules/.pnpm/@scope+a@1.0.0/node_modules/@scope/a/index.js', '.venv/lib/python3.12/site-packages/six-1.0.dist-info/METADATA']) {
    fs.rmSync(path.join(ws, f))
    fs.writeFileSync(path.join(ws, f), 'copy\n')
  }
  // (A store of the host's own environment on this filesystem is named still: the sample is bounded.)
  const unknown = (n) => n.startsWith('hard-linked packages') && n.includes(ws) && !/pnpm's store \/|uv's cache \//.test(n)
  assert.deepEqual((await notEnforced(ws, home)).filter(unknown), [])
})
