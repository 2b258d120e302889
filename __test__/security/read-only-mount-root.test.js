'use strict'
// A writable root on a read-only mount of the host is refused with its reason, up front.
//
// Found at the end of the eighteenth session: since 491e69a the helper checks that every writable
// bind is where the plan put it and writable (a concurrent run's swap made bwrap bind another
// directory, race18), and a workspace-write run whose cwd was on a read-only mount (a read-only
// NFS share, a squashfs) failed as "the workspace changed ... a directory on its path was
// replaced", which was not what happened. Read-only mode there runs as before.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { run, show, tempTree } = require('./helpers')
const sandspawn = require('../..')

const root = process.getuid() === 0

test('a workspace-write run on a read-only mount is refused naming it; read-only runs', { skip: !root && 'needs root to make a read-only bind mount' }, async (t) => {
  const { ws } = tempTree(t)
  const src = path.join(ws, 'src')
  const ro = path.join(ws, 'ro')
  fs.mkdirSync(src)
  fs.mkdirSync(ro)
  fs.writeFileSync(path.join(src, 'f'), 'hi\n')
  assert.equal(spawnSync('mount', ['--bind', src, ro]).status, 0)
  // Unmounted here, not in t.after: those run in order, and tempTree's removal, registered
  // first, failed on the read-only mount and left the tree in /var/tmp.
  try {
    assert.equal(spawnSync('mount', ['-o', 'remount,bind,ro', ro]).status, 0)
    await assert.rejects(
      sandspawn.spawnSandboxed(['sh', '-c', 'touch g'], { cwd: ro, sandbox: 'workspace-write' }),
      (e) => e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && e.message.includes(`${ro} is a writable root`) && /read-only mount/.test(e.message),
    )
    const r = await run(['cat', 'f'], { cwd: ro, sandbox: 'read-only' })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(r.stdout, 'hi\n')
  } finally {
    spawnSync('umount', [ro])
  }
})
