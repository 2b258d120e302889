'use strict'
// Found by an attacker's review (host25, parent_cargo.js): a workspace nested below the writable
// /tmp (`/tmp/<x>/outer/proj`, as harnesses make them with mktemp -d). The run wrote
// `../.cargo/config.toml` (a rustc-wrapper), `../.envrc`, `../../rust-toolchain.toml` into the
// directories between /tmp and its workspace: they landed with `hostRisks: []` (tmp roots are not
// walked, and protected names were kept at each root's top only), and the host's next `cargo build`
// in the workspace ran the wrapper. Now those directories get the protected names a root's top
// gets: what the run creates there is moved aside and reported, what was there is read-only.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sandspawn, show, sh, q, BASE, rmrf } = require('./helpers')

const STORE = fs.mkdtempSync(path.join(BASE, 'sandspawn-above-tmp-'))
process.env.SANDSPAWN_CHANGE_SET_DIR = STORE
process.on('exit', () => rmrf(STORE))

/** Relative to the workspace: in the directories between /tmp and it. */
const PLANTED = ['../.cargo/config.toml', '../.envrc', '../../rust-toolchain.toml', '../.claude/settings.json']
const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } }, review: { review: true } }

function nested(t) {
  // The real /tmp: the gap is the shared temporary directory as a writable root (`tmp: 'writable'`).
  const base = fs.mkdtempSync('/tmp/sandspawn-above-tmp-')
  t.after(() => rmrf(base))
  const ws = path.join(base, 'outer', 'proj')
  fs.mkdirSync(ws, { recursive: true })
  return { base, ws }
}

function plant(list) {
  return list.map((rel) => `mkdir -p ${q(path.dirname(rel))} 2>/dev/null; echo planted > ${q(rel)}`).join('; ') + '; true'
}

/** The hostRisks entry naming `file` or a directory above it. */
function riskFor(risks, file) {
  return risks.find((h) => h.path === file || file.startsWith(h.path + '/'))
}

describe('protected names between /tmp and a workspace nested below it', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported, or read-only where they exist`, async (t) => {
      const { base, ws } = nested(t)
      // There before the run (the user's own): read-only for it.
      fs.writeFileSync(path.join(base, 'outer', '.npmrc'), 'registry=https://example.invalid/\n')
      const sandbox = { mode: 'workspace-write', ...(extra.review ? { workspace: 'review' } : {}) }
      const opts = { cwd: ws, sandbox, timeout: 60000, ...(extra.linux ? { linux: extra.linux } : {}) }
      const r = await sh(`${plant(PLANTED)}; echo evil >> ../.npmrc; true`, opts)
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      for (const rel of PLANTED) {
        const file = path.resolve(ws, rel)
        assert.ok(!fs.existsSync(file) || riskFor(risks, file), `${rel} landed unreported: ${JSON.stringify(risks)}`)
        assert.equal(fs.existsSync(file), false, `${rel} stayed: ${JSON.stringify(risks)}`)
        // Landlock may refuse the creation outright (a directory holding a read-only path takes no
        // new entries there): nothing landed, nothing to report.
        if (!extra.linux) assert.ok(riskFor(risks, file), `${rel} unreported: ${JSON.stringify(risks)}`)
      }
      assert.equal(fs.readFileSync(path.join(base, 'outer', '.npmrc'), 'utf8'), 'registry=https://example.invalid/\n')
      if (r.changeSet) await sandspawn.discardChangeSet(r.changeSet.id)
    })
  }
})
