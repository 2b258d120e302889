'use strict'
// A mount point of the host's whose name is not UTF-8 does not stop runs.
//
// Found by a read-through: the helper read /proc/self/mountinfo as text, and bwrap's read-only `/`
// carries every mount of the host into the sandbox. The kernel writes a mount point's bytes as they
// are, so one such name anywhere on the host (a USB stick with a Latin-1 label under /media, a share
// mounted by an old script) failed every run at setup ("stream did not contain valid UTF-8"), in
// every mode but danger-full-access. The test mounts one in a mount namespace of its own (no mount
// on the host) and runs there.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree, q } = require('./helpers')

const SKIP = process.getuid() !== 0 ? 'mounting a filesystem in a mount namespace of its own needs root here'
  : spawnSync('unshare', ['--mount', '--propagation', 'private', 'true']).status !== 0 && 'unshare --mount is not available'

const PACKAGE = path.resolve(__dirname, '../..')

/** In a private mount namespace, with a tmpfs at `<root>/<name>\xff`: each run's code or result. */
function runsBeside(root, ws, name) {
  const script = `
    const s = require(${JSON.stringify(PACKAGE)})
    const one = (sandbox) => s.spawnSandboxed(['echo', 'ran'], { cwd: ${JSON.stringify(ws)}, sandbox })
      .then((r) => (r.changeSet ? s.discardChangeSet(r.changeSet.id) : null, r.stdout), (e) => e.code + ': ' + e.message)
    ;(async () => {
      const out = {}
      for (const mode of ['read-only', 'workspace-write']) out[mode] = await one(mode)
      out.review = await one({ mode: 'workspace-write', workspace: 'review' })
      process.stdout.write(JSON.stringify(out))
    })()`
  const shell = `set -e; d=${q(root)}/${name}$(printf '\\377'); mkdir "$d"; mount -t tmpfs t "$d"; ${q(process.execPath)} -e "$SCRIPT"; umount "$d"; rmdir "$d"`
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', shell], { encoding: 'utf8', env: { ...process.env, SCRIPT: script }, timeout: 60_000 })
  spawnSync('sh', ['-c', `rmdir ${q(root)}/${name}"$(printf '\\377')" 2>/dev/null; true`])
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

test('a host mount point whose name is not UTF-8 fails no run', { skip: SKIP }, (t) => {
  const { root, ws } = tempTree(t)
  assert.deepEqual(runsBeside(root, ws, 'media-'), { 'read-only': 'ran\n', 'workspace-write': 'ran\n', review: 'ran\n' })
})

test('review mode names such a mount inside the reviewed workspace instead of failing on its name', { skip: SKIP }, (t) => {
  const { ws } = tempTree(t)
  const out = runsBeside(ws, ws, 'inside-')
  assert.equal(out['workspace-write'], 'ran\n')
  // The reviewable workspace cannot keep another mount inside it: refused before any change set is
  // begun, naming the mount (its name as lossy text) and the way out (mode39: the kernel refuses an
  // overlay from a user namespace over a directory with mounts below it, whatever their names).
  assert.match(out.review, /^ERR_SANDBOX_UNSUPPORTED: sandbox\.workspace 'review' cannot cover .* mounted inside it at .*inside-\uFFFD \(tmpfs\).* workspace: 'direct'/)
})
