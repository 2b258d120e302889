'use strict'
// An attacker's review (rev22/g3_gitdir_in_tmp.js, g4_worktree_main_in_tmp.js): the workspace is a
// `git worktree` whose main repository lives in /tmp, or a nested repository's `.git` is a
// `gitdir:` file (or a symlink to one) naming a git directory in /tmp. A run in the workspace kept
// that git directory read-only and said nothing; a run in ANOTHER workspace (workspace-write: /tmp
// writable) appended core.fsmonitor to its config and said nothing either; the host's next `git
// status` in the workspace ran it. No run of this workspace can keep other runs (or any process on
// the host) out of /tmp, so each of its runs reports the git directory as it does a hook that leads
// there: `link-to-shared-directory`, naming it.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { sh, show, tempTree } = require('./helpers')

const git = (cwd, ...args) => execFileSync('git', args, { cwd, stdio: 'pipe' })

/** A directory in /tmp (a shared place on every host), removed after the test. */
function inTmp(t, prefix) {
  const d = fs.realpathSync(fs.mkdtempSync(path.join('/tmp', prefix)))
  t.after(() => fs.rmSync(d, { recursive: true, force: true }))
  return d
}

/** Two runs in `cwd` (the second skips the walk, nothing having changed, and carves from the
 * remembered facts): each reports `shared`. */
async function bothReport(t, mode, cwd, at, shared) {
  const linux = mode === 'landlock' ? { allow: ['landlock'] } : undefined
  for (const n of [1, 2]) {
    const r = await sh('echo x >> /dev/null', { cwd, sandbox: 'workspace-write', linux })
    if (mode === 'landlock' && r.sandboxType !== 'landlock') return t.skip('Landlock is not available here')
    assert.equal(r.exitCode, 0, show(r))
    const risk = r.hostRisks.find((h) => h.path === at && h.kind === 'link-to-shared-directory')
    assert.ok(risk, `run ${n}: hostRisks: ${JSON.stringify(r.hostRisks)}`)
    assert.ok(risk.detail.includes(shared), risk.detail)
    assert.match(risk.detail, /any other run|every process/)
  }
}

describe('a git directory in a shared place is reported on every run (found by an attacker\'s review)', () => {
  for (const mode of ['bwrap', 'landlock']) {
    test(`${mode}: the workspace is a worktree whose main repository is in /tmp`, async (t) => {
      const tree = tempTree(t)
      const main = inTmp(t, 'sandspawn-gitmain-')
      git(main, 'init', '-q', '-b', 'main')
      git(main, '-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'i')
      const wt = path.join(tree.root, 'wt')
      git(main, 'worktree', 'add', '-q', wt, '-b', 'feature')
      await bothReport(t, mode, wt, path.join(wt, '.git'), path.join(main, '.git'))
    })

    for (const form of ['file', 'link']) {
      test(`${mode}: a nested repository's .git is a gitdir: ${form} naming a git directory in /tmp`, async (t) => {
        const tree = tempTree(t, { git: true })
        const g = inTmp(t, 'sandspawn-gitdir-')
        git(g, 'init', '-q', '--bare')
        const sub = path.join(tree.ws, 'sub')
        fs.mkdirSync(sub)
        if (form === 'link') {
          fs.writeFileSync(path.join(sub, 'gf'), `gitdir: ${g}\n`)
          fs.symlinkSync('gf', path.join(sub, '.git'))
        } else fs.writeFileSync(path.join(sub, '.git'), `gitdir: ${g}\n`)
        git(sub, 'config', 'core.bare', 'false')
        await bothReport(t, mode, tree.ws, path.join(sub, '.git'), g)
      })
    }

    // An attacker's review (rfix23/tmp_config_refs.js): the repository's own config (set by the
    // host) names a file or directory in /tmp: an included file, a hooks directory, a program
    // (core.fsmonitor), directly or through a symlink in the workspace. Kept read-only in this
    // workspace's runs; a run in another workspace wrote it, and the host's next `git status` or
    // `git commit` here ran what it put there. Each run reports it at the repository's `.git`.
    const refs = {
      include: (ws, s) => {
        fs.writeFileSync(path.join(s, 'inc.cfg'), '[user]\n\tname = x\n')
        git(ws, 'config', 'include.path', path.join(s, 'inc.cfg'))
        return path.join(s, 'inc.cfg')
      },
      hooksPath: (ws, s) => {
        fs.mkdirSync(path.join(s, 'hooks'))
        git(ws, 'config', 'core.hooksPath', path.join(s, 'hooks'))
        return path.join(s, 'hooks')
      },
      'hooksPath through a symlink': (ws, s) => {
        fs.mkdirSync(path.join(s, 'hooks'))
        fs.symlinkSync(s, path.join(ws, 'tools'))
        git(ws, 'config', 'core.hooksPath', 'tools/hooks')
        return path.join(s, 'hooks')
      },
      'core.fsmonitor': (ws, s) => {
        fs.writeFileSync(path.join(s, 'fsmon'), '#!/bin/sh\nexit 1\n', { mode: 0o755 })
        git(ws, 'config', 'core.fsmonitor', path.join(s, 'fsmon'))
        return path.join(s, 'fsmon')
      },
    }
    for (const [what, make] of Object.entries(refs)) {
      test(`${mode}: the repository's config names, by ${what}, a path in /tmp`, async (t) => {
        const tree = tempTree(t, { git: true })
        const named = make(tree.ws, inTmp(t, 'sandspawn-gitref-'))
        await bothReport(t, mode, tree.ws, path.join(tree.ws, '.git'), named)
      })
    }
  }
})
