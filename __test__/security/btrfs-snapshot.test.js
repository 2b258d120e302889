'use strict'
// Found by an attacker's review (kern40): on btrfs a snapshot of a subvolume is one ioctl
// (BTRFS_IOC_SNAP_CREATE or _V2) on a directory the caller may write, naming the subvolume by any
// descriptor, one opened for reading through bwrap's read-only mount included, with no capability:
// only the subvolume's owner is asked (as root, every root-owned subvolume; as a user, the ones the
// user made). A default workspace-write run snapshotted the filesystem's top subvolume into its
// workspace and read there the file denyRead hid, and the copy of the whole tree outlived the run
// (holding every old version of the host's files from then on). The filesystem is a loop-mounted
// btrfs in a mount namespace of the test's own (`unshare -m`, as root), never the host's.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { tempTree } = require('./helpers')
const { loopBtrfsNeeds, inLoopBtrfs } = require('./loop-btrfs')

const INDEX = path.join(__dirname, '..', '..', 'index.js')
const NEEDS = loopBtrfsNeeds()

// A snapshot of `src` named `name` in the cwd, by the request `request` (the v1 and v2 structures
// both start with the source's descriptor; the name is at 8 in v1, at 56 in v2). Prints the outcome.
const SNAPSHOT = `
import fcntl, os, struct, sys
src, name, request, at = sys.argv[1], sys.argv[2], int(sys.argv[3], 16), int(sys.argv[4])
args = bytearray(4096)
args[0:8] = struct.pack('q', os.open(src, os.O_RDONLY | os.O_DIRECTORY))
args[at:at + len(name)] = name.encode()
try:
    fcntl.ioctl(os.open('.', os.O_RDONLY | os.O_DIRECTORY), request, args)
    print(name, 'made')
except OSError as e:
    print(name, os.strerror(e.errno))
`

test('a default workspace-write run cannot snapshot a btrfs subvolume into its workspace (denyRead stays hidden, nothing outlives the run)', { skip: NEEDS }, (t) => {
  const { root } = tempTree(t)
  const top = path.join(root, 'fs')
  const [ws, secretDir] = [path.join(top, 'ws'), path.join(top, 'home', 'secret')]
  fs.mkdirSync(top)
  fs.writeFileSync(path.join(root, 'snapshot.py'), SNAPSHOT)
  const command = ['sh', '-c', `cat ${secretDir}/key; for req in "50009401 8 v1" "50009417 56 v2"; do set -- $req; python3 ../../snapshot.py ${top} snap-$3 $1 $2; cat snap-$3/home/secret/key; done; true`]
  const probe = `const fs = require('node:fs')
const s = require(${JSON.stringify(INDEX)})
s.spawnSandboxed(${JSON.stringify(command)}, { cwd: ${JSON.stringify(ws)}, timeout: 60000, sandbox: { mode: 'workspace-write', denyRead: [${JSON.stringify(secretDir)}] } })
  .then((r) => console.log(JSON.stringify({ ran: r.exitCode, stdout: r.stdout, stderr: r.stderr, left: fs.readdirSync(${JSON.stringify(ws)}) })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`
  const got = inLoopBtrfs(t, root, top, `mkdir -p ${secretDir} ${ws} && echo TOP-SECRET > ${secretDir}/key`, probe)
  if (!got) return
  assert.equal(got.ran, 0, JSON.stringify(got))
  assert.doesNotMatch(got.stdout, /TOP-SECRET/, `the file denyRead hides was read through a snapshot: ${got.stdout}`)
  assert.match(got.stdout, /^snap-v1 Operation not permitted$/m, got.stdout)
  assert.match(got.stdout, /^snap-v2 Operation not permitted$/m, got.stdout)
  assert.deepEqual(got.left, [], 'no copy of the filesystem left in the workspace')
})
