'use strict'
// Per-user kernel budgets a user namespace can bound: a run takes at most its share.
//
// Found by an attacker's review (kern25, repro-userbudgets.sh): a run took 127 of the user's 128
// inotify instances (and all 128 fanotify groups), and while it lived the user's own programs got
// EMFILE from inotify_init1 (editors' file watchers, `fs.watch`). The kernel charges them in every
// user namespace up to the host's and checks each against that namespace's maximum; the helper
// sets the sandbox's to a quarter of the host's.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { sandspawn, tempTree, show, waitFor } = require('./helpers')

// Opens instances of one kind until the kernel refuses one, says how many, and holds them until
// the file `done` appears (or 60 s pass).
const HOLDER = `
import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
kind, out = sys.argv[1], sys.argv[2]
FAN_REPORT_FID = 0x200
fds, err = [], 0
while len(fds) < 4096:
    fd = libc.inotify_init1(0) if kind == 'inotify' else libc.fanotify_init(FAN_REPORT_FID, 0)
    if fd < 0:
        err = ctypes.get_errno()
        break
    fds.append(fd)
open(out + '/held.tmp', 'w').write('%d %d' % (len(fds), err))
os.rename(out + '/held.tmp', out + '/held')
deadline = time.time() + 60
while not os.path.exists(out + '/done') and time.time() < deadline:
    time.sleep(0.02)
`

// One instance made on the host, as the same user, while the run holds its share.
const HOST_ONE = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0) if sys.argv[1] == 'inotify' else libc.fanotify_init(0x200, 0)
print('ok' if fd >= 0 else os.strerror(ctypes.get_errno()))
`

const HOST_MAX = { inotify: '/proc/sys/fs/inotify/max_user_instances', fanotify: '/proc/sys/fs/fanotify/max_user_groups' }
const python = spawnSync('python3', ['-c', 'import ctypes']).status === 0

for (const [kind, file] of Object.entries(HOST_MAX)) {
  const host = fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : 0
  const skip = !python ? 'python3 is not installed' : !host ? `${file} is missing` : false
  test(`a run holds at most a quarter of the user's ${kind} budget, and the user's programs still get one`, { skip }, async (t) => {
    const tree = tempTree(t)
    fs.writeFileSync(path.join(tree.root, 'holder.py'), HOLDER)
    const run = sandspawn.spawnSandboxed(['python3', path.join(tree.root, 'holder.py'), kind, tree.out], {
      cwd: tree.ws,
      timeout: 90_000,
      sandbox: { mode: 'workspace-write', writableRoots: [tree.out] },
    })
    let ended = false
    run.finally(() => (ended = true)).catch(() => {})
    const held = path.join(tree.out, 'held')
    const seen = await waitFor(() => fs.existsSync(held) || ended, 60_000, 20)
    let hostGot
    try {
      assert.ok(seen && fs.existsSync(held), 'the run reported what it held')
      hostGot = spawnSync('python3', ['-c', HOST_ONE, kind], { encoding: 'utf8' }).stdout.trim()
    } finally {
      fs.writeFileSync(path.join(tree.out, 'done'), '')
    }
    const r = await run
    assert.equal(r.exitCode, 0, show(r))
    const [count, errno] = fs.readFileSync(held, 'utf8').split(' ').map(Number)
    // Unprivileged fanotify may be refused outright (EPERM): nothing is taken then.
    if (kind === 'fanotify' && count === 0) assert.equal(errno, 1, `fanotify_init: errno ${errno}`)
    assert.ok(count <= Math.floor(host / 4), `${kind}: the run held ${count} of the user's ${host}`)
    assert.equal(hostGot, 'ok', `${kind}: the host user could not make one while the run held ${count}`)
  })
}
