'use strict'
// Issue 32: attacks on the reviewable workspace, for real. The overlay over a workspace must not
// undo the rules bwrap mounted inside it (denyRead, readOnlyPaths), the command must not reach
// its own change set, and applying a set must never write or delete outside the workspace, even
// when the host's tree was swapped for symlinks between the run and the apply.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { changeSetStore, sandspawn, tempTree, show, q } = require('./helpers')

const { spawnSandboxed, applyChangeSet, discardChangeSet, readChange, diffChange } = sandspawn
const STORE = changeSetStore('sandspawn-review-attacks-')
const REVIEW = { mode: 'workspace-write', workspace: 'review' }

async function review(script, ws, extra = {}) {
  const r = await spawnSandboxed(['bash', '-c', script], { cwd: ws, timeout: 30000, sandbox: { ...REVIEW, ...extra } })
  assert.ok(r.changeSet, show(r))
  return r
}

describe('review mode keeps the policy inside the workspace', () => {
  test('a denyRead path inside the workspace stays hidden under the overlay', async (t) => {
    const { ws } = tempTree(t)
    fs.mkdirSync(path.join(ws, 'secret'))
    fs.writeFileSync(path.join(ws, 'secret/key'), 'TOPSECRET')
    fs.writeFileSync(path.join(ws, 'token'), 'FILESECRET')
    const r = await review('cat secret/key; ls -A secret; echo x > secret/planted; true', ws, { denyRead: [path.join(ws, 'secret')] })
    assert.doesNotMatch(r.stdout + r.stderr, /TOPSECRET/, show(r))
    assert.doesNotMatch(r.stdout, /key/, 'the directory lists nothing')
    assert.deepEqual(r.changeSet.counts, { added: 0, modified: 0, deleted: 0 })
    await discardChangeSet(r.changeSet.id)
    // A denied single file cannot be kept hidden under the overlay: refused, never shown.
    const files = fs.readdirSync(STORE)
    await assert.rejects(
      spawnSandboxed(['cat', 'token'], { cwd: ws, sandbox: { ...REVIEW, denyRead: [path.join(ws, 'token')] } }),
      { code: 'ERR_SANDBOX_UNSUPPORTED', message: /deny its directory/ },
    )
    assert.deepEqual(fs.readdirSync(STORE), files, 'no change set is left behind')
  })

  test('readOnlyPaths stay read-only, and a missing one created in the set is held back', async (t) => {
    const { ws } = tempTree(t)
    fs.writeFileSync(path.join(ws, 'locked.txt'), 'keep')
    const r = await review('echo evil > locked.txt; echo $?; mkdir -p later && echo x > later/f; echo ok > free.txt', ws, { readOnlyPaths: [path.join(ws, 'locked.txt'), path.join(ws, 'later')] })
    assert.match(r.stderr, /Read-only file system/, show(r))
    const out = await applyChangeSet(r.changeSet.id)
    assert.equal(fs.readFileSync(path.join(ws, 'locked.txt'), 'utf8'), 'keep')
    assert.deepEqual(out.heldBack.map((h) => [h.path, h.risk.path]), [[path.join(ws, 'later'), path.join(ws, 'later')]])
    assert.ok(!fs.existsSync(path.join(ws, 'later')))
    assert.equal(fs.readFileSync(path.join(ws, 'free.txt'), 'utf8'), 'ok\n')
    await discardChangeSet(r.changeSet.id)
  })

  test('the command cannot write its change set (it would choose what lands, and where)', async (t) => {
    const { ws } = tempTree(t)
    const r = await review(`for f in ${q(STORE)}/cs-*/meta.json ${q(STORE)}/cs-*/roots/0/upper/x; do echo pwned > "$f" && echo WROTE; done; true`, ws)
    assert.doesNotMatch(r.stdout, /WROTE/, show(r))
    const meta = JSON.parse(fs.readFileSync(path.join(STORE, r.changeSet.id, 'meta.json'), 'utf8'))
    assert.deepEqual(meta.roots, [ws])
    await discardChangeSet(r.changeSet.id)
  })

  test('a change set store inside a writable root is refused', async (t) => {
    const { ws } = tempTree(t)
    const saved = process.env.SANDSPAWN_CHANGE_SET_DIR
    process.env.SANDSPAWN_CHANGE_SET_DIR = path.join(ws, 'store')
    try {
      await assert.rejects(spawnSandboxed(['true'], { cwd: ws, sandbox: REVIEW }), { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /writable root/ })
    } finally {
      process.env.SANDSPAWN_CHANGE_SET_DIR = saved
    }
    assert.ok(!fs.existsSync(path.join(ws, 'store')))
  })
})

