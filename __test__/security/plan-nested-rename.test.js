'use strict'
// A plan another program runs (buildSandboxCommand) has no walk after it: nothing looks at the
// workspace when its sandbox is gone. What it keeps of a repository below the workspace's top (its
// `.git` bound read-only, placeholders over its missing protected names) are mounts at the
// repository's paths; a plain directory above them moves with everything mounted below it.
//
// Found by an attacker's review (kern37): a default workspace-write plan's command renamed the
// directory holding a nested repository (`mv lib lib.old`), made the same path again with a
// repository of its own (`.git/config` with `core.fsmonitor`, an `.envrc`) and renamed the real
// one back elsewhere; the host's next `git status` in `lib/sub` would run the fsmonitor, direnv
// the `.envrc`, and nobody said anything (a spawnSandboxed run reports `repository-created`
// after its walk; a plan has none).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const { sandspawn, tempTree, which } = require('./helpers')

const NO_GIT = which('git') === null && 'git is not installed'

test('a plan cannot rename a directory above a nested repository and plant one at its path', { skip: NO_GIT }, (t) => {
  const tree = tempTree(t)
  const sub = path.join(tree.ws, 'lib', 'sub')
  fs.mkdirSync(sub, { recursive: true })
  execFileSync('git', ['init', '-q', sub])
  const config = fs.readFileSync(path.join(sub, '.git', 'config'), 'utf8')
  const script = [
    'mv lib lib.old && echo RENAMED-LIB',
    'mv lib.old/sub lib.old/sub2 && echo RENAMED-SUB',
    'mkdir -p lib/sub && git init -q lib/sub && printf "[core]\\n\\tfsmonitor = touch /tmp/pwned\\n" >> lib/sub/.git/config && echo PLANTED',
    'echo "touch /tmp/pwned" > lib/sub/.envrc && echo ENVRC',
    'true',
  ].join('; ')
  const plan = sandspawn.buildSandboxCommand(['sh', '-c', script], { cwd: tree.ws, sandbox: { mode: 'workspace-write' } })
  const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  assert.doesNotMatch(r.stdout, /RENAMED-LIB|RENAMED-SUB/, `a directory above the nested repository was renamed: ${r.stdout}`)
  // The repository at lib/sub is still the user's, untouched.
  assert.equal(fs.readFileSync(path.join(sub, '.git', 'config'), 'utf8'), config)
  assert.ok(!fs.existsSync(path.join(sub, '.envrc')) || fs.lstatSync(path.join(sub, '.envrc')).isSymbolicLink(), 'no .envrc planted at lib/sub')
})

// Found by an attacker's review (revc37): a symlink on the way to a git directory (a nested
// repository's `.git -> ../../gitdirs/sub`, a link on a `gitdir:` line's way, on the way to a home
// link's target or a denyRead path) is held for a run: replaced, it is made again as it was after
// the run. A plan has nobody after it: its command repointed lib/sub/.git at a bare repository of
// its own (core.fsmonitor, which the host's next `git status` in lib/sub runs), nothing said.
test('a plan cannot repoint a symlink on the way to a nested repository\'s git directory', { skip: NO_GIT }, (t) => {
  const tree = tempTree(t)
  const sub = path.join(tree.ws, 'lib', 'sub')
  fs.mkdirSync(sub, { recursive: true })
  fs.mkdirSync(path.join(tree.ws, 'gitdirs'))
  execFileSync('git', ['init', '-q', sub])
  fs.renameSync(path.join(sub, '.git'), path.join(tree.ws, 'gitdirs', 'sub'))
  fs.symlinkSync('../../gitdirs/sub', path.join(sub, '.git'))
  const script = 'git init -q --bare evil && printf "[core]\\n\\tfsmonitor = touch /tmp/pwned\\n" >> evil/config; rm -f lib/sub/.git; ln -s ../../evil lib/sub/.git; true'
  let plan
  try {
    plan = sandspawn.buildSandboxCommand(['sh', '-c', script], { cwd: tree.ws, sandbox: { mode: 'workspace-write' } })
  } catch (e) {
    // Refused, typed, naming the link and the way that keeps it (spawnSandboxed).
    assert.equal(e.code, 'ERR_SANDBOX_UNSUPPORTED', e.message)
    assert.match(e.message, /lib\/sub\/\.git/)
    assert.match(e.message, /spawnSandboxed/)
    return
  }
  const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 60_000 })
  assert.equal(r.status, 0, r.stderr)
  assert.equal(fs.readlinkSync(path.join(sub, '.git')), '../../gitdirs/sub', 'lib/sub/.git repointed by the plan, nothing said')
})
