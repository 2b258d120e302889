'use strict'
// Found by an attacker's review (fix30): fix29 bounded one link's judging (`hook_links::resolve`)
// to 4,096 steps, the symlinks each of its walks follows counted, but nothing bounded all of them:
// a run judges up to 10,000 links it made (`detect::links_made`), a change set as many
// (`review::risks::link_out`), each within its own 4,096 steps and git's discovery up to 256
// directories above where it leads. A run making 10,000 links `ls/lN -> ../M/yN` (`M -> L/L/`,
// `L` 800 `d/../` pairs: 3,200 steps each, judged whole) cost the host 25 s of CPU, its result
// 41 s late; 2,000 links to a directory 250 levels deep cost 7 s; in review mode every later
// `listChangeSets` paid it again (5 s of CPU for 2,000 links), all with nothing said.
// CPU time, not wall time (the machine is shared).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { tempTree, show, which, machineSlowness } = require('./helpers')
const { spawnSandboxed, listChangeSets, discardChangeSet } = require('../..')

const NO_PYTHON = !which('python3') && 'no python3'
const LINKS = 2000

/** A python program making `links` links in `ls/`, each to `to(i)`, after `setup`. */
function linksProgram(setup, to, links = LINKS) {
  return [
    'import os',
    ...setup,
    "os.mkdir('ls')",
    `for i in range(${links}): os.symlink(${to}, 'ls/l%d' % i)`,
  ].join('\n')
}

/** `f()`'s result, and the CPU time this process spent while it ran (ms). */
async function cpuOf(f) {
  const before = process.cpuUsage()
  const out = await f()
  const used = process.cpuUsage(before)
  return { out, ms: (used.user + used.system) / 1000 }
}

/** The scan-incomplete risk that says the links past the budget were not judged. */
function saysUnjudged(risks) {
  return risks.some((h) => h.kind === 'scan-incomplete' && /not judged/.test(h.detail))
}

// The links to a directory 250 levels deep are 10,000 (as many as a run's judgement takes), not
// 2,000, and their bound 3 s: the fixed judgement spends its whole budget on them either way (1.0 s
// of the host's CPU for 2,000, 1.1 to 1.2 s for 10,000, at a load of 12 to 19 on 2 cores; the same
// tree made with files instead of links: 15 to 40 ms), which left 2,000 links a factor 2 under their
// 2 s bound on a loaded machine; and with the budget taken out (planted::links_budget::STEPS
// 400,000,000, the looked-at directories still shared) 2,000 links cost 1.3 s, under that bound,
// while 10,000 cost 6.2 s.
for (const [what, setup, to, links, boundMs] of [
  ['whose ways take 3,200 steps each', ["os.mkdir('d')", "os.symlink('d/../' * 800 + '.', 'L')", "os.symlink('L/L/', 'M')"], "'../M/y%d' % i", LINKS, 2000],
  ['to a directory 250 levels deep', ["deep = '/'.join(['d'] * 250)", 'os.makedirs(deep)'], "'../' + deep", 10_000, 3000],
]) {
  test(`a run making ${links} links ${what}: judged in bounded host CPU, those past the bound said`, { skip: NO_PYTHON, timeout: 120_000 }, async (t) => {
    const { ws } = tempTree(t)
    const { out: r, ms } = await cpuOf(() => spawnSandboxed(['python3', '-c', linksProgram(setup, to, links)], { cwd: ws, sandbox: 'workspace-write', timeout: 60_000 }))
    assert.equal(r.exitCode, 0, show(r))
    assert.ok(ms < boundMs, `the host spent ${ms} ms of CPU on the run (judging its links)`)
    assert.ok(saysUnjudged(r.hostRisks), `the links not judged are said: ${JSON.stringify(r.hostRisks.slice(0, 3))}`)
  })
}

test(`a change set making ${LINKS} links whose ways take 3,200 steps each (through /tmp, on the host): each listChangeSets judges them in bounded host CPU`, { skip: NO_PYTHON, timeout: 120_000 }, async (t) => {
  const { ws } = tempTree(t)
  const tmp = fs.mkdtempSync(path.join('/tmp', 'sandspawn-links-cost-'))
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }))
  const setup = [`os.mkdir('${tmp}/d')`, `os.symlink('d/../' * 800 + '.', '${tmp}/L')`, `os.symlink('L/L/', '${tmp}/M')`]
  const r = await spawnSandboxed(['python3', '-c', linksProgram(setup, `'${tmp}/M/y%d' % i`)], { cwd: ws, sandbox: { mode: 'workspace-write', workspace: 'review' }, timeout: 60_000 })
  if (r.changeSet) t.after(() => discardChangeSet(r.changeSet.id).catch(() => {}))
  assert.equal(r.exitCode, 0, show(r))
  assert.ok(r.changeSet, show(r))
  assert.ok(fs.existsSync(path.join(tmp, 'M')), 'the chain is on the host, where the set\'s links are judged')
  const { out: sets, ms } = await cpuOf(() => listChangeSets({ cwd: ws }))
  const set = sets.find((s) => s.id === r.changeSet.id)
  assert.ok(set, JSON.stringify(sets.map((s) => s.id)))
  const bound = 2000 * (await machineSlowness(t))
  assert.ok(ms < bound, `the host spent ${ms} ms of CPU on one listChangeSets (judging the set's links again; bound ${Math.round(bound)} ms)`)
})
