'use strict'
// What judging a change set costs the host (attacker review, cross33). Every change a set holds
// is judged (`review::risks::Judge`) after the run that wrote it and again by every
// `listChangeSets`, `showChangeSet` and apply; a repository's configuration is what the command
// chooses, up to 1 MiB, read and parsed for the keys that run programs. Read once per
// repository, that cost is the repository's; read once per change inside it, or kept whole for
// every repository until the judging ends, it is the command's to multiply.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { changeSetStore, sandspawn, tempTree, show } = require('./helpers')

const { spawnSandboxed, discardChangeSet, listChangeSets } = sandspawn
changeSetStore('sandspawn-review-cost-')
const REVIEW = { mode: 'workspace-write', workspace: 'review' }

async function hostCpu(work) {
  const before = process.cpuUsage()
  const value = await work()
  const used = process.cpuUsage(before)
  return { value, ms: (used.user + used.system) / 1000 }
}

describe('judging a change set reads a repository\'s configuration once (attacker review, cross33)', () => {
  // A directory the set makes a git directory without naming it `.git` (`g`: HEAD, objects, refs
  // and a 1 MiB config of `fsmonitor` entries), with 3,000 empty files in g/objects: each of
  // them read and parsed g/config again (`Judge::in_git_dir`), 5.8 s of host CPU after the run
  // for 2,000 files (0.2 s of the command's) and as much for every later listChangeSets; with a
  // config of one line, 44 ms.
  test('3,000 files in a made git directory with a 1 MiB config: well under 2 s of host CPU for the run and for a listing', { timeout: 300000 }, async (t) => {
    const { ws } = tempTree(t)
    const py = `import os
os.makedirs("g/objects/aa"); os.makedirs("g/refs/heads")
open("g/HEAD", "w").write("ref: refs/heads/main\\n")
line = "\\tfsmonitor = x\\n"
open("g/config", "w").write("[core]\\n" + line * ((1 << 20) // len(line) - 1))
for i in range(3000): open("g/objects/aa/%d" % i, "w").close()`
    const run = await hostCpu(() => spawnSandboxed(['python3', '-c', py], { cwd: ws, timeout: 250000, sandbox: REVIEW }))
    const r = run.value
    assert.equal(r.exitCode, 0, show(r))
    t.after(() => discardChangeSet(r.changeSet.id))
    assert.ok(r.changeSet.counts.added > 3000, show(r))
    assert.ok(r.changeSet.hostRisks.some((h) => h.kind === 'git-directory-created' && h.path === path.join(ws, 'g') && /core\.fsmonitor/.test(h.detail)), show(r))
    const listed = await hostCpu(() => listChangeSets({ cwd: ws }))
    assert.equal(listed.value.length, 1)
    assert.ok(run.ms < 2000, `the run cost the host ${run.ms} ms of CPU`)
    assert.ok(listed.ms < 2000, `listing the set cost the host ${listed.ms} ms of CPU`)
  })

  // One new repository (`r/.git`) whose config names 10,000 distinct keys that run programs
  // (`alias.aN = !x`), and 20,000 files in its objects: each change inside it cloned the
  // repository's whole list of keys to name a few of them, 8.5 s of host CPU after the run (0.55 s
  // of the command's) and as much for every later listing.
  test('20,000 files in a new repository whose config names 10,000 program keys: well under 2 s of host CPU', { timeout: 300000 }, async (t) => {
    const { ws } = tempTree(t)
    const py = `import os
os.makedirs("r/.git/objects/aa")
open("r/.git/config", "w").write("[alias]\\n" + "".join("\\ta%d = !x\\n" % i for i in range(10000)))
for i in range(20000): open("r/.git/objects/aa/%d" % i, "w").close()`
    const run = await hostCpu(() => spawnSandboxed(['python3', '-c', py], { cwd: ws, timeout: 250000, sandbox: REVIEW }))
    const r = run.value
    assert.equal(r.exitCode, 0, show(r))
    t.after(() => discardChangeSet(r.changeSet.id))
    assert.ok(r.changeSet.hostRisks.some((h) => h.kind === 'repository-created' && h.path === path.join(ws, 'r/.git') && /alias\.a0/.test(h.detail)), show(r))
    assert.ok(run.ms < 2000, `the run cost the host ${run.ms} ms of CPU`)
  })

  // An existing repository's `.git` (review mode lets the run write it; apply holds it back) given
  // 2,000 names `x/configN` of one 1 MiB config, hard links (no disk): each name was read and
  // parsed (`Judge::git_dir_content`), 5.7 s of host CPU after the run (0.12 s of the command's)
  // and as much for every later listing.
  test('2,000 hard links of a 1 MiB config in an existing .git: well under 2 s of host CPU for the run and for a listing', { timeout: 300000 }, async (t) => {
    const { ws } = tempTree(t, { git: true })
    const py = `import os
line = "\\tfsmonitor = x\\n"
open("c", "w").write("[core]\\n" + line * ((1 << 20) // len(line) - 1))
os.makedirs(".git/x")
for i in range(2000): os.link("c", ".git/x/config%d" % i)`
    const run = await hostCpu(() => spawnSandboxed(['python3', '-c', py], { cwd: ws, timeout: 250000, sandbox: REVIEW }))
    const r = run.value
    assert.equal(r.exitCode, 0, show(r))
    t.after(() => discardChangeSet(r.changeSet.id))
    assert.ok(r.changeSet.hostRisks.some((h) => h.path === path.join(ws, '.git/x/config0') && /core\.fsmonitor/.test(h.detail)), show(r))
    const listed = await hostCpu(() => listChangeSets({ cwd: ws }))
    assert.equal(listed.value.length, 1)
    assert.ok(run.ms < 2000, `the run cost the host ${run.ms} ms of CPU`)
    assert.ok(listed.ms < 2000, `listing the set cost the host ${listed.ms} ms of CPU`)
  })

  // 1,000 new repositories sharing one 1 MiB config by hard links, each with an `.envrc` at its
  // top: what is guarded below each top (`Judge::guarded_of`) looked for `core.hooksPath` in every
  // entry of that config again for each repository, 12.7 s of host CPU after the run (0.15 s of the
  // command's; without the `.envrc`, 56 ms), and as much for every later listing. The bound is 3 s
  // or, on a slower machine, 40 times what the same repositories without their `.envrc` cost in
  // this process: a fixed 3 s failed on the forty-first session's machine, about twice as slow as
  // the one it was set on (4.8 s there, on main too).
  const sharedConfig = (envrc) => `import os
line = "\\tfsmonitor = x\\n"
open("c", "w").write("[core]\\n" + line * ((1 << 20) // len(line) - 1))
for i in range(1000):
    os.makedirs("r%d/.git" % i); os.link("c", "r%d/.git/config" % i)${envrc ? '; open("r%d/.envrc" % i, "w").close()' : ''}`
  const reviewed = async (t, py) => {
    const { ws } = tempTree(t)
    const run = await hostCpu(() => spawnSandboxed(['python3', '-c', py], { cwd: ws, timeout: 250000, sandbox: REVIEW }))
    assert.equal(run.value.exitCode, 0, show(run.value))
    t.after(() => discardChangeSet(run.value.changeSet.id))
    return { ...run, ws }
  }
  test('1,000 repositories sharing a 1 MiB config, each with a planted name at its top: well under 3 s of host CPU', { timeout: 300000 }, async (t) => {
    const plain = await reviewed(t, sharedConfig(false))
    const run = await reviewed(t, sharedConfig(true))
    const r = run.value
    assert.ok(r.changeSet.hostRisks.some((h) => h.kind === 'protected-name-created' && h.path === path.join(run.ws, 'r0/.envrc')), show(r))
    const bound = Math.max(3000, 40 * plain.ms)
    assert.ok(run.ms < bound, `the run cost the host ${run.ms} ms of CPU (bound ${Math.round(bound)} ms; ${Math.round(plain.ms)} ms without the .envrc)`)
  })

  // 1,000 new repositories whose config is one file of 10,000 distinct program keys, hard-linked
  // (no disk for the command, 0.15 s of its CPU): every repository's whole list of keys was kept
  // until the judging ended, and the host process grew by 570 MB (10,000 of them: ~6 GB), after
  // the run and again in every listing. Measured in a process of its own, by its peak RSS.
  test('1,000 repositories sharing a config of 10,000 program keys: the host does not keep every key of each', { timeout: 300000 }, (t) => {
    const { ws } = tempTree(t)
    const script = `
const s = require(${JSON.stringify(path.resolve(__dirname, '../..'))})
const peak = () => Number(require('node:fs').readFileSync('/proc/self/status', 'utf8').match(/VmHWM:\\s+(\\d+)/)[1]) * 1024
const py = ${JSON.stringify(`import os
open("c", "w").write("[alias]\\n" + "".join("\\ta%d = !x\\n" % i for i in range(10000)))
for i in range(1000):
    os.makedirs("r%d/.git" % i)
    os.link("c", "r%d/.git/config" % i)`)}
;(async () => {
  await s.spawnSandboxed(['true'], { cwd: process.argv[1], sandbox: 'read-only' })
  const before = peak()
  const r = await s.spawnSandboxed(['python3', '-c', py], { cwd: process.argv[1], timeout: 250000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  const risks = r.changeSet ? r.changeSet.hostRisks.filter((h) => h.kind === 'repository-created').length : -1
  if (r.changeSet) await s.discardChangeSet(r.changeSet.id)
  console.log(JSON.stringify({ exitCode: r.exitCode, risks, grew: peak() - before }))
})()`
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script, ws], { encoding: 'utf8', env: process.env, timeout: 280000 }).trim().split('\n').pop())
    assert.equal(out.exitCode, 0, JSON.stringify(out))
    assert.ok(out.risks > 0, JSON.stringify(out))
    assert.ok(out.grew < 200 * 1024 * 1024, `the host process grew by ${Math.round(out.grew / 1048576)} MB`)
    assert.ok(fs.existsSync(ws))
  })
})
