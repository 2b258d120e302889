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
const { tempTree } = require('./helpers')
const { loopBtrfsNeeds, inLoopBtrfs } = require('./loop-btrfs')

const INDEX = path.join(__dirname, '..', '..', 'index.js')
const NEEDS = loopBtrfsNeeds()

test("a denyRead path stays hidden through the host's other mounts of its filesystem (a btrfs top beside its subvolume, a bind of a directory inside it)", { skip: NEEDS }, (t) => {
  const { root } = tempTree(t)
  const [top, home, keys] = ['top', 'home', 'keys'].map((n) => path.join(root, n))
  for (const d of [top, home, keys]) fs.mkdirSync(d)
  const [ssh, ws] = [path.join(home, 'u', '.ssh'), path.join(home, 'u', 'ws')]
  const reads = [`${ssh}/key`, `${top}/home/u/.ssh/key`, `${keys}/inner`, `${top}/home/u/.ssh/keys/inner`]
  const command = ['sh', '-c', `for f in ${reads.join(' ')}; do cat "$f" 2>/dev/null || echo "hidden $f"; done; ls ${top}/home/u/.ssh ${keys}; true`]
  const probe = `const s = require(${JSON.stringify(INDEX)})
s.spawnSandboxed(${JSON.stringify(command)}, { cwd: ${JSON.stringify(ws)}, timeout: 60000, sandbox: { mode: 'workspace-write', denyRead: [${JSON.stringify(ssh)}] } })
  .then((r) => console.log(JSON.stringify({ ran: r.exitCode, stdout: r.stdout, stderr: r.stderr })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`
  const setup = `btrfs -q subvolume create ${top}/home >/dev/null && mount -o loop,subvol=home ${path.join(root, 'btrfs.img')} ${home} && mkdir -p ${ssh}/keys ${ws} && echo TOP-SECRET > ${ssh}/key && echo INNER-SECRET > ${ssh}/keys/inner && mount --bind ${ssh}/keys ${keys}`
  const got = inLoopBtrfs(t, root, top, setup, probe)
  if (!got) return
  assert.equal(got.ran, 0, JSON.stringify(got))
  assert.doesNotMatch(got.stdout, /SECRET/, `a file denyRead hides was read through another mount: ${got.stdout}`)
  for (const f of reads) assert.match(got.stdout, new RegExp(`^hidden ${f}$`, 'm'), got.stdout)
})

const { spawnSync } = require('node:child_process')
const BIND_NEEDS = process.platform !== 'linux' || process.getuid() !== 0 || spawnSync('unshare', ['-m', 'true']).status !== 0
  ? "needs root and unshare -m (a mount namespace of the test's own)" : false

test('a denyRead FILE stays hidden through the host\'s other mounts of its filesystem (a bind of its directory, a bind of the file itself)', { skip: BIND_NEEDS }, (t) => {
  // Found by an attacker's review (rev41): deny_views compared the other name with the denied path
  // joined to an empty remainder, `key/`, which no file answers (ENOTDIR): every other name of a
  // denied file was dropped as leading elsewhere, and a read-only run read it there. `/srv/d` bound
  // from `/data/d`, denyRead `/srv/d/key`: `/data/d/key` was read; so was `/data/f` for a denied
  // `/srv/f`, a bind of that file.
  const { root } = tempTree(t)
  const [data, srv, ws] = ['data', 'srv', 'ws'].map((n) => path.join(root, n))
  for (const d of [`${data}/d`, `${srv}/d`, ws]) fs.mkdirSync(d, { recursive: true })
  fs.writeFileSync(`${data}/d/key`, 'DIR-SECRET\n')
  fs.writeFileSync(`${data}/f`, 'FILE-SECRET\n')
  fs.writeFileSync(`${srv}/f`, '')
  const reads = [`${srv}/d/key`, `${data}/d/key`, `${srv}/f`, `${data}/f`]
  const command = ['sh', '-c', `for f in ${reads.join(' ')}; do cat "$f" 2>/dev/null || echo "hidden $f"; done; true`]
  const probe = `const s = require(${JSON.stringify(INDEX)})
s.spawnSandboxed(${JSON.stringify(command)}, { cwd: ${JSON.stringify(ws)}, timeout: 60000, sandbox: { denyRead: [${JSON.stringify(`${srv}/d/key`)}, ${JSON.stringify(`${srv}/f`)}] } })
  .then((r) => console.log(JSON.stringify({ ran: r.exitCode, stdout: r.stdout, stderr: r.stderr })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`
  const setup = `mount --bind ${data}/d ${srv}/d && mount --bind ${data}/f ${srv}/f`
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `${setup} && exec "$0" -e "$1"`, process.execPath, probe], { encoding: 'utf8', timeout: 120000 })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const got = JSON.parse(r.stdout.trim().split('\n').pop())
  assert.equal(got.ran, 0, JSON.stringify(got))
  assert.doesNotMatch(got.stdout, /SECRET/, `a file denyRead hides was read through another mount: ${got.stdout}`)
  for (const f of reads) assert.match(got.stdout, new RegExp(`^hidden ${f}$`, 'm'), got.stdout)
})
