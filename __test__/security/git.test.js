'use strict'
// .git protection in workspace-write (protectGit defaults to true): the repository's metadata
// stays read-only, cannot be replaced or moved away, and a missing .git cannot be created.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const sandspawn = require('../..')
const { tempTree, snapshot, treeSnapshot, show, sh, q, which, waitFor } = require('./helpers')

const HAS_GIT = which('git') !== null
const DENIED = /Read-only file system|Permission denied|Operation not permitted|Device or resource busy/
const WW = { mode: 'workspace-write' }

function attempts(list) {
  return list.map(([label, cmd]) => `if ( ${cmd} ) >/dev/null; then echo ${q(`ESCAPED ${label}`)}; else echo ${q(`denied ${label}`)}; fi`).join('\n')
}

function assertAllDenied(r, list) {
  for (const [label] of list) {
    assert.ok(!r.stdout.includes(`ESCAPED ${label}\n`), `attack "${label}" succeeded\n${show(r)}`)
    assert.ok(r.stdout.includes(`denied ${label}\n`), `attack "${label}" did not report\n${show(r)}`)
  }
  assert.equal(r.exitCode, 0, show(r))
  assert.match(r.stderr, DENIED, show(r))
}

/** A repository with one commit, made on the host. */
function makeRepo(dir) {
  if (HAS_GIT) {
    const g = (...args) => execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { stdio: 'pipe' })
    g('init', '-q')
    fs.writeFileSync(path.join(dir, 'file.txt'), 'hello\n')
    g('add', 'file.txt')
    g('commit', '-qm', 'init')
  } else {
    fs.mkdirSync(path.join(dir, '.git/hooks'), { recursive: true })
    fs.writeFileSync(path.join(dir, '.git/config'), '[core]\n\trepositoryformatversion = 0\n')
    fs.writeFileSync(path.join(dir, '.git/HEAD'), 'ref: refs/heads/main\n')
  }
}

function assertRepoIntact(gitDir, before, r) {
  assert.deepEqual(treeSnapshot(gitDir), before, `the host's git directory changed\n${show(r)}`)
  if (HAS_GIT) execFileSync('git', ['--git-dir', gitDir, 'fsck', '--no-progress'], { stdio: 'pipe' })
}

/** Cases against an existing repository in the workspace. */
const REPO_CASES = [
  {
    name: 'writing .git/config',
    list: () => [
      ['append', "echo '[core]\n\thooksPath = /tmp' >> .git/config"],
      ['overwrite', 'echo pwned > .git/config'],
      ['sed -i', 'sed -i s/0/1/ .git/config'],
      ...(HAS_GIT ? [['git config', 'git config core.hooksPath /tmp/evil']] : []),
      ['rm', 'rm -f .git/config'],
    ],
  },
  {
    name: 'writing .git/hooks/pre-commit',
    list: () => [
      ['create hook', "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit"],
      ['cp hook', 'cp /bin/true .git/hooks/post-checkout'],
      ['replace hooks dir', 'rm -rf .git/hooks && mkdir .git/hooks'],
    ],
  },
  {
    name: 'replacing .git with a symlink',
    list: () => [
      ['rm -rf then ln', 'rm -rf .git; ln -s /tmp .git && test -L .git'],
      ['ln -sfn over it', 'ln -sfn /tmp .git && test -L .git'],
      ['mv -T a link over it', 'ln -s /tmp evil && mv -T evil .git'],
    ],
  },
  {
    name: 'renaming .git away and recreating it',
    list: () => [
      ['mv away', 'mv .git .git.bak'],
      ['mv away + recreate', "mv .git .git.bak; mkdir -p .git/hooks && echo pwned > .git/config"],
      ['rename via python', 'python3 -c "import os; os.rename(\'.git\', \'moved\')"'],
    ],
    check: (tree) => {
      assert.ok(!fs.existsSync(path.join(tree.ws, '.git.bak')))
      assert.ok(!fs.existsSync(path.join(tree.ws, 'moved')))
    },
  },
  {
    name: 'git commands that write metadata',
    skip: !HAS_GIT && 'git is not installed',
    list: () => [
      ['git add', 'echo new > new.txt && git add new.txt'],
      ['git commit', 'git -c user.name=x -c user.email=x@x commit -qam pwned --allow-empty'],
      ['git branch', 'git branch evil'],
      ['git gc', 'git gc -q'],
    ],
  },
]

