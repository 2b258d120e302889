'use strict'
// Found by an attacker's review (cross37): known-stores names paths, and a store recorded there
// whose directory was later removed (a test's tool cache under a workspace's target/, as this
// project's own tests make; a benchmark's under /var/tmp, which every local user may write) stays
// listed. Every run looks each listed path up, and a lookup that fails for anything but absence
// refuses the run (rfix25: a `chmod 000` above a store must not drop it from the covers). A default
// run in that workspace made the gone path a symlink loop (`ln -s store store`, or a directory
// above it `ln -s ttc ttc`): the lookup failed with ELOOP, which no directory's mode explains, and
// every later run of the user, in every workspace, was refused (ERR_SANDBOX_SETUP_FAILED, "Too
// many levels of symbolic links"), while the run that did it reported nothing. A listed path with
// a symlink at it or on its way names no store (rfix24): it is passed over before it is looked up.
// The list is the user database's home's: as root the fixture runs in a mount namespace of its own
// with a fresh directory over it, so that no other process of the user reads what this test plants.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const { tempTree } = require('./security/helpers')

const state = path.join(os.userInfo().homedir, '.local', 'state', 'sandspawn')
const isolated = process.platform === 'linux' && process.getuid() === 0 && fs.existsSync(state)
const skip = isolated ? false : 'needs root on Linux and an existing state directory (the fixture mounts a fresh one over it in a namespace of its own)'

// The same fixture, and another local user who makes such a path again (a benchmark's store
// under /var/tmp, which anyone may write) as a directory of theirs holding more than the 4,096
// names read after a run: every later run of this user carried a `scan-incomplete` entry for it,
// though a directory of another user's is never a store of this one's (none is used, covered or
// recorded unless it is this user's alone). Only this user's directories are looked in now.
test('a listed path another user made again as a directory of theirs is no later run\'s risk', { skip }, (t) => {
  const out = looped(t, 'other-user')
  if (!out) return
  assert.equal(out.later.exitCode, 0, JSON.stringify(out.later))
  assert.deepEqual(out.later.hostRisks.filter((h) => h.path.includes('ttc-Ab12')), [], 'another user\'s directory is not looked in')
})

function looped(t, how) {
  const { root } = tempTree(t)
  const fresh = path.join(root, 'state')
  fs.mkdirSync(fresh, { mode: 0o700 })
  fs.chmodSync(root, 0o755)
  const fixture = path.join(__dirname, 'fixtures', 'known-stores-looped.js')
  const script = 'mount --bind "$1" "$2" && exec "$3" "$4" "$5" "$6"'
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script, 'sh', fresh, state, process.execPath, fixture, root, how], { encoding: 'utf8', timeout: 300_000 })
  if (r.error || (r.status !== 0 && /unshare|mount/.test(r.stderr))) return t.skip(`no mount namespace here: ${r.error?.message || r.stderr}`)
  assert.equal(r.status, 0, r.stderr)
  execFileSync('chmod', ['-R', 'u+rwx', root])
  const out = JSON.parse(r.stdout)
  assert.ok(out.listed, 'the store was recorded')
  assert.deepEqual([out.recorded.exitCode, out.attack.exitCode], [0, 0], r.stdout)
  return out
}

for (const how of ['loop', 'dir-loop']) {
  test(`a listed store a run made a symlink loop (${how}) refuses no later run`, { skip }, (t) => {
    const out = looped(t, how)
    if (!out) return
    assert.equal(out.later.exitCode, 0, `a later run in another workspace: ${JSON.stringify(out.later)}`)
  })
}
