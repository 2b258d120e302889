'use strict'
// The plan version of host-killed-in-setup.test.js: a program that spawns a plan
// (buildSandboxCommand) and is killed by a signal while the plan's bwrap sets the sandbox up takes
// the plan's sandbox with it. bwrap's init arms its own parent-death signal only after it forked
// the command, so a plan's bwrap killed (by its --die-with-parent) during its setup left the init
// and the command running, re-parented to init (found by an attacker's review, revo41: 17 of 30
// with the system bwrap 0.8, 23 of 30 with the bundled 0.12). Each spawner here runs one plan to
// warm up, spawns the next one with node's child_process, says so, and is SIGKILLed 0-40 ms later;
// the command sleeps, then writes a marker. None may survive, no marker may appear.
// A plan's bwrap carries the command in its arguments, so the sandbox's first process left idle
// by containers/bubblewrap#633 (a spawner killed between bwrap's clone and its go-ahead: it waits
// for that forever, before it forked anything) is tagged too; it ran nothing of the command and
// is told apart (bwrap, pid 1 of its own namespace, no child), counted in a diagnostic and killed.
// tmp: 'private' keeps /tmp out of the plans' writable roots: other processes' runs there remove
// placeholders they find (seen under load: a warm-up plan failed its setup, 125, a placeholder
// in /tmp removed between the helper in front of bwrap making it and the helper inside covering it).
// Runs with whichever bwrap is in use (the system's, or the bundled one under
// .ci/without-system-bwrap).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { SHAPE, ROOT, runDir, killAll, processesTagged, runsLeft, cleanUp } = require('./fixtures/killed-in-setup.js')

const SPAWNER = `
const { buildSandboxCommand } = require(${JSON.stringify(ROOT)})
const { spawn } = require('node:child_process')
const [dir, tag] = process.argv.slice(1)
const opts = { sandbox: { mode: 'workspace-write', tmp: 'private' }, cwd: dir }
function run(command) {
  const plan = buildSandboxCommand(command, opts)
  return spawn(plan.program, plan.args, { argv0: plan.argv0, cwd: plan.cwd, env: plan.env, stdio: 'ignore' })
}
run(['true']).on('exit', (code, signal) => {
  if (code !== 0) { console.log('unusable: the warm-up plan ended by ' + (code ?? signal)); process.exit(3) }
  run(['sh', '-c', 'sleep ${SHAPE.commandSleep}; echo survived > "marker-$1"', 'sh', tag]).on('spawn', () => process.stdout.write('spawned\\n'))
})
`

/** Whether `pid` is a sandbox's first process that never forked: bwrap (the bundled one is sandspawn-bwrap), pid 1 of its namespace, no child. */
function idleBwrap(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
    const nspid = status.match(/^NSpid:\s*(.*)$/m)[1].trim().split(/\s+/)
    const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim()
    return /^Name:\s*(sandspawn-)?bwrap$/m.test(status) && nspid.length > 1 && nspid[nspid.length - 1] === '1' && children === ''
  } catch {
    return false
  }
}

test(`${SHAPE.count} spawners SIGKILLed 0-${SHAPE.maxDelay} ms after spawning a bwrap plan leave nothing running`, { timeout: 120000 }, async (t) => {
  const dir = runDir('ss-spawner-killed-')
  const prefix = `ss-skis-${process.pid}-`
  t.after(() => cleanUp(dir, prefix))
  await killAll({ script: SPAWNER, said: 'spawned\n', dir, prefix })
  // Long enough for a surviving command to write its marker; a killed one never does.
  await new Promise((r) => setTimeout(r, (SHAPE.commandSleep + 1) * 1000))
  const tagged = processesTagged(prefix)
  const idle = tagged.filter(idleBwrap)
  const survivors = tagged.filter((pid) => !idle.includes(pid))
  t.diagnostic(`idle bwraps of containers/bubblewrap#633 (nothing of the command ran; killed): ${idle.length}`)
  const { runs, markers } = runsLeft(dir, prefix, survivors)
  const what = survivors.map((pid) => { try { return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(' ').slice(0, 4).join(' ') } catch { return `${pid} gone` } })
  assert.deepEqual(runs, [], `${runs.length} of ${SHAPE.count} killed spawners' plans outlived them (markers: ${markers.length}, processes still running: ${survivors.length}: ${what.join(', ')})`)
})
