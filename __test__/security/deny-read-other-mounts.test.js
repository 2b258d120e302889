'use strict'
// Found by an attacker's review (revd40): a denyRead mask covers a path, and the same files shown
// by another mount of their filesystem stayed readable there. On btrfs the filesystem's top is
// often mounted beside its subvolumes (btrbk's /mnt/btr_pool, a snapper or backup layout): with
// /home the subvolume `home` and the top at another place, a default workspace-write run with
// denyRead [home/u/.ssh] read home/u/.ssh/key through the top's mount. A bind mount of a directory
// inside the denied one showed part of it the same way. The filesystem is a loop-mounted btrfs in a
// mount namespace of the test's own (`unshare -m`, as root), never the host's.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree } = require('./helpers')

const INDEX = path.join(__dirname, '..', '..', 'index.js')
const has = (program, args) => spawnSync(program, args).status === 0
const NEEDS = process.platform !== 'linux' || process.getuid() !== 0 || !has('unshare', ['-m', 'true']) ? "needs root and unshare -m (a mount namespace of the test's own)"
  : !has('mkfs.btrfs', ['--version']) ? 'needs mkfs.btrfs (btrfs-progs)'
  : !has('btrfs', ['--version']) ? 'needs btrfs (btrfs-progs)'
  : !fs.readFileSync('/proc/filesystems', 'utf8').includes('btrfs') && !has('modprobe', ['-n', 'btrfs']) && 'needs btrfs in the kernel'

test("a denyRead path stays hidden through the host's other mounts of its filesystem (a btrfs top beside its subvolume, a bind of a directory inside it)", { skip: NEEDS }, (t) => {
  const { root } = tempTree(t)
  const [image, top, home, keys] = ['btrfs.img', 'top', 'home', 'keys'].map((n) => path.join(root, n))
  for (const d of [top, home, keys]) fs.mkdirSync(d)
  const [ssh, ws] = [path.join(home, 'u', '.ssh'), path.join(home, 'u', 'ws')]
  const reads = [`${ssh}/key`, `${top}/home/u/.ssh/key`, `${keys}/inner`, `${top}/home/u/.ssh/keys/inner`]
  const command = ['sh', '-c', `for f in ${reads.join(' ')}; do cat "$f" 2>/dev/null || echo "hidden $f"; done; ls ${top}/home/u/.ssh ${keys}; true`]
  const probe = `const s = require(${JSON.stringify(INDEX)})
s.spawnSandboxed(${JSON.stringify(command)}, { cwd: ${JSON.stringify(ws)}, timeout: 60000, sandbox: { mode: 'workspace-write', denyRead: [${JSON.stringify(ssh)}] } })
  .then((r) => console.log(JSON.stringify({ ran: r.exitCode, stdout: r.stdout, stderr: r.stderr })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`
  // A host whose kernel gives no loop device (a container without /dev/loop*) cannot make the
  // filesystem at all: that, and only that, ends the probe with 77 and skips the test.
  const mount = `mkfs.btrfs -q ${image} >/dev/null && { mount -o loop ${image} ${top} || exit 77; } && btrfs -q subvolume create ${top}/home >/dev/null && mount -o loop,subvol=home ${image} ${home} && mkdir -p ${ssh}/keys ${ws} && echo TOP-SECRET > ${ssh}/key && echo INNER-SECRET > ${ssh}/keys/inner && mount --bind ${ssh}/keys ${keys}`
  fs.closeSync(fs.openSync(image, 'w'))
  fs.truncateSync(image, 256 << 20)
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `${mount} && exec "$0" -e "$1"`, process.execPath, probe], { encoding: 'utf8', timeout: 120000 })
  if (r.status === 77) return t.skip(`no loop-mounted btrfs on this host: ${r.stderr.trim()}`)
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const got = JSON.parse(r.stdout.trim().split('\n').pop())
  assert.equal(got.ran, 0, JSON.stringify(got))
  assert.doesNotMatch(got.stdout, /SECRET/, `a file denyRead hides was read through another mount: ${got.stdout}`)
  for (const f of reads) assert.match(got.stdout, new RegExp(`^hidden ${f}$`, 'm'), got.stdout)
})
