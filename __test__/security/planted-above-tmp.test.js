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
const { sandspawn, show, sh, BASE, rmrf } = require('./helpers')
const { MODES, nested, plant, options, assertKeptOff } = require('./above-tmp')

const STORE = fs.mkdtempSync(path.join(BASE, 'sandspawn-above-tmp-'))
process.env.SANDSPAWN_CHANGE_SET_DIR = STORE
process.on('exit', () => rmrf(STORE))

/** Relative to the workspace: in the directories between /tmp and it. */
const PLANTED = ['../.cargo/config.toml', '../.envrc', '../../rust-toolchain.toml', '../.claude/settings.json']

describe('protected names between /tmp and a workspace nested below it', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported, or read-only where they exist`, async (t) => {
      const { base, ws } = nested(t, 'sandspawn-above-tmp-')
      // There before the run (the user's own): read-only for it.
      fs.writeFileSync(path.join(base, 'outer', '.npmrc'), 'registry=https://example.invalid/\n')
      const r = await sh(`${plant(PLANTED)}; echo evil >> ../.npmrc; true`, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      assertKeptOff(risks, ws, PLANTED, extra)
      assert.equal(fs.readFileSync(path.join(base, 'outer', '.npmrc'), 'utf8'), 'registry=https://example.invalid/\n')
      if (r.changeSet) await sandspawn.discardChangeSet(r.changeSet.id)
    })
  }
})
