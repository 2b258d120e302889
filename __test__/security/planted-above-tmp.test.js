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

// Found by an attacker's review (host26, above_git.js): the cwd a package of a repository whose top
// lies in the writable /tmp (`/tmp/<x>/repo`, cwd `repo/pkg` with no `.git` of its own), in review
// mode. The run appended `core.fsmonitor` to `../.git/config` and wrote `../.git/hooks/pre-commit`:
// both landed on the host at once (outside the change set: no change, no risk), and the host's next
// `git status` in the package ran the program. Direct runs kept that `.git` read-only; review mode
// left the repositories above its roots to the change set's judge, which never sees them.
describe('the repository above a workspace nested below /tmp', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: its .git is read-only for the run and reported as shared`, async (t) => {
      const { base } = nested(t, 'sandspawn-above-git-')
      const repo = path.join(base, 'repo')
      const pkg = path.join(repo, 'pkg')
      fs.mkdirSync(pkg, { recursive: true })
      fs.writeFileSync(path.join(pkg, 'a.txt'), 'a\n')
      require('node:child_process').execFileSync('git', ['init', '-q', repo])
      const config = fs.readFileSync(path.join(repo, '.git/config'), 'utf8')
      const r = await sh(
        "printf '[core]\\n\\tfsmonitor = /bin/true\\n' >> ../.git/config; echo evil > ../.git/hooks/pre-commit; true",
        options(pkg, extra),
      )
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(fs.readFileSync(path.join(repo, '.git/config'), 'utf8'), config, show(r))
      assert.equal(fs.existsSync(path.join(repo, '.git/hooks/pre-commit')), false, show(r))
      // Any other run or process can write it there: every run says so, as of a worktree's git
      // directory in /tmp (`link-to-shared-directory`).
      const risks = (r.hostRisks || []).filter((h) => h.path === path.join(repo, '.git'))
      assert.deepEqual(risks.map((h) => h.kind), ['link-to-shared-directory'], JSON.stringify(r.hostRisks))
      if (r.changeSet) await sandspawn.discardChangeSet(r.changeSet.id)
    })
  }
})
