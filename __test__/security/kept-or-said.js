'use strict'
// The two checks of the tests of files a tool configuration names (planted-tool-programs,
// planted-mise-programs): a direct run's rewrite is kept out or said, and review's apply holds
// such a rewrite back while landing the rest of the set.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sh, show, sandspawn } = require('./helpers')

/** A direct run in `ws` appends to each of `files` (each held `was`), then runs `more`: each is kept or reported. */
async function appendsKeptOrSaid(ws, extra, files, was, more = 'true') {
  const script = files.map((p) => `echo 'touch /tmp/pwned' >> ${p} 2>/dev/null`).join('; ') + `; ${more}`
  const r = await sh(script, { cwd: ws, sandbox: { mode: 'workspace-write' }, ...extra })
  assert.equal(r.exitCode, 0, show(r))
  for (const p of files) {
    const kept = fs.readFileSync(p, 'utf8') === was
    const said = r.hostRisks.some((h) => h.path === p)
    assert.ok(kept || said, `${p} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
  }
  return r
}

/** A review run in `ws` appends `line` to each of `files` and writes lib.txt: each is a risk, and apply lands lib.txt alone. Returns the set's risks. */
async function reviewHoldsBack(ws, files, line) {
  const before = files.map((p) => fs.readFileSync(p, 'utf8'))
  const script = files.map((p) => `echo '${line}' >> ${p}`).join('; ') + '; echo ok > lib.txt'
  const r = await sandspawn.spawnSandboxed(['sh', '-c', script], { cwd: ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.ok(r.changeSet, show(r))
  for (const p of files) assert.ok(r.changeSet.hostRisks.some((h) => h.path === p), `${p}: ${JSON.stringify(r.changeSet.hostRisks)}`)
  await sandspawn.applyChangeSet(r.changeSet.id, {})
  files.forEach((p, i) => assert.equal(fs.readFileSync(p, 'utf8'), before[i], `${p} landed`))
  assert.equal(fs.readFileSync(path.join(ws, 'lib.txt'), 'utf8'), 'ok\n', 'the rest of the set landed')
  return r.changeSet.hostRisks
}

module.exports = { appendsKeptOrSaid, reviewHoldsBack }
