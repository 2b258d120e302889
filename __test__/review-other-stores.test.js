'use strict'
// Found by an attacker's review (apply24): another sandspawn process of the same user keeps its
// change sets elsewhere (the default ~/.local/state/sandspawn/change-sets, or $XDG_STATE_HOME's)
// than this one (SANDSPAWN_CHANGE_SET_DIR). A run of this process whose writable root held that
// other store (cwd = $HOME) read its pending sets and rewrote one: its meta.json's roots to another
// directory and a file into its upper layer. The other process's applyChangeSet then wrote the
// run's file outside its workspace. Every store a process of this user could use must stay out of
// reach, whichever store this process uses. Both processes are this one, with its environment
// switched between them (the stores are read from the host process's environment).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sandspawn, tempTree, show } = require('./security/helpers')

const { spawnSandboxed, applyChangeSet } = sandspawn
const linux = process.platform === 'linux'

/** Sets (or, for `undefined`, removes) these variables of this process. */
function as(vars) {
  for (const [k, v] of Object.entries(vars)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
}

/** A pending set of the process `a` (in `ws`), its directory, and the process `b` attacking it. */
async function attack(t, { a, b, allow }) {
  const { root, ws, out } = tempTree(t)
  const home = path.join(root, 'home')
  fs.mkdirSync(home)
  const vars = (v) => ({ HOME: home, XDG_STATE_HOME: undefined, SANDSPAWN_CHANGE_SET_DIR: undefined, TMPDIR: undefined, ...v(root) })
  const saved = { HOME: process.env.HOME, XDG_STATE_HOME: process.env.XDG_STATE_HOME, SANDSPAWN_CHANGE_SET_DIR: process.env.SANDSPAWN_CHANGE_SET_DIR, TMPDIR: process.env.TMPDIR }
  t.after(() => as(saved))
  as(vars(a))
  const r = await spawnSandboxed(['sh', '-c', 'echo benign > notes.txt'], { cwd: ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.equal(r.exitCode, 0, show(r))
  const sets = path.join(process.env.XDG_STATE_HOME || path.join(home, '.local/state'), 'sandspawn/change-sets')
  const set = path.join(sets, r.changeSet.id)
  assert.ok(fs.existsSync(path.join(set, 'meta.json')), set)
  as(vars(b))
  const script = `cat ${set}/meta.json; sed -i 's#"${ws}"#"${out}"#g' ${set}/meta.json; printf planted > ${set}/roots/0/upper/evil.sh; true`
  const linuxOpt = allow ? { linux: { allow } } : {}
  const run = await spawnSandboxed(['sh', '-c', script], { cwd: home, timeout: 60000, sandbox: 'workspace-write', ...linuxOpt })
  as(vars(a))
  const applied = await applyChangeSet(r.changeSet.id).catch((e) => e)
  return { run, applied, ws, out, set }
}

const cases = [
  ['SANDSPAWN_CHANGE_SET_DIR set in the attacking process', () => ({}), (root) => ({ SANDSPAWN_CHANGE_SET_DIR: path.join(root, 'other-store') })],
  ['XDG_STATE_HOME set in the attacking process', () => ({}), (root) => ({ XDG_STATE_HOME: path.join(root, 'xdg-state') })],
  ['XDG_STATE_HOME set in the process whose set it is', (root) => ({ XDG_STATE_HOME: path.join(root, 'home/.xdg-state') }), () => ({})],
  // Found by an attacker's review (land27): a store under the attacking process's TMPDIR (a
  // writable root of its runs) was neither covered nor kept listed there, although for the process
  // whose store it is (TMPDIR unset: /var/tmp is no root of its runs) it lay out of every run's reach.
  ['the store under the attacking process\'s TMPDIR', (root) => ({ XDG_STATE_HOME: path.join(root, 'state') }), (root) => ({ TMPDIR: path.join(root, 'state') })],
]

for (const [name, a, b] of cases) {
  for (const allow of [undefined, ['landlock']]) {
    test(`another process's pending change set stays out of a run's reach (${name}${allow ? ', Landlock' : ''})`, { skip: !linux }, async (t) => {
      const { run, applied, ws, out, set } = await attack(t, { a, b, allow })
      assert.ok(!fs.existsSync(path.join(out, 'evil.sh')), `the apply wrote outside its workspace: ${JSON.stringify(applied)} ${show(run)}`)
      assert.ok(!fs.existsSync(path.join(set, 'roots/0/upper/evil.sh')) || applied instanceof Error, show(run))
      // Landlock restricts no reads (README, "Limits"); bwrap covers the store.
      if (!allow) assert.ok(!run.stdout.includes('roots'), `the run read the set: ${run.stdout}`)
      if (!(applied instanceof Error)) assert.equal(fs.readFileSync(path.join(ws, 'notes.txt'), 'utf8'), 'benign\n')
    })
  }
}

// Found by an attacker's review of that fix (rfix24, known_home.sh): a run whose environment's
// HOME was its own workspace made `.local/state/sandspawn` a symlink to another directory; the
// next run covered where it led as a store (the real home, in the review: every write failed) and
// recorded it in known-stores, so every process's later runs covered it too. A store of the run's
// environment is covered only as named, with no symlink on its way, and never recorded.
test("a run's environment cannot make a later run cover (and list) a directory through a symlink", { skip: !linux }, async (t) => {
  const { root, ws } = tempTree(t)
  const victim = path.join(root, 'victim')
  fs.mkdirSync(victim, { mode: 0o700 })
  fs.writeFileSync(path.join(victim, 'kept.txt'), 'ok\n')
  const opts = { cwd: ws, timeout: 60000, sandbox: 'workspace-write', env: { ...process.env, HOME: ws } }
  const first = await spawnSandboxed(['sh', '-c', `mkdir -p .local/state && ln -s ${victim} .local/state/sandspawn`], opts)
  assert.equal(first.exitCode, 0, show(first))
  const later = await spawnSandboxed(['cat', path.join(victim, 'kept.txt')], opts)
  assert.equal(later.stdout, 'ok\n', `the link's target was covered: ${show(later)}`)
  const list = path.join(require('node:os').userInfo().homedir, '.local/state/sandspawn/known-stores')
  const listed = fs.existsSync(list) ? fs.readFileSync(list, 'utf8') : ''
  assert.ok(!listed.split('\n').includes(victim), `recorded in ${list}`)
})

// Found by an attacker's review (land27): a review run with `tmp: 'read-only'` took a store under
// /tmp (SANDSPAWN_CHANGE_SET_DIR=/tmp/...), outside its own writable roots; but /tmp is a writable
// root of every other run (`tmp: 'writable'`, the default), and no run covers a store there. Another
// process's run rewrote the set's recorded workspace and a file in it, and the apply wrote that file
// outside the workspace. Refused in every tmp mode, as under a private /tmp.
test('a change set store under /tmp is refused whatever the run does with /tmp', { skip: !linux }, async (t) => {
  const { ws } = tempTree(t)
  const store = fs.mkdtempSync('/tmp/sandspawn-store-in-tmp-')
  t.after(() => fs.rmSync(store, { recursive: true, force: true }))
  const saved = process.env.SANDSPAWN_CHANGE_SET_DIR
  t.after(() => as({ SANDSPAWN_CHANGE_SET_DIR: saved }))
  as({ SANDSPAWN_CHANGE_SET_DIR: store })
  for (const tmp of ['read-only', 'writable']) {
    await assert.rejects(
      spawnSandboxed(['sh', '-c', 'echo x > notes.txt'], { cwd: ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review', tmp } }),
      { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /under \/tmp|overlaps the writable root/ },
      `tmp: ${tmp}`,
    )
  }
  assert.deepEqual(fs.readdirSync(store).filter((n) => n.startsWith('cs-')), [], 'no set was begun')
})
