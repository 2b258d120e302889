'use strict'
// Found by an attacker's review (rev42): a readOnlyPaths file with another name (a hard link, made on
// the host or by an earlier run without that entry) was written through that name by a default
// workspace-write run, notEnforced empty. A mount covers a name, not the inode, and the other names
// are unknown without a walk that stats every file: the run now says so before it.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const sandspawn = require('../..')
const { tempTree } = require('./helpers')

test('a readOnlyPaths file with another name is said not to be enforced', async (t) => {
  const { ws } = tempTree(t)
  const config = path.join(ws, 'config')
  fs.writeFileSync(config, 'orig\n')
  fs.linkSync(config, path.join(ws, 'alias'))
  fs.writeFileSync(path.join(ws, 'alone'), 'orig\n')
  const r = await sandspawn.spawnSandboxed(['sh', '-c', 'echo planted >> alias; echo planted >> alone'], {
    cwd: ws, timeout: 60000, sandbox: { mode: 'workspace-write', readOnlyPaths: [config, path.join(ws, 'alone')] },
  })
  const written = fs.readFileSync(config, 'utf8').includes('planted')
  const said = r.sandboxDetails.notEnforced.filter((n) => n.includes(config) && n.includes('hard link'))
  assert.ok(!written || said.length === 1, `the read-only file was written through its other name, unsaid: ${JSON.stringify(r.sandboxDetails.notEnforced)}`)
  assert.equal(fs.readFileSync(path.join(ws, 'alone'), 'utf8'), 'orig\n', 'a read-only file of one name stays as it was')
  assert.ok(!r.sandboxDetails.notEnforced.some((n) => n.includes(path.join(ws, 'alone'))), 'a file of one name is not named')
})