describe('applying never follows a symlink out of the workspace', () => {
  test('a directory swapped for a symlink before apply: a conflict, and forced it is replaced, not followed', async (t) => {
    const { ws, out } = tempTree(t)
    fs.mkdirSync(path.join(ws, 'sub'))
    const r = await review('echo payload > sub/new.txt', ws)
    fs.rmSync(path.join(ws, 'sub'), { recursive: true })
    fs.symlinkSync(out, path.join(ws, 'sub'))
    const first = await applyChangeSet(r.changeSet.id)
    assert.ok(first.conflicts.length > 0, JSON.stringify(first))
    assert.ok(!fs.existsSync(path.join(out, 'new.txt')))
    await applyChangeSet(r.changeSet.id, { force: true })
    assert.ok(!fs.existsSync(path.join(out, 'new.txt')), 'nothing written through the link')
    assert.ok(fs.lstatSync(path.join(ws, 'sub')).isDirectory())
    assert.equal(fs.readFileSync(path.join(ws, 'sub/new.txt'), 'utf8'), 'payload\n')
  })

  test('a deletion does not become one outside the workspace', async (t) => {
    const { ws, out } = tempTree(t)
    fs.mkdirSync(path.join(ws, 'src'))
    fs.writeFileSync(path.join(ws, 'src/a.txt'), 'a')
    fs.writeFileSync(path.join(out, 'a.txt'), 'precious')
    const r = await review('rm src/a.txt', ws)
    fs.rmSync(path.join(ws, 'src'), { recursive: true })
    fs.symlinkSync(out, path.join(ws, 'src'))
    await applyChangeSet(r.changeSet.id, { force: true })
    assert.equal(fs.readFileSync(path.join(out, 'a.txt'), 'utf8'), 'precious')
  })

  test('the workspace root replaced by a symlink: nothing lands anywhere', async (t) => {
    const { root, ws, out } = tempTree(t)
    const r = await review('echo x > planted.txt', ws)
    fs.renameSync(ws, path.join(root, 'moved'))
    fs.symlinkSync(out, ws)
    const res = await applyChangeSet(r.changeSet.id, { force: true })
    assert.deepEqual(res.applied, [])
    assert.match(res.conflicts[0].reason, /symlink/)
    assert.ok(!fs.existsSync(path.join(out, 'planted.txt')))
    fs.unlinkSync(ws)
    await discardChangeSet(r.changeSet.id)
  })

  test('set-id bits are not applied', async (t) => {
    const { ws } = tempTree(t)
    const r = await review('cp /bin/true suid && chmod 6755 suid', ws)
    await applyChangeSet(r.changeSet.id)
    assert.equal(fs.statSync(path.join(ws, 'suid')).mode & 0o7777, 0o755)
  })
})

