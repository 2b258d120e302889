'use strict'
// Found by an attacker's review (cross36): known-stores names paths. A store recorded there whose
// directory was later removed (a test's tool cache under a workspace's target/, as this project's
// own tests make) stays listed, and a default run in that workspace made the path again, filled with
// change set directories of mode 0777: every later run of the user, in any workspace, reported each
// one (store_modes::open_to_others read every name of every listed path): 2,000 made each later
// `true` carry 1.17 MB of hostRisks, 100,000 made it carry 58 MB and cost the host 1.1 to 1.3 s of
// CPU (4 to 6 s late). Now at most 16 are listed and one entry counts the rest, and at most 4,096
// names of a store are read after a run.
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

test('a listed store a run makes again and fills with open change set directories floods no later run', { skip }, (t) => {
  const { root } = tempTree(t)
  const fresh = path.join(root, 'state')
  fs.mkdirSync(fresh, { mode: 0o700 })
  const fixture = path.join(__dirname, 'fixtures', 'known-stores-refilled.js')
  const script = 'mount --bind "$1" "$2" && exec "$3" "$4" "$5" "$6"'
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script, 'sh', fresh, state, process.execPath, fixture, root, '40'], { encoding: 'utf8', timeout: 300_000 })
  if (r.error || (r.status !== 0 && /unshare|mount/.test(r.stderr))) return t.skip(`no mount namespace here: ${r.error?.message || r.stderr}`)
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.ok(out.listed, 'the store was recorded')
  assert.deepEqual([out.recorded, out.attack, out.later.exitCode], [0, 0, 0], r.stdout)
  const risks = out.later.risks
  assert.ok(risks.length <= 17, `a later run in another workspace carried ${risks.length} entries for it (${out.later.bytes} bytes)`)
  assert.match(risks[risks.length - 1].detail, /^24 more change set directories/, JSON.stringify(risks.at(-1)))
  execFileSync('chmod', ['-R', 'u+rwx', root])
})
