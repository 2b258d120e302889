'use strict'
// An attacker's review (shared20/hardlink_config.js, hardlink_named.js, hardlink_config_landlock.js):
// run 1 made a nested repository `sub` with a harmless `.git/config`, `.envrc` and
// `.vscode/tasks.json`, and second names (hard links) for them elsewhere in the workspace. In run 2
// those files are read-only, but a write through the other names landed in them: the host's next
// `git status` in `sub` ran the planted `core.fsmonitor`, and run 2's `hostRisks` and `notEnforced`
// said nothing. In the Landlock mode run 2 even wrote `sub/.git/config` by its own name: the
// workspace's top was granted entry by entry, and the rule on the other name's inode is a rule on
// the config's too. A hard link's other names cannot be found without a walk, so the bwrap mode
// says so before the run and reports a write after it; the Landlock mode grants no other name it
// knows of (the write through it fails too).

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree } = require('./helpers')

const ROOT = path.resolve(__dirname, '../..')

/** A run in a fresh node process (as the host's next one would be). */
function run(script, cwd, extra) {
  const options = { cwd, timeout: 20000, sandbox: 'workspace-write', linux: extra.linux }
  const js = `require(${JSON.stringify(ROOT)}).spawnSandboxed(['sh', '-c', ${JSON.stringify(script)}], ${JSON.stringify(options)})
    .then((r) => process.stdout.write(JSON.stringify(r)), (e) => process.stdout.write(JSON.stringify({ error: e.code, message: e.message })))`
  const r = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8', timeout: 60000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

const PLANT = `mkdir -p sub/.git/objects sub/.git/refs/heads && echo 'ref: refs/heads/main' > sub/.git/HEAD &&
  printf '[core]\\n\\trepositoryformatversion = 0\\n' > sub/.git/config && echo 'export A=1' > sub/.envrc &&
  ln sub/.git/config notes.txt && ln sub/.envrc envrc.txt && echo planted`
const WRITE = `printf '[core]\\n\\tfsmonitor = "touch PWNED; false"\\n' >> notes.txt; echo link:$?;
  echo 'touch PWNED' >> envrc.txt; echo named:$?; echo '#x' >> sub/.git/config; echo direct:$?`

describe("a repository's configuration and protected names that are hard links", () => {
  for (const mode of ['bwrap', 'landlock']) {
    test(`${mode}: said in notEnforced before the run; written through another name, a host risk (Landlock: not written)`, (t) => {
      const ws = tempTree(t).root
      const linux = mode === 'landlock' ? { allow: ['landlock'] } : undefined
      const r1 = run(PLANT, ws, { linux })
      assert.equal(r1.error, undefined, r1.message)
      if (mode === 'landlock' && r1.sandboxType !== 'landlock') return t.skip('Landlock is not available here')
      assert.equal(r1.stdout, 'planted\n', JSON.stringify(r1))
      const r2 = run(WRITE, ws, { linux })
      assert.equal(r2.error, undefined, r2.message)
      const config = path.join(ws, 'sub', '.git', 'config')
      const envrc = path.join(ws, 'sub', '.envrc')
      const notEnforced = r2.sandboxDetails.notEnforced.join('\n')
      const now = { config: fs.readFileSync(config, 'utf8'), envrc: fs.readFileSync(envrc, 'utf8') }
      assert.doesNotMatch(now.config, /#x/, 'the direct write failed')
      assert.match(r2.stdout, /direct:[1-9]/)
      for (const [p, planted] of [[config, /fsmonitor/.test(now.config)], [envrc, /PWNED/.test(now.envrc)]]) {
        assert.ok(notEnforced.includes(`${p} has 2 names`), `${p} in notEnforced: ${notEnforced}`)
        const risk = r2.hostRisks.find((h) => h.path === p)
        if (mode === 'landlock') {
          assert.equal(planted, false, `${p} not written in Landlock mode: ${JSON.stringify(now)}`)
          assert.equal(risk, undefined, JSON.stringify(r2.hostRisks))
        } else {
          assert.ok(planted, `${p} written through the other name: ${JSON.stringify(now)}`)
          assert.ok(risk, `${p} in hostRisks: ${JSON.stringify(r2.hostRisks, null, 1)}`)
          assert.match(risk.detail, /other names \(hard links\)/)
        }
      }
      if (mode === 'landlock') assert.match(r2.stdout, /link:[1-9]\nnamed:[1-9]/)
    })
  }
})

// The same review, for a file no list of the plan's holds (`.vscode/tasks.json` inside a read-only
// protected directory): in the Landlock mode a file with other names is granted no rule of its own
// at a directory granted entry by entry, so neither name is written.
test('landlock: a file of a read-only directory whose other name is at the top is written by neither name', (t) => {
  const ws = tempTree(t).root
  const linux = { allow: ['landlock'] }
  const plant = `mkdir -p sub/.git/objects sub/.git/refs sub/.vscode && echo 'ref: refs/heads/main' > sub/.git/HEAD &&
    echo '{}' > sub/.vscode/tasks.json && ln sub/.vscode/tasks.json tasks.txt && echo planted`
  const r1 = run(plant, ws, { linux })
  assert.equal(r1.error, undefined, r1.message)
  if (r1.sandboxType !== 'landlock') return t.skip('Landlock is not available here')
  assert.equal(r1.stdout, 'planted\n', JSON.stringify(r1))
  const r2 = run(`echo '{"runOn":"folderOpen"}' >> tasks.txt; echo link:$?; echo '#x' >> sub/.vscode/tasks.json; echo direct:$?`, ws, { linux })
  assert.equal(r2.error, undefined, r2.message)
  assert.match(r2.stdout, /link:[1-9]\ndirect:[1-9]/, JSON.stringify(r2))
  assert.equal(fs.readFileSync(path.join(ws, 'sub', '.vscode', 'tasks.json'), 'utf8'), '{}\n')
})

// An attacker's review of the fix above (fixes20/commondir.js, gitfile.js, bare.js): the same with
// a nested repository's `commondir` (where git takes the common directory, hence its config, from),
// its `.git` FILE (`gitdir: ../real`) and a bare repository's `config`, each with a second name in
// `d/`, a directory the Landlock mode grants whole: nothing was said, nothing reported, and the
// host's git ran what run 2 pointed them at.
const REPO = (dir) => `mkdir -p ${dir}/objects ${dir}/refs/heads && echo 'ref: refs/heads/main' > ${dir}/HEAD`
const SECOND_NAMES = [
  ['commondir', `${REPO('sub/.git')} && echo . > sub/.git/commondir && ln sub/.git/commondir d/notes.txt`, 'sub/.git/commondir', `echo /tmp/elsewhere > d/notes.txt`],
  ['.git file', `${REPO('real')} && echo 'gitdir: ../real' > sub/.git && ln sub/.git d/notes.txt`, 'sub/.git', `echo 'gitdir: /tmp/elsewhere' > d/notes.txt`],
  ['bare config', `${REPO('b.git')} && printf '[core]\\n\\tbare = true\\n' > b.git/config && ln b.git/config d/notes.txt`, 'b.git/config', `printf '[core]\\n\\thooksPath = /tmp/hk\\n' >> d/notes.txt`],
]

describe('a git pointer or a bare repository config that is a hard link', () => {
  for (const mode of ['bwrap', 'landlock']) {
    for (const [what, plant, target, write] of SECOND_NAMES) {
      test(`${mode}: ${what}: said before the run, a write through the other name reported`, (t) => {
        const ws = tempTree(t).root
        const linux = mode === 'landlock' ? { allow: ['landlock'] } : undefined
        const r1 = run(`mkdir -p sub d && ${plant} && echo planted`, ws, { linux })
        assert.equal(r1.error, undefined, r1.message)
        if (mode === 'landlock' && r1.sandboxType !== 'landlock') return t.skip('Landlock is not available here')
        assert.equal(r1.stdout, 'planted\n', JSON.stringify(r1))
        const p = path.join(ws, target)
        const before = fs.readFileSync(p, 'utf8')
        const r2 = run(`${write}; echo link:$?`, ws, { linux })
        assert.equal(r2.error, undefined, r2.message)
        const notEnforced = r2.sandboxDetails.notEnforced.join('\n')
        assert.ok(notEnforced.includes(`${p} has 2 names`), `${p} in notEnforced: ${notEnforced}`)
        const written = fs.readFileSync(p, 'utf8') !== before
        const risk = r2.hostRisks.find((h) => h.path === p)
        assert.equal(Boolean(risk), written, `${p} written: ${written}; hostRisks: ${JSON.stringify(r2.hostRisks, null, 1)}`)
        if (risk) assert.match(risk.detail, /other names \(hard links\)/)
      })
    }
  }
})

// An attacker's review of the fix above (fixes20/cfgsymlink.js): run 1 made `sub/.git/config` (or
// `commondir`) a symlink to `d/cfg` in the workspace; `d/cfg` was writable in run 2, which put
// `core.fsmonitor` in it (or pointed the common directory at its own). What a git directory's own
// files lead to is kept read-only as the files its configuration includes are (absent when missing).
const SYMLINKED = [
  ['config', `printf '[core]\\n\\trepositoryformatversion = 0\\n' > d/cfg && ln -s ../../d/cfg sub/.git/config`, `printf '\\tfsmonitor = "touch PWNED; false"\\n' >> d/cfg`],
  ['commondir', `printf '[core]\\n' > sub/.git/config && echo . > d/cfg && ln -s ../../d/cfg sub/.git/commondir`, `echo /tmp/elsewhere > d/cfg`],
  ['config.worktree', `printf '[core]\\n' > sub/.git/config && printf '[core]\\n' > d/cfg && ln -s ../../d/cfg sub/.git/config.worktree`, `printf '\\tfsmonitor = "touch PWNED; false"\\n' >> d/cfg`],
  ['config (dangling)', `ln -s ../../d/cfg sub/.git/config`, `printf '[core]\\n\\tfsmonitor = "touch PWNED; false"\\n' > d/cfg`],
]

describe("a git directory's own files that are symlinks into the workspace", () => {
  for (const mode of ['bwrap', 'landlock']) {
    for (const [what, plant, write] of SYMLINKED) {
      test(`${mode}: ${what}: where it leads is kept as it was`, (t) => {
        const ws = tempTree(t).root
        const linux = mode === 'landlock' ? { allow: ['landlock'] } : undefined
        const r1 = run(`mkdir -p sub/.git/objects sub/.git/refs/heads d && echo 'ref: refs/heads/main' > sub/.git/HEAD && ${plant} && echo planted`, ws, { linux })
        assert.equal(r1.error, undefined, r1.message)
        if (mode === 'landlock' && r1.sandboxType !== 'landlock') return t.skip('Landlock is not available here')
        assert.equal(r1.stdout, 'planted\n', JSON.stringify(r1))
        const cfg = path.join(ws, 'd', 'cfg')
        const read = () => (fs.existsSync(cfg) ? fs.readFileSync(cfg, 'utf8') : null)
        const before = read()
        const r2 = run(`${write}; echo w:$?`, ws, { linux })
        assert.equal(r2.error, undefined, r2.message)
        assert.equal(read(), before, `d/cfg as it was: ${JSON.stringify(r2)}`)
      })
    }
  }
})

// An attacker's review (fix21/gitlink.js): `sub/.git` a SYMLINK to a `gitdir:` file (`sub/gf`:
// `gitdir: node_modules/g`). Git reads the file through the link and takes a relative path from
// the directory holding `.git`: the host's git used `sub/node_modules/g`. The host followed the
// link to the file and stopped there, so the git directory it names was kept only if the walk found
// it, and the walk skips node_modules: run 2 put `core.fsmonitor` in its config, nothing said it.
// Made by run 1 or on the host before the runs, in both modes.
const LINKED_GITFILE = `${REPO('sub/node_modules/g')} && printf '[core]\\n\\trepositoryformatversion = 0\\n' > sub/node_modules/g/config &&
  printf 'gitdir: node_modules/g\\n' > sub/gf && ln -s gf sub/.git && echo planted`

describe('a .git symlink to a gitdir: file', () => {
  for (const mode of ['bwrap', 'landlock']) {
    for (const by of ['run 1', 'the host']) {
      test(`${mode}: made by ${by}: the git directory the file names stays as it was`, (t) => {
        const ws = tempTree(t).root
        const linux = mode === 'landlock' ? { allow: ['landlock'] } : undefined
        if (by === 'the host') {
          assert.equal(spawnSync('sh', ['-c', LINKED_GITFILE], { cwd: ws, encoding: 'utf8' }).stdout, 'planted\n')
        } else {
          const r1 = run(LINKED_GITFILE, ws, { linux })
          assert.equal(r1.error, undefined, r1.message)
          if (mode === 'landlock' && r1.sandboxType !== 'landlock') return t.skip('Landlock is not available here')
          assert.equal(r1.stdout, 'planted\n', JSON.stringify(r1))
        }
        const gitDir = path.join(ws, 'sub', 'node_modules', 'g')
        const git = spawnSync('git', ['rev-parse', '--absolute-git-dir'], { cwd: path.join(ws, 'sub'), encoding: 'utf8' })
        if (git.status === 0) assert.equal(git.stdout.trim(), gitDir, "git's own reading of the link")
        const config = path.join(gitDir, 'config')
        const before = fs.readFileSync(config, 'utf8')
        const r2 = run(`printf '[core]\\n\\tfsmonitor = "touch PWNED; false"\\n' >> ${JSON.stringify(config)}; echo w:$?`, ws, { linux })
        assert.equal(r2.error, undefined, r2.message)
        if (mode === 'landlock' && r2.sandboxType !== 'landlock') return t.skip('Landlock is not available here')
        assert.equal(fs.readFileSync(config, 'utf8'), before, `the config as it was: ${JSON.stringify(r2)}`)
        assert.match(r2.stdout, /w:[1-9]/)
      })
    }
  }
})

// An attacker's review (rfix21/gitlink_chain.js, gitlink_top.js): a symlink ON THE WAY to a
// repository's git directory (a link of a `.git` symlink chain, a directory symlink on a `gitdir:`
// path) in the workspace. The host kept the git directory the way led to read-only, but not the
// way: run 2 repointed a link to a git directory of its own with `core.fsmonitor`, the host's next
// `git status` ran it, and nothing was said. Each such link is held for the run and put back after
// it, with a host risk (the Landlock mode keeps it unwritten). `[what, plant, repoint]`, in `sub`.
const EVIL = (dir) => `${REPO(dir)} && printf '[core]\\n\\tfsmonitor = "touch PWNED; false"\\n' > ${dir}/config`
const WAYS = [
  ['a link of a .git chain', `${REPO('node_modules/g')} && printf 'gitdir: node_modules/g\\n' > gf && ln -s gf lnkf && ln -s lnkf .git`,
    `${EVIL('node_modules/evil')} && printf 'gitdir: node_modules/evil\\n' > gf2`, `ln -sfn gf2 lnkf`, 'lnkf'],
  ['a link of a .git chain in node_modules', `${REPO('node_modules/g')} && printf 'gitdir: node_modules/g\\n' > gf && mkdir -p node_modules/l && ln -s ../../gf node_modules/l/link && ln -s node_modules/l/link .git`,
    `${EVIL('node_modules/evil')} && printf 'gitdir: node_modules/evil\\n' > gf2`, `ln -sfn ../../gf2 node_modules/l/link`, 'node_modules/l/link'],
  ['a directory symlink on the way to the gitdir: file', `${REPO('node_modules/g')} && mkdir -p node_modules/real && printf 'gitdir: node_modules/g\\n' > node_modules/real/gf && ln -s real node_modules/d && ln -s node_modules/d/gf .git`,
    `${EVIL('node_modules/evil')} && mkdir -p node_modules/real2 && printf 'gitdir: node_modules/evil\\n' > node_modules/real2/gf`, `ln -sfn real2 node_modules/d`, 'node_modules/d'],
  ['a directory symlink on a gitdir: path', `mkdir -p node_modules/gg && ${REPO('node_modules/gg/g')} && ln -s gg node_modules/p && printf 'gitdir: node_modules/p/g\\n' > .git`,
    `mkdir -p node_modules/gg2 && ${EVIL('node_modules/gg2/g')}`, `ln -sfn gg2 node_modules/p`, 'node_modules/p'],
  ['a symlink a .git symlink leads through', `mkdir -p node_modules/gg && ${REPO('node_modules/gg/g')} && ln -s gg/g node_modules/p && ln -s node_modules/p .git`,
    `mkdir -p node_modules/gg2 && ${EVIL('node_modules/gg2/g')}`, `ln -sfn gg2/g node_modules/p`, 'node_modules/p'],
  ['the .git symlink itself', `${REPO('node_modules/g')} && printf 'gitdir: node_modules/g\\n' > gf && ln -s gf .git`,
    `${EVIL('node_modules/evil')} && printf 'gitdir: node_modules/evil\\n' > gf2`, `ln -sfn gf2 .git`, '.git'],
]

describe("a symlink on the way to a repository's git directory", () => {
  for (const mode of ['bwrap', 'landlock']) {
    for (const [what, plant, evil, repoint, link] of WAYS) {
      for (const where of ['sub', '.']) {
        test(`${mode}: ${what} (repository at ${where === '.' ? 'the top' : where}): put back, and said`, (t) => {
          const ws = tempTree(t).root
          const linux = mode === 'landlock' ? { allow: ['landlock'] } : undefined
          const top = path.join(ws, where)
          fs.mkdirSync(top, { recursive: true })
          assert.equal(spawnSync('sh', ['-c', `${plant} && ${evil} && echo planted`], { cwd: top, encoding: 'utf8' }).stdout, 'planted\n')
          const gitDir = () => spawnSync('git', ['rev-parse', '--absolute-git-dir'], { cwd: top, encoding: 'utf8' }).stdout.trim()
          const before = gitDir()
          assert.ok(before.startsWith(top), before)
          const r2 = run(`cd ${where} && ${repoint}; echo w:$?`, ws, { linux })
          assert.equal(r2.error, undefined, r2.message)
          if (mode === 'landlock' && r2.sandboxType !== 'landlock') return t.skip('Landlock is not available here')
          assert.equal(gitDir(), before, `the host's git uses the git directory it used: ${JSON.stringify(r2)}`)
          if (mode === 'bwrap') {
            const said = (r2.hostRisks || []).some((h) => h.path === path.join(top, link) && /put back|undone/.test(h.detail))
            assert.ok(said, `${link} put back and said: ${JSON.stringify(r2.hostRisks, null, 1)}`)
          }
        })
      }
    }
  }
})

describe('many repositories whose configuration and hooks are hard links (attacker review, cross32)', () => {
  // Run 1 made 6,000 repositories, each `.git/config` and `.git/hooks/pre-commit` a name of one
  // file. Every later run of the workspace listed each in notEnforced (6,000 lines, 2.2 MB of
  // every result) and kept each once by comparing it with every one kept before: 2.4 s of host CPU
  // and 9 s of latency for each `true` (3,000: 0.57 s), quadratic, for as long as they are there.
  test('6,000 of them: every later run says a bounded notEnforced and costs the host little', { timeout: 300000 }, async (t) => {
    const { sh } = require('./helpers')
    const tree = tempTree(t)
    fs.writeFileSync(path.join(tree.ws, 'cfg'), '[core]\n\tbare = false\n')
    fs.writeFileSync(path.join(tree.ws, 'hook'), '#!/bin/sh\n')
    fs.writeFileSync(path.join(tree.ws, 'head'), 'ref: refs/heads/main\n')
    const py = `import os
for i in range(6000):
    d = "r%d/.git" % i
    for sub in ("refs", "objects", "hooks"):
        os.makedirs(d + "/" + sub)
    os.link("cfg", d + "/config")
    os.link("hook", d + "/hooks/pre-commit")
    os.link("head", d + "/HEAD")`
    const made = await sh(`python3 -c '${py}'`, { cwd: tree.ws, sandbox: 'workspace-write', timeout: 200000 })
    assert.equal(made.exitCode, 0, made.stderr)
    const bound = 1500 * (await require('./helpers').machineSlowness(t))
    for (const which of ['first', 'second']) {
      const before = process.cpuUsage()
      const r = await sh('true', { cwd: tree.ws, sandbox: 'workspace-write', timeout: 200000 })
      const used = process.cpuUsage(before)
      const ms = (used.user + used.system) / 1000
      assert.equal(r.exitCode, 0, r.stderr)
      const hard = r.sandboxDetails.notEnforced.filter((n) => /hard links/.test(n))
      assert.ok(hard.length > 0 && hard.length <= 40, `the ${which} later run said ${hard.length} notEnforced lines of hard links`)
      assert.ok(hard.some((n) => /\b\d+ more\b/.test(n)), 'the rest are counted')
      assert.ok(ms < bound, `the ${which} later run cost the host ${ms} ms of CPU (bound ${Math.round(bound)} ms)`)
    }
  })
})
