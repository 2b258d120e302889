'use strict'
// Found by an attacker's review (rev41): a readOnlyPaths entry was kept read-only by its own name
// only. With /ws bound from /data/ws, the cwd /ws and /data a writable root too, /data/ws/config
// (the same file as the read-only /ws/config) was written; now every other name the mount table
// gives it is kept read-only too.
// In a mount namespace of the test's own (`unshare -m`, as root), never the host's.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree } = require('./helpers')

const INDEX = path.join(__dirname, '..', '..', 'index.js')
const NEEDS = process.platform !== 'linux' || process.getuid() !== 0 || spawnSync('unshare', ['-m', 'true']).status !== 0
  ? "needs root and unshare -m (a mount namespace of the test's own)" : false

test("a readOnlyPaths entry stays read-only through another writable root's view of its filesystem", { skip: NEEDS }, (t) => {
  const { root } = tempTree(t)
  const [data, ws] = ['data', 'view'].map((n) => path.join(root, n))
  fs.mkdirSync(`${data}/ws`, { recursive: true })
  fs.mkdirSync(ws)
  fs.writeFileSync(`${data}/ws/config`, 'orig\n')
  const command = ['sh', '-c', `echo planted >> ${data}/ws/config; true`]
  const probe = `const s = require(${JSON.stringify(INDEX)})
s.spawnSandboxed(${JSON.stringify(command)}, { cwd: ${JSON.stringify(ws)}, timeout: 60000, sandbox: { mode: 'workspace-write', writableRoots: [${JSON.stringify(data)}], readOnlyPaths: [${JSON.stringify(`${ws}/config`)}] } })
  .then((r) => console.log(JSON.stringify({ ran: r.exitCode, notEnforced: r.sandboxDetails.notEnforced })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `mount --bind ${data}/ws ${ws} && exec "$0" -e "$1"`, process.execPath, probe], { encoding: 'utf8', timeout: 120000 })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const got = JSON.parse(r.stdout.trim().split('\n').pop())
  const written = fs.readFileSync(`${data}/ws/config`, 'utf8').includes('planted')
  assert.ok(!written || got.code || got.notEnforced.length, `a readOnlyPaths file was written through another mount: ${JSON.stringify(got)}`)
})
