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
const { changeSetStore, sandspawn, show, sh, q } = require('./helpers')
const { MODES, nested, plant, options, assertKeptOff } = require('./above-tmp')

const STORE = changeSetStore('sandspawn-above-tmp-')

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

// Found by an attacker's review (gitabove26, between_git.js): the cwd `/tmp/<x>/outer/proj` with no
// `.git` of its own. The run did `git init ..` and set `core.fsmonitor` in `../.git/config`: the
// repository landed in `outer` with `hostRisks: []`, and the host's next `git status` in the
// workspace (git's discovery walks up to `outer/.git`) ran the program. At /tmp's own top protectGit
// kept it off already; now the directories between /tmp and the workspace get the same.
describe('a repository created between /tmp and a workspace nested below it', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported, so the host's git status runs nothing`, async (t) => {
      const { base, ws } = nested(t, 'sandspawn-above-git-')
      const pwned = path.join(base, 'PWNED')
      const cmd = [
        'git init -q ..',
        `git -C .. config core.fsmonitor ${q(`touch ${pwned}; false`)}`,
        // A symlink one level up, which git's discovery follows as well.
        'ln -s outer/.git ../../.git',
        'true',
      ].join('; ')
      const r = await sh(cmd, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      for (const rel of ['../.git', '../../.git']) {
        const at = path.resolve(ws, rel)
        const risk = risks.find((h) => h.path === at)
        // lstat: a symlink left dangling is still a `.git` for git's discovery.
        const there = (() => { try { return !!fs.lstatSync(at) } catch { return false } })()
        assert.ok(!there || risk, `${rel} landed unreported: ${JSON.stringify(risks)}`)
        assert.equal(there, false, `${rel} stayed: ${JSON.stringify(risks)}`)
        // Landlock may refuse the creation outright: nothing landed, nothing to report.
        if (!extra.linux) assert.equal(risk && risk.kind, 'repository-created', `${rel}: ${JSON.stringify(risks)}`)
      }
      try {
        require('node:child_process').execFileSync('git', ['status'], { cwd: ws, stdio: 'ignore' })
      } catch {}
      assert.equal(fs.existsSync(pwned), false, `the host's git status ran the planted fsmonitor: ${JSON.stringify(risks)}`)
      if (r.changeSet) await sandspawn.discardChangeSet(r.changeSet.id)
    })
  }
})

// The host's shell prompt or editor runs `git status` in the workspace during the run too: the
// `.git` is moved aside as soon as it is made there, as at a root's top (the keeper).
describe('a repository created between /tmp and a workspace, during the run', () => {
  for (const [mode, extra] of Object.entries(MODES).filter(([m]) => m !== 'landlock')) {
    test(`${mode}: moved aside at once`, async (t) => {
      const { ws } = nested(t, 'sandspawn-above-git-')
      // A generous bound that only catches a keeper that never moves it.
      const wait = 'for i in $(seq 300); do [ -e ../.git ] || { echo gone; break; }; sleep 0.1; done'
      const r = await sh(`git init -q ..; ${wait}; true`, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(r.stdout.trim(), 'gone', show(r))
      const risk = (r.hostRisks || []).find((h) => h.path === path.resolve(ws, '../.git'))
      assert.ok(risk && risk.kind === 'repository-created' && risk.detail.includes('at once'), JSON.stringify(r.hostRisks))
      if (r.changeSet) await sandspawn.discardChangeSet(r.changeSet.id)
    })
  }
})

// Found by an attacker's review (rfix26b), left open then, closed by host27 and me: a directory
// between /tmp and the workspace made a git directory itself (`HEAD`, `objects/`, `refs/` and a
// `config` with `core.worktree` and `core.fsmonitor` written into `..`, no `.git`): the check after
// the run reported it and moved its `HEAD` aside, but during the run the host's `git status` in the
// workspace (a shell prompt's, an editor's), whose discovery takes such a parent for a bare
// repository, ran the fsmonitor. `HEAD` is kept absent there at once, as `.git` is, and the report
// after the run still names the configuration; the host's git after the run runs nothing either.
describe('a directory between /tmp and a workspace made a git directory, during the run', () => {
  for (const [mode, extra] of Object.entries(MODES).filter(([m]) => m !== 'landlock')) {
    test(`${mode}: its HEAD is moved aside at once, so the host's git status meanwhile runs nothing`, { skip: !fs.existsSync('/usr/bin/git') && 'no git' }, async (t) => {
      const { base, ws } = nested(t, 'sandspawn-above-git-')
      const pwned = path.join(base, 'PWNED')
      const config = `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = proj\n\tfsmonitor = "touch ${pwned}; false"\n`
      const plantGitDir = `mkdir ../objects ../refs; printf %s ${q(config)} > ../config; echo 'ref: refs/heads/main' > ../HEAD`
      // READY once the keeper has moved HEAD aside (a generous bound that only catches a keeper that
      // never does): the host's git status then runs while the run goes on, not in the instant
      // between the write and the move.
      const gone = 'for i in $(seq 300); do [ -e ../HEAD ] || break; sleep 0.1; done'
      const running = sh(`${plantGitDir}; ${gone}; touch ../READY; for i in $(seq 100); do [ -e ../DONE ] && break; sleep 0.1; done; true`, options(ws, extra))
      // Beside the workspace: review mode's run writes the workspace into its change set.
      const ready = path.join(base, 'outer', 'READY')
      for (let i = 0; i < 200 && !fs.existsSync(ready); i++) await new Promise((res) => setTimeout(res, 50))
      assert.ok(fs.existsSync(ready), 'the command never got there')
      // The host's git in the workspace while the run goes on (not above /tmp's entries).
      require('node:child_process').spawnSync('git', ['status'], { cwd: ws, stdio: 'ignore', env: { ...process.env, GIT_CEILING_DIRECTORIES: '/tmp' } })
      fs.writeFileSync(path.join(base, 'outer', 'DONE'), '')
      const r = await running
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(fs.existsSync(pwned), false, `the host's git status during the run ran the planted fsmonitor: ${JSON.stringify(r.hostRisks)}`)
      const head = path.join(base, 'outer', 'HEAD')
      assert.equal(fs.existsSync(head), false, 'HEAD stayed')
      const risk = (r.hostRisks || []).find((h) => h.path === path.join(base, 'outer') && h.kind === 'git-directory-created')
      assert.ok(risk && /core\.fsmonitor/.test(risk.detail) && /moved aside/.test(risk.detail), JSON.stringify(r.hostRisks))
      require('node:child_process').spawnSync('git', ['status'], { cwd: ws, stdio: 'ignore', env: { ...process.env, GIT_CEILING_DIRECTORIES: '/tmp' } })
      assert.equal(fs.existsSync(pwned), false, `the host's git status after the run ran the planted fsmonitor: ${JSON.stringify(r.hostRisks)}`)
      if (r.changeSet) await sandspawn.discardChangeSet(r.changeSet.id)
    })
  }
})
