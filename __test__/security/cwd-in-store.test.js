'use strict'
// A run whose cwd lies in one of sandspawn's own stores (the change sets', a set's upper
// directory), which every bwrap sandbox covers.
//
// Found by an attacker's review (mode34): the helper entered the planned cwd before it attached the
// stores' covers (covers::cover), so a cwd inside a store stayed the directory beneath its cover: a
// read-only run listed and read every pending change set through `.`, and a workspace-write run
// whose cwd was a pending set's upper directory (a workdir an agent's model may choose) added a
// file to that set, which showChangeSet then listed and an apply would land. Refused now: the store
// is hidden from every sandbox, so no run can work in it.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sandspawn, run, show, tempTree, changeSetStore } = require('./helpers')

const store = changeSetStore('sandspawn-cwd-in-store-')

for (const [mode, where] of [['read-only', 'the store'], ['workspace-write', "a pending set's upper directory"]]) {
  test(`${mode}: a cwd in ${where} neither shows the store nor changes a set`, async (t) => {
    const { ws } = tempTree(t)
    const first = await run(['sh', '-c', 'echo pending > a.txt'], { cwd: ws, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.equal(first.exitCode, 0, show(first))
    const { id } = first.changeSet
    t.after(() => sandspawn.discardChangeSet(id).catch(() => {}))
    const cwd = mode === 'read-only' ? fs.realpathSync(store) : path.join(fs.realpathSync(store), id, 'roots', '0', 'upper')
    let r
    try {
      r = await run(['sh', '-c', 'ls -a; cat a.txt; echo planted > planted; ln -s /etc/passwd lnk'], { cwd, sandbox: mode })
    } catch (e) {
      assert.equal(e.code, 'ERR_SANDBOX_INVALID_OPTIONS', String(e))
      assert.match(e.message, /store/, e.message)
    }
    if (r) {
      assert.doesNotMatch(r.stdout, /cs-|pending|a\.txt/, `the store was shown through the cwd: ${show(r)}`)
    }
    const cs = await sandspawn.showChangeSet(id)
    assert.deepEqual(cs.changes.map((c) => path.basename(c.path)), ['a.txt'], JSON.stringify(cs.changes))
  })
}