describe('.git protection (workspace-write, protectGit default)', { concurrency: 4 }, () => {
  for (const c of REPO_CASES) {
    test(c.name, { skip: c.skip || false }, async (t) => {
      const tree = tempTree(t)
      makeRepo(tree.ws)
      const gitDir = path.join(tree.ws, '.git')
      const before = treeSnapshot(gitDir)
      const list = c.list(tree)
      const r = await sh(attempts(list), { cwd: tree.ws, sandbox: WW })
      assertAllDenied(r, list)
      assertRepoIntact(gitDir, before, r)
      if (c.check) c.check(tree)
    })
  }

  test('control: the working tree of the repository is writable', async (t) => {
    const tree = tempTree(t)
    makeRepo(tree.ws)
    const r = await sh('echo changed > file.txt && cat file.txt', { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(fs.readFileSync(path.join(tree.ws, 'file.txt'), 'utf8'), 'changed\n')
  })

  test('.git as a gitdir: file: the real git directory stays read-only', { skip: !HAS_GIT && 'git is not installed' }, async (t) => {
    const tree = tempTree(t)
    const realGit = path.join(tree.root, 'real.git')
    execFileSync('git', ['init', '-q', '--separate-git-dir', realGit, tree.ws], { stdio: 'pipe' })
    const dotGit = path.join(tree.ws, '.git')
    assert.ok(fs.statSync(dotGit).isFile())
    const beforeReal = treeSnapshot(realGit)
    const beforeFile = snapshot(dotGit)
    const list = [
      ['config through gitdir', `echo pwned >> ${q(path.join(realGit, 'config'))}`],
      ['hook through gitdir', `echo pwned > ${q(path.join(realGit, 'hooks/pre-commit'))}`],
      ['git config', 'git config core.hooksPath /tmp/evil'],
      ['rewrite the .git file', 'echo "gitdir: /tmp/evil" > .git'],
      ['remove the .git file', 'rm -f .git'],
    ]
    const r = await sh(attempts(list), { cwd: tree.ws, sandbox: WW })
    assertAllDenied(r, list)
    assert.deepEqual(treeSnapshot(realGit), beforeReal, show(r))
    assert.deepEqual(snapshot(dotGit), beforeFile, show(r))
  })

  test('.git in an extra writable root is protected too', async (t) => {
    const tree = tempTree(t)
    const other = path.join(tree.root, 'other')
    fs.mkdirSync(other)
    makeRepo(other)
    const gitDir = path.join(other, '.git')
    const before = treeSnapshot(gitDir)
    const list = [
      ['config', `echo pwned >> ${q(path.join(gitDir, 'config'))}`],
      ['hook', `echo pwned > ${q(path.join(gitDir, 'hooks/pre-commit'))}`],
      ['mv away', `mv ${q(gitDir)} ${q(gitDir + '.bak')}`],
    ]
    const script = `echo ok > ${q(path.join(other, 'ok.txt'))}\n${attempts(list)}`
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write', writableRoots: [other] } })
    assertAllDenied(r, list)
    assert.equal(fs.readFileSync(path.join(other, 'ok.txt'), 'utf8'), 'ok\n', 'the writable root itself was not writable')
    assertRepoIntact(gitDir, before, r)
  })
})

test('a repository behind a directory only another user can enter: the run works, and cannot reach it', { skip: process.getuid() !== 0 && 'needs root to make a directory another user owns' }, async (t) => {
  // The host's walk (as root) finds the repository; the sandbox cannot even look up its path
  // (the owner is not mapped in the user namespace), so there is nothing to protect there: the
  // helper must not refuse the whole run because it cannot open it (it did: every
  // workspace-write run in a shared directory holding another user's 0700 folder failed).
  const tree = tempTree(t)
  const locked = path.join(tree.ws, 'locked')
  fs.mkdirSync(path.join(locked, 'repo'), { recursive: true })
  makeRepo(path.join(locked, 'repo'))
  execFileSync('chown', ['-R', '64126:64126', locked])
  fs.chmodSync(locked, 0o700)
  const before = treeSnapshot(path.join(locked, 'repo', '.git'))
  const r = await sh(`echo ok > ok.txt; ls ${q(locked)} 2>&1; echo pwned >> ${q(path.join(locked, 'repo', '.git', 'config'))} 2>&1; echo rc=$?`, { cwd: tree.ws, sandbox: WW })
  assert.equal(r.exitCode, 0, show(r))
  assert.match(r.stdout, /Permission denied[\s\S]*rc=1/, show(r))
  assert.equal(fs.readFileSync(path.join(tree.ws, 'ok.txt'), 'utf8'), 'ok\n')
  assert.deepEqual(treeSnapshot(path.join(locked, 'repo', '.git')), before)
})

// Found by an attacker's review (fix33): the helper took EACCES on a carve-out as "behind a
// directory the sandbox may not enter, nothing to protect" (the test above) and skipped it before
// the check of its device and inode. A run in the same workspace that, between another run's plan
// and its helper's setup, made a directory on the way a link to a directory the sandbox cannot
// search (`/root` for a user other than root), then put it back, left that run's command every
// repository below it writable: it wrote a hook the host's next `git commit` runs, hostRisks [].
// A plan built first and run after the swap shows it without a race.
test('a carve-out whose path another run points through a link to a directory the sandbox cannot enter is not skipped', { skip: !HAS_GIT && 'needs git' }, async (t) => {
  const tree = tempTree(t)
  const deps = path.join(tree.ws, 'deps')
  fs.mkdirSync(path.join(deps, 'r1'), { recursive: true })
  makeRepo(path.join(deps, 'r1'))
  let blocked = '/root'
  if (process.getuid() === 0) {
    blocked = path.join(tree.root, 'blocked')
    fs.mkdirSync(blocked)
    execFileSync('chown', ['64126:64126', blocked])
    fs.chmodSync(blocked, 0o700)
  } else {
    try {
      fs.readdirSync(blocked)
      return t.skip('no directory here this user cannot search')
    } catch {}
  }
  const hook = path.join(deps, 'r1', '.git', 'hooks', 'pre-commit')
  const script = `while [ -L deps ]; do sleep 0.05; done; echo 'touch /tmp/x' > deps/r1/.git/hooks/pre-commit 2>/dev/null && echo WROTE; true`
  // No protected names: their placeholders, made in front of bwrap, would fail on the swap first.
  const plan = sandspawn.buildSandboxCommand(['bash', '-c', script], { cwd: tree.ws, sandbox: { ...WW, protectedNames: [] } })
  // The other run's swap, after the plan and before its helper's setup.
  fs.renameSync(deps, `${deps}x`)
  fs.symlinkSync(blocked, deps)
  const child = require('node:child_process').spawn(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio: ['ignore', 'pipe', 'pipe'] })
  t.after(() => child.kill('SIGKILL'))
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const exited = new Promise((resolve) => child.on('close', (code) => resolve(code)))
  await new Promise((resolve) => setTimeout(resolve, 1500))
  fs.unlinkSync(deps)
  fs.renameSync(`${deps}x`, deps)
  const code = await exited
  assert.equal(fs.existsSync(hook), false, `the command wrote a hook into deps/r1/.git (exit ${code}):\n${out}\n${err}`)
  assert.doesNotMatch(out, /WROTE/)
  assert.notEqual(code, 0, 'setup fails: the path changed since the plan')
})

test('a repository a run created under a name that is not UTF-8: later runs work, and keep it read-only', async (t) => {
  // An attacker's review: run 1 made `x\xff/.git` (reported as repository-created, as it should
  // be); the host's walk then found it on every later run, and the plan refused to name it to
  // the helper ("is not valid UTF-8"), so every workspace-write run in the workspace failed until
  // the user found and removed the directory. The carve-out must work for any byte name.
  const tree = tempTree(t)
  const dir = Buffer.concat([Buffer.from(`${tree.ws}/x`), Buffer.from([0xff])])
  const config = Buffer.concat([dir, Buffer.from('/.git/config')])
  const make = HAS_GIT ? 'git init -q .' : "mkdir -p .git/hooks && printf '[core]\\n' > .git/config && echo 'ref: refs/heads/main' > .git/HEAD"
  const first = await sh(`d="x$(printf '\\377')"; mkdir "$d" && cd "$d" && ${make}`, { cwd: tree.ws, sandbox: WW })
  assert.equal(first.exitCode, 0, show(first))
  assert.ok(fs.existsSync(config), 'run 1 made no repository')
  const before = fs.readFileSync(config)
  const list = [
    ['config', `echo '[core]\n\tfsmonitor = touch /tmp/x' >> "$d/.git/config"`],
    ['hook', `echo evil > "$d/.git/hooks/pre-commit"`],
  ]
  const second = await sh(`d="x$(printf '\\377')"; echo ok > ok.txt\n${attempts(list)}`, { cwd: tree.ws, sandbox: WW })
  assertAllDenied(second, list)
  assert.equal(fs.readFileSync(path.join(tree.ws, 'ok.txt'), 'utf8'), 'ok\n')
  assert.deepEqual(fs.readFileSync(config), before, "the repository's config changed")
  assert.equal(fs.existsSync(Buffer.concat([dir, Buffer.from('/.git/hooks/pre-commit')])), false, 'a hook was planted')
})

describe('hooks that are links into the work tree', { concurrency: 4 }, () => {
  // An attacker's review: the classic `ln -s ../../scripts/pre-commit .git/hooks/pre-commit`, made
  // by the user before the run. `.git` was read-only, but the file git runs was writable through
  // its other path: the run rewrote `scripts/pre-commit`, reported nothing, and the host's next
  // `git commit` ran it. A hard link (the hook and `scripts/pre-commit` one inode) did the same.
  const HOOK = "printf '#!/bin/sh\\necho lint ok\\n'"
  const writes = (file) => [
    ['overwrite', `echo evil > ${file}`],
    ['rm and create', `rm -f ${file} && echo evil > ${file}`],
    ['rename the directory away and recreate', `mv ${path.dirname(file)} moved-away && mkdir -p ${path.dirname(file)} && echo evil > ${file}`],
  ]

  for (const [name, sub] of [['at the top of the workspace', '.'], ['in a nested repository the walk finds', 'deps/r']]) {
    test(`a symlinked hook, ${name}: what it leads to is read-only`, async (t) => {
      const tree = tempTree(t)
      const top = path.join(tree.ws, sub)
      fs.mkdirSync(path.join(top, 'scripts'), { recursive: true })
      makeRepo(top)
      fs.mkdirSync(path.join(top, '.git/hooks'), { recursive: true })
      execFileSync('sh', ['-c', `${HOOK} > scripts/pre-commit && chmod +x scripts/pre-commit && ln -s ../../scripts/pre-commit .git/hooks/pre-commit`], { cwd: top })
      const before = snapshot(path.join(top, 'scripts/pre-commit'))
      const list = writes(path.join(sub, 'scripts/pre-commit'))
      const r = await sh(`echo ok > ok.txt\n${attempts(list)}`, { cwd: tree.ws, sandbox: WW })
      assertAllDenied(r, list)
      assert.deepEqual(snapshot(path.join(top, 'scripts/pre-commit')), before, show(r))
      assert.equal(fs.readFileSync(path.join(tree.ws, 'ok.txt'), 'utf8'), 'ok\n')
    })
  }

  test('a symlinked hook whose target is missing: creating it is undone and reported', async (t) => {
    const tree = tempTree(t)
    makeRepo(tree.ws)
    fs.mkdirSync(path.join(tree.ws, '.git/hooks'), { recursive: true })
    fs.symlinkSync('../../scripts/post-checkout', path.join(tree.ws, '.git/hooks/post-checkout'))
    const r = await sh("mkdir -p scripts && printf '#!/bin/sh\\necho evil\\n' > scripts/post-checkout; true", { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    const hook = path.join(tree.ws, 'scripts/post-checkout')
    assert.ok(!fs.existsSync(hook), `the hook git runs was left in place\n${show(r)}`)
    assert.ok(r.hostRisks.some((h) => path.join(tree.ws, 'scripts/post-checkout').startsWith(h.path)), JSON.stringify(r.hostRisks))
  })

  test('a symlinked .git/hooks: the directory it leads to is read-only', async (t) => {
    const tree = tempTree(t)
    makeRepo(tree.ws)
    fs.mkdirSync(path.join(tree.ws, '.githooks'))
    fs.rmSync(path.join(tree.ws, '.git/hooks'), { recursive: true, force: true })
    fs.symlinkSync('../.githooks', path.join(tree.ws, '.git/hooks'))
    const list = [['plant a hook', 'echo evil > .githooks/pre-commit']]
    const r = await sh(attempts(list), { cwd: tree.ws, sandbox: WW })
    assertAllDenied(r, list)
    assert.ok(!fs.existsSync(path.join(tree.ws, '.githooks/pre-commit')))
  })

  test('a hard-linked hook: a write through its other name is reported, and its other names are said before', async (t) => {
    const tree = tempTree(t)
    makeRepo(tree.ws)
    fs.mkdirSync(path.join(tree.ws, 'scripts'))
    fs.mkdirSync(path.join(tree.ws, '.git/hooks'), { recursive: true })
    execFileSync('sh', ['-c', `${HOOK} > scripts/pre-commit && chmod +x scripts/pre-commit && ln scripts/pre-commit .git/hooks/pre-commit`], { cwd: tree.ws })
    const hook = path.join(tree.ws, '.git/hooks/pre-commit')
    const quiet = await sh('echo ok > ok.txt', { cwd: tree.ws, sandbox: WW })
    assert.ok(quiet.sandboxDetails.notEnforced.some((n) => n.includes(hook) && /other names|hard link/.test(n)), JSON.stringify(quiet.sandboxDetails))
    assert.deepEqual(quiet.hostRisks, [], 'a run that did not write it reports nothing')
    const r = await sh("printf '#!/bin/sh\\necho evil\\n' > scripts/pre-commit", { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    const risk = r.hostRisks.find((h) => h.path === hook)
    assert.ok(risk && risk.kind === 'hooks-written', JSON.stringify(r.hostRisks))
  })
})

// Found by an attacker's review (fixes18/gitkeys.sh): git runs a program for keys the reader did
// not know (git 2.47 ran remote.origin.uploadpack, and with protocol.ext.allow an ext:: url, on the
// host's next git fetch): a created repository's were not named in its hostRisks entry, and a
// program an existing repository's such key names by path was not kept read-only.
describe('git keys of fetching and pushing that run programs', () => {
  test("a created repository's are named; the program an existing repository's names stays read-only", { skip: !HAS_GIT && 'git is not installed' }, async (t) => {
    const tree = tempTree(t)
    const app = path.join(tree.ws, 'app')
    fs.mkdirSync(path.join(app, 'tools'), { recursive: true })
    makeRepo(app)
    fs.writeFileSync(path.join(app, 'tools/up.sh'), '#!/bin/sh\nexec git-upload-pack "$@"\n', { mode: 0o755 })
    execFileSync('git', ['-C', app, 'config', 'remote.origin.uploadpack', 'tools/up.sh'])
    const list = [['rewrite the upload-pack program', "printf '#!/bin/sh\\necho evil\\n' > app/tools/up.sh"]]
    const made = [
      'git init -q made',
      'git -C made config protocol.ext.allow always',
      `git -C made config remote.origin.url ${q('ext::sh -c touch% /tmp/x')}`,
      'git -C made config remote.origin.uploadpack ./x.sh',
      `git -C made config ${q('url.ext::sh -c x.insteadOf')} https://`,
    ].join(' && ')
    const r = await sh(`${attempts(list)}\n${made}`, { cwd: tree.ws, sandbox: WW })
    assertAllDenied(r, list)
    const risk = r.hostRisks.find((h) => h.kind === 'repository-created' && h.path === path.join(tree.ws, 'made/.git'))
    assert.ok(risk, JSON.stringify(r.hostRisks))
    for (const key of ['protocol.ext.allow', 'remote.origin.url', 'remote.origin.uploadpack', 'url.ext::sh -c x.insteadof']) {
      assert.ok(risk.detail.includes(key), `${key} is not named: ${risk.detail}`)
    }
  })
})

// Alone, after the concurrent cases: it checks for placeholders that concurrent runs create.
describe('.git creation where there is none', () => {
  // Issue 28: a missing .git is kept absent by moving aside what the command creates, at once and
  // again after the run; no placeholder is ever shown as the user's data.
  test(`creating .git where there is none (${HAS_GIT ? 'git init' : 'mkdir'}): moved aside, reported, and the host's git runs nothing of it`, async (t) => {
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'PWNED')
    const plant = HAS_GIT
      ? `git init -q && git config core.fsmonitor ${q(`touch ${marker}; false`)}`
      : `mkdir -p .git && printf '[core]\\n\\tfsmonitor = touch ${marker}\\n' > .git/config`
    const tmpGitBefore = snapshot('/tmp/.git')
    const r = await sh(`${plant}; ls -A; sleep 0.2; true`, { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(fs.existsSync(path.join(tree.ws, '.git')), false, `a .git was left in the workspace\n${show(r)}`)
    const risk = r.hostRisks.find((h) => h.path === path.join(tree.ws, '.git'))
    assert.ok(risk && risk.kind === 'repository-created' && /moved aside/.test(risk.detail), JSON.stringify(r.hostRisks))
    if (HAS_GIT) spawnSync('git', ['-C', tree.ws, 'status'], { stdio: 'ignore' })
    assert.equal(fs.existsSync(marker), false, "the host's git ran the planted fsmonitor")
    // A placeholder there (an empty directory of mode 1500) is another process's plan's, never this
    // run's (the runner makes none): it stays until a run after that plan's sandbox removes it, which
    // nothing here waits for (found by flake41: any plan on the machine makes one while it runs).
    const empty = (p) => { try { return fs.readdirSync(p).length === 0 } catch { return true } }
    const leftByRun = () => { const s = snapshot('/tmp/.git'); return s.exists && !(s.type === 'dir' && (s.mode & 0o7777) === 0o1500 && empty('/tmp/.git')) }
    if (!tmpGitBefore.exists) assert.ok(await waitFor(() => !leftByRun(), 30000), 'a /tmp/.git was left behind')
  })
})
