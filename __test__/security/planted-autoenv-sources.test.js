'use strict'
// Found by an attacker's review (host39): zsh-autoenv's `.autoenv.zsh` and `.autoenv_leave.zsh`
// are protected names (hostb38: zsh-autoenv sources the nearest `.autoenv.zsh` up to `/` when a
// shell enters the directory, `.autoenv_leave.zsh` when it leaves, once the file's checksum is
// authorized), but what they source or run was left writable: the authorization is of the file's
// checksum alone, as direnv's allow list is of the `.envrc` alone (host34), and zsh sources the
// file in the user's own shell, so a project's committed `source ./scripts/dev-env.zsh`, zsh's
// own directory spelling `"${0:A:h}/tools/common.zsh"` ($0 is the sourced file in zsh) or a
// `./scripts/check` had a default run rewrite the file with hostRisks [] (bwrap and the Landlock
// mode), and review's apply landed it: the host's shell ran it at its next cd there.

const { test } = require('node:test')
const fs = require('node:fs')
const path = require('node:path')
const { tempTree, changeSetStore } = require('./helpers')
const { appendsKeptOrSaid, reviewHoldsBack } = require('./kept-or-said')

changeSetStore('sandspawn-autoenv-sources-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** A project at `dir` whose zsh-autoenv files source and run files of its own; returns them. */
function autoenvProject(dir) {
  for (const d of ['scripts', 'tools']) fs.mkdirSync(path.join(dir, d), { recursive: true })
  fs.writeFileSync(path.join(dir, '.autoenv.zsh'), [
    'source ./scripts/dev-env.zsh',
    '. "${0:A:h}/tools/common.zsh"',
    '[[ -x scripts/check ]] && ./scripts/check',
    '',
  ].join('\n'))
  fs.writeFileSync(path.join(dir, '.autoenv_leave.zsh'), 'source $0:a:h/scripts/leave.zsh\n')
  const files = ['scripts/dev-env.zsh', 'tools/common.zsh', 'scripts/check', 'scripts/leave.zsh'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'export A=1\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the files a project's .autoenv.zsh and .autoenv_leave.zsh source or run cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, autoenvProject(tree.ws), 'export A=1\n')
  })
}

test('review: a change set that rewrites a file the .autoenv.zsh sources is a risk, held back by apply', async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, autoenvProject(tree.ws), 'touch /tmp/pwned')
})

// Found by an attacker's review (rev40, another spelling of host39's): autoenv (hyperupcall's,
// formerly kennethreitz's, for bash and zsh) sources `.env` as a shell script when a shell enters
// the directory and `.env.leave` when it leaves (AUTOENV_ENABLE_LEAVE), each once its checksum is
// authorized: the file alone. Both are reported names, but what they source was left writable:
// a project's committed `source ./scripts/env.sh` had a default run rewrite it with hostRisks [].
function bashAutoenvProject(dir) {
  fs.mkdirSync(path.join(dir, 'scripts'), { recursive: true })
  fs.writeFileSync(path.join(dir, '.env'), 'source ./scripts/env.sh\n')
  fs.writeFileSync(path.join(dir, '.env.leave'), '. scripts/leave.sh\n')
  const files = ['scripts/env.sh', 'scripts/leave.sh'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'export A=1\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the files a project's autoenv .env and .env.leave source cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, bashAutoenvProject(tree.ws), 'export A=1\n')
  })
}

test('review: a change set that rewrites a file an autoenv .env sources is a risk, held back by apply', async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, bashAutoenvProject(tree.ws), 'touch /tmp/pwned')
})