describe('change set ids and paths are checked before any path is built', () => {
  test('ids that could name another directory, unknown ids, paths outside the set', async (t) => {
    const { ws } = tempTree(t)
    fs.mkdirSync(path.join(STORE, 'victim'))
    for (const id of ['../victim', 'victim', '..', '/etc', 'cs-../../victim', 'cs-0123456789ABCDEF', '', 'cs-0000000000000000']) {
      await assert.rejects(applyChangeSet(id), { code: 'ERR_SANDBOX_INVALID_OPTIONS' }, id)
      await assert.rejects(discardChangeSet(id), { code: 'ERR_SANDBOX_INVALID_OPTIONS' }, id)
      await assert.rejects(readChange(id, '/etc/passwd'), { code: 'ERR_SANDBOX_INVALID_OPTIONS' }, id)
    }
    assert.ok(fs.existsSync(path.join(STORE, 'victim')))
    await assert.rejects(applyChangeSet(42), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    const r = await review('echo x > f', ws)
    await assert.rejects(readChange(r.changeSet.id, '/etc/passwd'), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    await assert.rejects(readChange(r.changeSet.id, path.join(ws, '../out/x')), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    await assert.rejects(diffChange(r.changeSet.id, 'relative'), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    await assert.rejects(applyChangeSet(r.changeSet.id, { paths: ['/etc'] }), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    await assert.rejects(applyChangeSet(r.changeSet.id, { paths: 'x' }), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    await assert.rejects(applyChangeSet(r.changeSet.id, { forse: true }), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    await discardChangeSet(r.changeSet.id)
  })
})

describe('planted configuration in a change set is held back, not applied', () => {
  // Each lands nothing git on the host would run: what a key blacklist missed (a config that is a
  // link to a workspace file, pager.<cmd>, a commondir pointing into the workspace, .git replaced
  // by a gitdir: file), the workspace root made a git directory, a report-only name.
  const cases = {
    'config as a link': `cp .git/config notes.cfg && printf '[core]\\n\\tfsmonitor = "touch MARK; false"\\n' >> notes.cfg && ln -sf ../notes.cfg .git/config`,
    'pager.<cmd>': `printf '[pager]\\n\\tstatus = "touch MARK; cat"\\n' >> .git/config`,
    commondir: `mkdir -p gd/objects gd/refs && printf '[core]\\n\\tfsmonitor = "touch MARK; false"\\n' > gd/config && echo ../gd > .git/commondir`,
    'gitdir: file': `mkdir -p gd && cp -r .git/. gd/ && printf '[core]\\n\\tfsmonitor = "touch MARK; false"\\n' >> gd/config && rm -rf .git && echo 'gitdir: gd' > .git`,
    'reported name': `printf '[hooks]\\nenter = "touch MARK"\\n' > mise.toml`,
  }
  for (const [name, script] of Object.entries(cases)) {
    test(name, async (t) => {
      const { ws, out } = tempTree(t, { git: true })
      const mark = path.join(out, 'pwned')
      const before = fs.readdirSync(path.join(ws, '.git')).sort()
      const r = await review(script.replaceAll('MARK', q(mark)), ws)
      assert.ok(r.changeSet.hostRisks.length > 0, show(r))
      const applied = await applyChangeSet(r.changeSet.id)
      assert.ok(applied.heldBack.length > 0, JSON.stringify(applied))
      assert.ok(fs.lstatSync(path.join(ws, '.git')).isDirectory())
      assert.deepEqual(fs.readdirSync(path.join(ws, '.git')).sort(), before, 'the repository is as it was')
      assert.ok(!fs.lstatSync(path.join(ws, '.git/config')).isSymbolicLink())
      assert.ok(!fs.existsSync(path.join(ws, 'mise.toml')))
      require('node:child_process').spawnSync('git', ['status'], { cwd: ws, stdio: 'ignore', env: { ...process.env, PAGER: 'cat', GIT_PAGER: '' } })
      assert.ok(!fs.existsSync(mark), 'git on the host ran nothing')
      await discardChangeSet(r.changeSet.id)
    })
  }

  test('the workspace root made a git directory', async (t) => {
    const { ws, out } = tempTree(t)
    const mark = path.join(out, 'pwned')
    fs.mkdirSync(path.join(ws, 'src'))
    const r = await review(`mkdir -p objects refs/heads && echo 'ref: refs/heads/main' > HEAD && printf '[core]\\n\\tworktree = .\\n\\tfsmonitor = "touch ${q(mark)}; false"\\n' > config && echo x > src/y`, ws)
    assert.deepEqual(r.changeSet.hostRisks.map((h) => [h.kind, h.path]), [['git-directory-created', ws]], show(r))
    const applied = await applyChangeSet(r.changeSet.id)
    assert.ok(!fs.existsSync(path.join(ws, 'config')) && !fs.existsSync(path.join(ws, 'HEAD')), JSON.stringify(applied))
    assert.equal(fs.readFileSync(path.join(ws, 'src/y'), 'utf8'), 'x\n')
    await discardChangeSet(r.changeSet.id)
  })
})

describe('a guarded path swapped from above is judged by where it leads', () => {
  // Found by an attacker's review: the run copied the hooks directory (or the directory above a
  // missing readOnlyPaths entry) aside, wrote into the copy, and replaced the original by a symlink
  // to it. Only changes at or below the guarded path were judged: no host risk, apply landed the
  // link, and the host's `git commit` ran the planted hook.
  const git = (ws, ...args) => require('node:child_process').execFileSync('git', ['-C', ws, ...args], { stdio: 'pipe' })
  const hookCases = {
    'husky (.husky/_), .husky swapped': { hooksPath: '.husky/_', dir: '.husky/_', swap: '.husky' },
    'core.hooksPath tools/hooks, tools swapped': { hooksPath: 'tools/hooks', dir: 'tools/hooks', swap: 'tools' },
    'core.hooksPath tools/hooks, tools/hooks swapped': { hooksPath: 'tools/hooks', dir: 'tools/hooks', swap: 'tools/hooks' },
  }
  for (const [name, { hooksPath, dir, swap }] of Object.entries(hookCases)) {
    test(name, async (t) => {
      const { ws, out } = tempTree(t, { git: true })
      const mark = path.join(out, 'hook-ran')
      fs.mkdirSync(path.join(ws, dir), { recursive: true })
      fs.writeFileSync(path.join(ws, dir, 'keep'), '')
      git(ws, 'config', 'core.hooksPath', hooksPath)
      git(ws, 'config', 'user.email', 'a@b')
      git(ws, 'config', 'user.name', 'a')
      const hook = path.join('build-cache', path.relative(swap, dir), 'pre-commit')
      const r = await review(`cp -r ${swap} build-cache && printf '#!/bin/sh\ntouch ${q(mark)}\n' > ${hook} && chmod +x ${hook} && rm -rf ${swap} && ln -s ${q(path.join(ws, 'build-cache'))} ${swap} && echo swapped`, ws)
      assert.equal(r.stdout.trim(), 'swapped', show(r))
      assert.ok(r.changeSet.hostRisks.some((h) => h.kind === 'hooks-written' && h.path === path.join(ws, swap)), show(r))
      const applied = await applyChangeSet(r.changeSet.id)
      assert.ok(applied.heldBack.some((h) => h.risk.path === path.join(ws, swap)), JSON.stringify(applied))
      assert.ok(fs.lstatSync(path.join(ws, swap)).isDirectory(), 'the hooks directory stays the host\'s')
      fs.writeFileSync(path.join(ws, 'f'), 'y')
      git(ws, 'add', 'f')
      require('node:child_process').spawnSync('git', ['-C', ws, 'commit', '-q', '-m', 't'], { stdio: 'ignore' })
      assert.ok(!fs.existsSync(mark), "the host's git commit ran no planted hook")
      await discardChangeSet(r.changeSet.id)
    })
  }

  test("a missing readOnlyPaths entry's directory swapped for a symlink", async (t) => {
    const { ws } = tempTree(t)
    fs.mkdirSync(path.join(ws, 'config'))
    fs.writeFileSync(path.join(ws, 'config/base.json'), '{}')
    const ro = path.join(ws, 'config/production.json')
    const r = await review(`cp -r config config.d && echo '{"evil":1}' > config.d/production.json && rm -rf config && ln -s config.d config && echo swapped`, ws, { readOnlyPaths: [ro] })
    assert.equal(r.stdout.trim(), 'swapped', show(r))
    assert.ok(r.changeSet.hostRisks.some((h) => h.path === path.join(ws, 'config')), show(r))
    const applied = await applyChangeSet(r.changeSet.id)
    assert.ok(applied.heldBack.some((h) => h.risk.path === path.join(ws, 'config')), JSON.stringify(applied))
    assert.ok(fs.lstatSync(path.join(ws, 'config')).isDirectory())
    assert.ok(!fs.existsSync(ro), 'the read-only path stays missing')
    await discardChangeSet(r.changeSet.id)
  })
})

describe('a continued change set is judged as strictly as its strictest run', () => {
  // Found by an attacker's review: the policy a set was judged by was fixed by the run that began
  // it. Begun by a plain `true` with protectGit: false (or the defaults), a continuing run with
  // protectGit and its own readOnlyPaths planted core.fsmonitor, a hook and that path: no host
  // risk, and apply landed them (the host's next `git status` ran the fsmonitor).
  const plant = (mark) => `git config core.fsmonitor "touch ${q(mark)}; false" && printf '#!/bin/sh\ntouch ${q(mark)}\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo export X=1 > .envrc && echo secret=1 > prod.cfg && echo planted`
  const firsts = { 'protectGit: false': { protectGit: false }, 'protectedNames: []': { protectedNames: [] }, defaults: {} }
  for (const [name, first] of Object.entries(firsts)) {
    test(`begun with ${name}`, async (t) => {
      const { ws, out } = tempTree(t, { git: true })
      const mark = path.join(out, 'pwned')
      const r1 = await review('true', ws, first)
      const strict = { protectGit: true, protectedNames: ['.envrc'], readOnlyPaths: [path.join(ws, 'prod.cfg')], changeSet: r1.changeSet.id }
      const r2 = await review(plant(mark), ws, strict)
      assert.equal(r2.stdout.trim(), 'planted', show(r2))
      const risky = r2.changeSet.hostRisks.map((h) => path.relative(ws, h.path)).sort()
      for (const p of ['.envrc', '.git/config', '.git/hooks/pre-commit', 'prod.cfg']) assert.ok(risky.includes(p), `${p} in ${risky}`)
      const applied = await applyChangeSet(r2.changeSet.id)
      assert.ok(applied.heldBack.length >= 4, JSON.stringify(applied))
      assert.ok(!fs.existsSync(path.join(ws, '.git/hooks/pre-commit')) && !fs.existsSync(path.join(ws, 'prod.cfg')) && !fs.existsSync(path.join(ws, '.envrc')))
      require('node:child_process').spawnSync('git', ['status'], { cwd: ws, stdio: 'ignore' })
      assert.ok(!fs.existsSync(mark), 'git on the host ran nothing')
      // The strict policy stays with the set: a later lax run does not loosen it.
      const r3 = await review('true', ws, { ...first, changeSet: r2.changeSet.id })
      assert.ok(r3.changeSet.hostRisks.length >= 4, show(r3))
      await discardChangeSet(r2.changeSet.id)
    })
  }
})

test('a workspace entry made a symlink to a git directory planted in the writable /tmp: held back; the host\'s git status in it runs nothing', async (t) => {
  const { ws, out } = tempTree(t, { git: true })
  fs.mkdirSync(path.join(ws, 'lib'))
  fs.writeFileSync(path.join(ws, 'lib', 'a.js'), 'x\n')
  const mark = path.join(out, 'pwned')
  const evil = fs.mkdtempSync('/tmp/sandspawn-link-')
  t.after(() => fs.rmSync(evil, { recursive: true, force: true }))
  const script = [
    `cd ${q(evil)} && git init -q --bare . && git config core.bare false && git config core.worktree .`,
    `git config core.fsmonitor ${q(`touch ${mark}; false`)}`,
    `cd ${q(ws)} && rm -rf lib && ln -s ${q(evil)} lib && ln -s ${q(evil)}-not-yet/x later && echo fine > ok.txt`,
  ].join(' && ')
  const r = await review(script, ws)
  const risks = Object.fromEntries(r.changeSet.hostRisks.map((h) => [h.path, h.kind]))
  assert.equal(risks[path.join(ws, 'lib')], 'git-directory-created', show(r) + JSON.stringify(r.changeSet.hostRisks))
  assert.equal(risks[path.join(ws, 'later')], 'link-to-shared-directory', JSON.stringify(r.changeSet.hostRisks))
  const applied = await applyChangeSet(r.changeSet.id)
  assert.deepEqual(applied.heldBack.map((h) => h.path).sort(), [path.join(ws, 'later'), path.join(ws, 'lib')], JSON.stringify(applied))
  assert.ok(applied.applied.includes(path.join(ws, 'ok.txt')), JSON.stringify(applied))
  // The directory the link replaced may go (a deletion runs nothing); the link does not land.
  const lib = path.join(ws, 'lib')
  assert.ok(!fs.existsSync(lib) || !fs.lstatSync(lib).isSymbolicLink(), 'lib is not the link')
  require('node:child_process').spawnSync('git', ['status'], { cwd: fs.existsSync(lib) ? lib : ws, stdio: 'ignore' })
  assert.ok(!fs.existsSync(mark), 'git on the host ran nothing')
  await discardChangeSet(r.changeSet.id)
})

test('a tree deeper than PATH_MAX: the run keeps its result, the set is reported incomplete, listed, applied in part and discarded', async (t) => {
  const { ws } = tempTree(t)
  const n = 'x'.repeat(200)
  const r = await review(`echo fine > ok.txt; for i in $(seq 25); do mkdir ${n} && cd ${n} || exit 1; done; echo made`, ws)
  assert.equal(r.stdout.trim(), 'made', show(r))
  assert.equal(r.changeSet.truncated, true)
  assert.deepEqual(r.changeSet.hostRisks.map((h) => h.kind), ['scan-incomplete'], show(r))
  const listed = (await sandspawn.listChangeSets()).find((s) => s.id === r.changeSet.id)
  assert.ok(listed && listed.counts && /incomplete/.test(listed.error), JSON.stringify(listed))
  const applied = await applyChangeSet(r.changeSet.id)
  assert.ok(applied.applied.includes(path.join(ws, 'ok.txt')), JSON.stringify(applied.applied.length))
  assert.deepEqual(applied.heldBack.map((h) => h.risk.kind), ['scan-incomplete'])
  await discardChangeSet(r.changeSet.id)
  assert.ok(!fs.readdirSync(STORE).includes(r.changeSet.id), 'a set of any depth can be removed')
})

/** git on the host, for fixtures only. */
const hostGit = (dir, ...args) => require('node:child_process').execFileSync('git', ['-C', dir, ...args], { stdio: 'pipe' })

/** A repository at `dir` made on the host, whose core.hooksPath is `hooksPath`. */
function repoWithHooksPath(dir, hooksPath) {
  hostGit(dir, 'init', '-q')
  hostGit(dir, 'config', 'user.email', 'a@b')
  hostGit(dir, 'config', 'user.name', 'a')
  hostGit(dir, 'config', 'core.hooksPath', hooksPath)
}

/**
 * A review run in `root` that writes the hook `hook` (relative to `root`; its directory made if
 * missing) and `notes.txt`: the hook is `hooks-written`, apply holds it back and lands the rest,
 * and the host's `git commit` in `repo` runs no planted hook. `before`: commands run first.
 */
async function plantedHookHeldBack(root, repo, hook, mark, before = '') {
  const r = await review(`${before}mkdir -p ${path.dirname(hook)} && printf '#!/bin/sh\ntouch ${q(mark)}\n' > ${hook} && chmod +x ${hook} && echo ok > notes.txt && echo planted`, root)
  assert.equal(r.stdout.trim(), 'planted', show(r))
  assert.ok(r.changeSet.hostRisks.some((h) => h.kind === 'hooks-written' && path.join(root, hook).startsWith(h.path)), show(r) + JSON.stringify(r.changeSet.hostRisks))
  const applied = await applyChangeSet(r.changeSet.id)
  assert.ok(!fs.existsSync(path.join(root, hook)), JSON.stringify(applied))
  assert.equal(fs.readFileSync(path.join(root, 'notes.txt'), 'utf8'), 'ok\n', 'the rest lands')
  fs.writeFileSync(path.join(repo, 'f'), 'y')
  hostGit(repo, 'add', 'f')
  require('node:child_process').spawnSync('git', ['-C', repo, 'commit', '-q', '-m', 't'], { stdio: 'ignore' })
  assert.ok(!fs.existsSync(mark), "the host's git commit ran no planted hook")
  await discardChangeSet(r.changeSet.id)
}

describe('hooks git runs from outside the repository\'s top are judged', () => {
  // Left open by the tenth session: only hooks directories below a repository's top were guarded.
  // A repository `a/` whose core.hooksPath is `../hooks` (or an absolute path elsewhere in the
  // reviewed root), or whose `.husky` is a link to `../x`: a hook the run wrote there landed on
  // apply unflagged, and the host's `git commit` in `a/` ran it.
  const cases = {
    'core.hooksPath ../hooks': { hooksPath: '../hooks', hooks: 'hooks' },
    'core.hooksPath absolute, elsewhere in the root': { hooksPath: (ws) => path.join(ws, 'shared/hooks'), hooks: 'shared/hooks' },
    "husky's .husky a link to ../x on the host": { hooksPath: '.husky/_', link: '../x', hooks: 'x/_' },
  }
  for (const [name, { hooksPath, link, hooks }] of Object.entries(cases)) {
    test(name, async (t) => {
      const { ws, out } = tempTree(t)
      const mark = path.join(out, 'hook-ran')
      const repo = path.join(ws, 'a')
      fs.mkdirSync(repo)
      repoWithHooksPath(repo, typeof hooksPath === 'function' ? hooksPath(ws) : hooksPath)
      fs.mkdirSync(path.join(ws, hooks), { recursive: true })
      if (link) fs.symlinkSync(link, path.join(repo, '.husky'))
      await plantedHookHeldBack(ws, repo, path.join(hooks, 'pre-commit'), mark)
    })
  }
})

describe('hooks of the repository above a reviewed root are judged', () => {
  // Found by an attacker's review: with the cwd a package of a monorepo whose core.hooksPath is
  // `frontend/githooks` (the repository's top above the reviewed root), a hook the run wrote there
  // was no host risk, apply landed it, and the host's `git commit` at the top ran it.
  const cases = {
    'core.hooksPath frontend/githooks': { hooksPath: 'frontend/githooks', hooks: 'githooks', exists: true },
    'core.hooksPath frontend/tools/hooks, not there yet': { hooksPath: 'frontend/tools/hooks', hooks: 'tools/hooks', exists: false },
  }
  for (const [name, { hooksPath, hooks, exists }] of Object.entries(cases)) {
    test(name, async (t) => {
      const { ws, out } = tempTree(t)
      const pkg = path.join(ws, 'frontend')
      fs.mkdirSync(pkg)
      repoWithHooksPath(ws, hooksPath)
      if (exists) fs.mkdirSync(path.join(pkg, hooks), { recursive: true })
      await plantedHookHeldBack(pkg, ws, path.join(hooks, 'pre-commit'), path.join(out, 'hook-ran'))
    })
  }
})

describe('a hook that is a link into the work tree, written through its other name', () => {
  // An attacker's review: `.git/hooks/pre-commit` a symlink to `../../scripts/pre-commit` (made by
  // the user on the host). The set rewrote `scripts/pre-commit`: no host risk, apply landed it, and
  // the host's `git commit` ran it. A hard link needs nothing: apply writes a new file and renames it
  // into place, which leaves the hook's inode as it was.
  const git = (dir, ...args) => require('node:child_process').execFileSync('git', ['-C', dir, ...args], { stdio: 'pipe' })
  for (const [name, link] of [['symlink', (target, hook) => fs.symlinkSync('../../scripts/pre-commit', hook)], ['hard link', (target, hook) => fs.linkSync(target, hook)]]) {
    test(name, async (t) => {
      const { ws, out } = tempTree(t, { git: true })
      const mark = path.join(out, 'hook-ran')
      git(ws, 'config', 'user.email', 'a@b')
      git(ws, 'config', 'user.name', 'a')
      fs.mkdirSync(path.join(ws, 'scripts'))
      const target = path.join(ws, 'scripts/pre-commit')
      fs.writeFileSync(target, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
      link(target, path.join(ws, '.git/hooks/pre-commit'))
      const r = await review(`printf '#!/bin/sh\ntouch ${q(mark)}\n' > scripts/pre-commit && echo ok > notes.txt && echo planted`, ws)
      assert.equal(r.stdout.trim(), 'planted', show(r))
      if (name === 'symlink') {
        assert.ok(r.changeSet.hostRisks.some((h) => h.kind === 'hooks-written' && h.path === target), show(r) + JSON.stringify(r.changeSet.hostRisks))
      }
      const applied = await applyChangeSet(r.changeSet.id)
      if (name === 'symlink') assert.ok(applied.heldBack.some((h) => h.path === target), JSON.stringify(applied))
      assert.equal(fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'ok\n', 'the rest lands')
      fs.writeFileSync(path.join(ws, 'f'), 'y')
      git(ws, 'add', 'f')
      require('node:child_process').spawnSync('git', ['-C', ws, 'commit', '-q', '-m', 't'], { stdio: 'ignore' })
      assert.ok(!fs.existsSync(mark), "the host's git commit ran no planted hook")
      if (applied.heldBack.length) await discardChangeSet(r.changeSet.id)
    })
  }
})

describe("the host's symlink a denyRead path is resolved through, changed in the set: held back", () => {
  // Left open by the tenth session (closed there for direct runs): denyRead: [ws/cfg/key] with
  // cfg -> real. A run that removed cfg, or made it a link to `other`, got that into the set; once
  // applied, the next run's mask landed on other/key (or on nothing) and real/key was readable.
  for (const [name, script] of Object.entries({ 'made a link to another directory': 'rm cfg && ln -s other cfg', removed: 'rm cfg', 'made a directory': 'rm cfg && mkdir -p cfg/key' })) {
    test(name, async (t) => {
      const { ws } = tempTree(t)
      const top = path.join(ws, 'top')
      fs.mkdirSync(path.join(top, 'real/key'), { recursive: true })
      fs.writeFileSync(path.join(top, 'real/key/secret'), 'TOPSECRET')
      fs.mkdirSync(path.join(top, 'other/key'), { recursive: true })
      fs.symlinkSync('real', path.join(top, 'cfg'))
      const policy = { denyRead: [path.join(top, 'cfg/key')] }
      const r = await review(`cd top && ${script} && echo changed`, ws, policy)
      assert.equal(r.stdout.trim(), 'changed', show(r))
      const at = path.join(top, 'cfg')
      assert.ok(r.changeSet.hostRisks.some((h) => h.path === at), show(r) + JSON.stringify(r.changeSet.hostRisks))
      const applied = await applyChangeSet(r.changeSet.id)
      assert.ok(applied.heldBack.some((h) => h.risk.path === at), JSON.stringify(applied))
      assert.equal(fs.readlinkSync(path.join(top, 'cfg')), 'real', 'the link stays as it was')
      const next = await spawnSandboxed(['bash', '-c', 'cat top/real/key/secret top/cfg/key/secret; true'], { cwd: ws, timeout: 30000, sandbox: { mode: 'workspace-write', ...policy } })
      assert.doesNotMatch(next.stdout, /TOPSECRET/, show(next))
      await discardChangeSet(r.changeSet.id)
    })
  }
})

test('a directory above nested repositories swapped for a link to planted ones in the writable /tmp: held back', async (t) => {
  // Checked after the tenth session left it open: the link is judged by where it leads (into /tmp),
  // and planted repositories in the set are repository-created; nothing the host's git runs lands.
  const { ws, out } = tempTree(t)
  const git = (...args) => require('node:child_process').execFileSync('git', args, { stdio: 'pipe' })
  fs.mkdirSync(path.join(ws, 'vendor/lib1'), { recursive: true })
  git('init', '-q', path.join(ws, 'vendor/lib1'))
  const mark = path.join(out, 'pwned')
  const evil = fs.mkdtempSync('/tmp/sandspawn-nested-')
  t.after(() => fs.rmSync(evil, { recursive: true, force: true }))
  const plant = (dir) => `git init -q ${dir}/lib1 && git -C ${dir}/lib1 config core.fsmonitor ${q(`touch ${mark}; false`)}`
  const r = await review(`${plant(q(evil))} && ${plant('mine')} && rm -rf vendor && ln -s ${q(evil)} vendor && ln -s mine vendor2`, ws)
  const risks = r.changeSet.hostRisks.map((h) => [h.kind, path.relative(ws, h.path)])
  assert.deepEqual(risks, [['repository-created', 'mine/lib1/.git'], ['link-to-shared-directory', 'vendor']], show(r))
  await applyChangeSet(r.changeSet.id)
  for (const dir of ['vendor/lib1', 'vendor2/lib1']) {
    if (fs.existsSync(path.join(ws, dir))) require('node:child_process').spawnSync('git', ['status'], { cwd: path.join(ws, dir), stdio: 'ignore' })
  }
  assert.ok(!fs.existsSync(mark), "the host's git status ran nothing")
  await discardChangeSet(r.changeSet.id)
})

// Found by an attacker's review: a folder made a git directory whose objects/ and refs/ are
// symlinks (git's access() follows them) was judged plain data, and a planted core.fsmonitor landed.
test('a folder made a git directory with symlinked objects and refs: held back; the host\'s git status in it runs nothing', async (t) => {
  const { ws, out } = tempTree(t, { git: true })
  fs.mkdirSync(path.join(ws, 'src'))
  fs.writeFileSync(path.join(ws, 'src', 'main.c'), 'int main(){}\n')
  const mark = path.join(out, 'pwned')
  const config = `[core]\\n\\trepositoryformatversion = 0\\n\\tbare = false\\n\\tworktree = .\\n\\tfsmonitor = "touch ${mark}; false"\\n`
  const script = `cd src && echo 'ref: refs/heads/main' > HEAD && ln -s /usr/share objects && ln -s /usr/lib refs && printf ${q(config)} > config`
  const r = await review(script, ws)
  const risks = r.changeSet.hostRisks.filter((h) => h.kind === 'git-directory-created').map((h) => h.path)
  assert.deepEqual(risks, [path.join(ws, 'src')], show(r) + JSON.stringify(r.changeSet.hostRisks))
  const applied = await applyChangeSet(r.changeSet.id)
  assert.ok(applied.heldBack.length > 0, JSON.stringify(applied))
  require('node:child_process').spawnSync('git', ['status'], { cwd: path.join(ws, 'src'), stdio: 'ignore' })
  assert.ok(!fs.existsSync(mark), 'git on the host ran the planted fsmonitor')
  await discardChangeSet(r.changeSet.id)
})

// Found by an attacker's review: a repository config git reads but the set's judge could not (a
// byte that is not UTF-8, a UTF-8 byte order mark) had its core.hooksPath ignored: a hook written
// there landed unflagged.
const HOOKS_PATH = Buffer.from('[core]\n\thooksPath = .githooks\n')
const ODD_CONFIGS = [
  ['a Latin-1 byte', (config) => Buffer.concat([config, HOOKS_PATH, Buffer.from('[user]\n\tname = J\xf6rg\n', 'latin1')])],
  ['a byte order mark', (config) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), HOOKS_PATH, config])],
]
for (const [label, rewrite] of ODD_CONFIGS) {
  test(`a hooks directory named by a config with ${label}: a hook written there is held back`, async (t) => {
    const { ws, out } = tempTree(t, { git: true })
    const gitConfig = path.join(ws, '.git', 'config')
    fs.writeFileSync(gitConfig, rewrite(fs.readFileSync(gitConfig)))
    assert.equal(require('node:child_process').execFileSync('git', ['-C', ws, 'config', 'core.hooksPath'], { encoding: 'utf8' }).trim(), '.githooks', 'git reads it')
    fs.mkdirSync(path.join(ws, '.githooks'))
    const mark = path.join(out, 'pwned')
    const r = await review(`printf ${q(`#!/bin/sh\ntouch ${mark}\n`)} > .githooks/pre-commit && chmod +x .githooks/pre-commit`, ws)
    const hooks = r.changeSet.hostRisks.filter((h) => h.kind === 'hooks-written')
    assert.equal(hooks.length, 1, show(r) + JSON.stringify(r.changeSet.hostRisks))
    const applied = await applyChangeSet(r.changeSet.id)
    assert.ok(!fs.existsSync(path.join(ws, '.githooks', 'pre-commit')), JSON.stringify(applied))
    await discardChangeSet(r.changeSet.id)
  })
}

describe('a change apply holds back does not make the rest look harmless', () => {
  // Found by an attacker's review: the judge took repository tops and hooks directories from the
  // set's view (the host's tree as if all of it had landed). A change apply holds back (a nested
  // repository's .git deleted, .git/config naming another hooks directory) made the hook the run
  // wrote look harmless: it landed, and the host's `git commit` ran it.
  test("a nested repository's .git deleted: its hooks directory stays guarded", async (t) => {
    const { ws, out } = tempTree(t)
    const repo = path.join(ws, 'sub')
    fs.mkdirSync(path.join(repo, 'githooks'), { recursive: true })
    repoWithHooksPath(repo, 'githooks')
    await plantedHookHeldBack(ws, repo, 'sub/githooks/pre-commit', path.join(out, 'hook-ran'), 'rm -rf sub/.git && ')
    assert.ok(fs.existsSync(path.join(repo, '.git/HEAD')), "the host's .git stays")
  })

  test("core.hooksPath rewritten in the set: the host's hooks directory stays guarded", async (t) => {
    const { ws, out } = tempTree(t)
    fs.mkdirSync(path.join(ws, 'githooks'))
    repoWithHooksPath(ws, 'githooks')
    await plantedHookHeldBack(ws, ws, 'githooks/pre-commit', path.join(out, 'hook-ran'), 'git config core.hooksPath decoy-hooks && ')
    assert.equal(hostGit(ws, 'config', 'core.hooksPath').toString().trim(), 'githooks')
  })
})

test('a link in a directory the set makes, whose way goes back up through a host symlink into the writable /tmp: held back', async (t) => {
  // Found by an attacker's review (mode28): `sub/b.sh -> ../cache/b.sh`, with `sub` new in the
  // set and `cache` the host's link to a directory in /tmp. Where the link leads was worked out
  // from `sub`'s parent lexically (`sub` is not on the host yet), so `cache` was not followed:
  // judged as ws/cache/b.sh, the link landed with no risk, while a direct run reports it. After
  // apply it leads to /tmp, which every later run and process can write, and the host runs it.
  const { ws } = tempTree(t)
  const shared = fs.mkdtempSync('/tmp/sandspawn-via-')
  t.after(() => fs.rmSync(shared, { recursive: true, force: true }))
  fs.symlinkSync(shared, path.join(ws, 'cache'))
  const r = await review('mkdir -p sub/deeper && ln -s ../cache/b.sh sub/b.sh && ln -s ../../cache/c.sh sub/deeper/c.sh && echo fine > ok.txt', ws)
  const risks = Object.fromEntries(r.changeSet.hostRisks.map((h) => [path.relative(ws, h.path), h.kind]))
  assert.equal(risks['sub/b.sh'], 'link-to-shared-directory', JSON.stringify(r.changeSet.hostRisks))
  assert.equal(risks['sub/deeper/c.sh'], 'link-to-shared-directory', JSON.stringify(r.changeSet.hostRisks))
  const applied = await applyChangeSet(r.changeSet.id)
  assert.ok(!fs.existsSync(path.join(ws, 'sub/b.sh')) && fs.existsSync(path.join(ws, 'ok.txt')), JSON.stringify(applied))
  await discardChangeSet(r.changeSet.id)
})

test('a link the set makes to a repository planted in node_modules: held back, as a direct run reports it', async (t) => {
  // Found by an attacker's review (mode28): no walk enters node_modules, so a git directory an
  // earlier direct run planted there (core.worktree=., core.fsmonitor) is seen by no one; a direct
  // run that then makes `lib -> node_modules/pkg` reports git-directory-created at lib, but a change
  // set's same link took the repository for the host's (it lies in a reviewed root) and landed,
  // and the host's `cd lib && git status` ran the fsmonitor.
  const { ws, out } = tempTree(t, { git: true })
  const git = (...args) => require('node:child_process').execFileSync('git', args, { stdio: 'pipe' })
  const pkg = path.join(ws, 'node_modules', 'pkg')
  fs.mkdirSync(pkg, { recursive: true })
  const mark = path.join(out, 'pwned')
  git('init', '-q', '--bare', pkg)
  git('-C', pkg, 'config', 'core.bare', 'false')
  git('-C', pkg, 'config', 'core.worktree', '.')
  git('-C', pkg, 'config', 'core.fsmonitor', `touch ${mark}; false`)
  const r = await review('ln -s node_modules/pkg lib && echo fine > ok.txt', ws)
  const risks = Object.fromEntries(r.changeSet.hostRisks.map((h) => [path.relative(ws, h.path), h.kind]))
  assert.equal(risks.lib, 'git-directory-created', JSON.stringify(r.changeSet.hostRisks))
  const applied = await applyChangeSet(r.changeSet.id)
  assert.ok(!fs.existsSync(path.join(ws, 'lib')) && fs.existsSync(path.join(ws, 'ok.txt')), JSON.stringify(applied))
  await discardChangeSet(r.changeSet.id)
})
