'use strict'
// What the tests of planting above a workspace nested below /tmp share (planted-above-tmp,
// planted-upward): the workspace, the command that plants, and the risk that names a file.

const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { q, rmrf } = require('./helpers')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } }, review: { review: true } }

/** A workspace at `/tmp/<prefix>XXXXXX/outer/proj`, removed after the test. */
function nested(t, prefix) {
  // The real /tmp: the gap is the shared temporary directory as a writable root (`tmp: 'writable'`).
  const base = fs.mkdtempSync(path.join('/tmp', prefix))
  t.after(() => rmrf(base))
  const ws = path.join(base, 'outer', 'proj')
  fs.mkdirSync(ws, { recursive: true })
  return { base, ws }
}

/** A command writing each path of `list` (relative to the workspace), its directories too. */
function plant(list) {
  return list.map((rel) => `mkdir -p ${q(path.dirname(rel))} 2>/dev/null; echo planted > ${q(rel)}`).join('; ') + '; true'
}

/** The hostRisks entry naming `file` or a directory above it. */
function riskFor(risks, file) {
  return risks.find((h) => h.path === file || file.startsWith(h.path + '/'))
}

/** The run's options in workspace-write for `ws`, in a mode of `MODES`. */
function options(ws, extra) {
  const sandbox = { mode: 'workspace-write', ...(extra.review ? { workspace: 'review' } : {}) }
  return { cwd: ws, sandbox, timeout: 60000, ...(extra.linux ? { linux: extra.linux } : {}) }
}

/** Each planted path (relative to `ws`) is gone, and reported unless Landlock refused it. */
function assertKeptOff(risks, ws, planted, extra) {
  for (const rel of planted) {
    const file = path.resolve(ws, rel)
    assert.ok(!fs.existsSync(file) || riskFor(risks, file), `${rel} landed unreported: ${JSON.stringify(risks)}`)
    assert.equal(fs.existsSync(file), false, `${rel} stayed: ${JSON.stringify(risks)}`)
    // Landlock may refuse the creation outright (a directory holding a read-only path takes no
    // new entries there): nothing landed, nothing to report.
    if (!extra.linux) assert.ok(riskFor(risks, file), `${rel} unreported: ${JSON.stringify(risks)}`)
  }
}

module.exports = { MODES, nested, plant, riskFor, options, assertKeptOff }
