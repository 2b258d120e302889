'use strict'
// A 256 MiB loop-mounted btrfs in a mount namespace of a test's own (`unshare -m`, as root), never
// the host's: the btrfs tests' setup, shared. mount -o loop frees its loop device when the
// namespace's last mount of it goes.

const fs = require('node:fs')
const path = require('node:path')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')

const has = (program, args) => spawnSync(program, args).status === 0

/** Why a test of a loop btrfs cannot run here, or false. */
function loopBtrfsNeeds() {
  if (process.platform !== 'linux' || process.getuid() !== 0 || !has('unshare', ['-m', 'true'])) return "needs root and unshare -m (a mount namespace of the test's own)"
  if (!has('mkfs.btrfs', ['--version']) || !has('btrfs', ['--version'])) return 'needs mkfs.btrfs and btrfs (btrfs-progs)'
  if (!has('python3', ['-c', ''])) return 'needs python3'
  return !fs.readFileSync('/proc/filesystems', 'utf8').includes('btrfs') && !has('modprobe', ['-n', 'btrfs']) && 'needs btrfs in the kernel'
}

/**
 * Makes the image in `root`, mounts it at `top`, runs the shell text `setup` (more mounts, files),
 * then `probe` (JavaScript, printing one JSON line last) with node in that namespace. Returns the
 * parsed line, or null after skipping `t` where the host gives no loop device (a container without
 * /dev/loop*): that, and only that, ends the setup with 77; every other failure fails the test.
 */
function inLoopBtrfs(t, root, top, setup, probe) {
  const image = path.join(root, 'btrfs.img')
  fs.closeSync(fs.openSync(image, 'w'))
  fs.truncateSync(image, 256 << 20)
  const mount = `mkfs.btrfs -q ${image} >/dev/null && { mount -o loop ${image} ${top} || exit 77; } && ${setup}`
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `${mount} && exec "$0" -e "$1"`, process.execPath, probe], { encoding: 'utf8', timeout: 120000 })
  if (r.status === 77) {
    t.skip(`no loop-mounted btrfs on this host: ${r.stderr.trim()}`)
    return null
  }
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').pop())
}

module.exports = { loopBtrfsNeeds, inLoopBtrfs }
