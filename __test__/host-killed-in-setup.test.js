'use strict'
// A host killed by a signal (SIGKILL, an OOM kill) while a bwrap run is being set up takes the run
// with it: nothing of the sandbox (its init, the command) outlives the host. bwrap's init arms its
// own parent-death signal only after it forked the command, so a bwrap killed (by its
// --die-with-parent) during its setup left the init and the command running, re-parented to init.
// Each host here does one run to warm up, says it asks for the next one, and is SIGKILLed 0-40 ms
// later; the command sleeps, then writes a marker. None may survive, no marker may appear.
// Runs with whichever bwrap is in use (the system's, or the bundled one under
// .ci/without-system-bwrap).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')

const ROOT = path.join(__dirname, '..')
const HOSTS = 30
const CONCURRENCY = 3
const MAX_DELAY_MS = 40
const COMMAND_SLEEP_S = 1

const HOST = `
const { spawnSandboxed } = require(${JSON.stringify(ROOT)})
const [dir, tag] = process.argv.slice(1)
const opts = { sandbox: 'workspace-write', cwd: dir }
spawnSandboxed(['true'], opts).then((r) => {
  if (r.sandboxType !== 'bwrap' || r.exitCode !== 0) { console.log('unusable ' + JSON.stringify(r)); process.exit(3) }
  process.stdout.write('asking\\n')
  spawnSandboxed(['sh', '-c', 'sleep ${COMMAND_SLEEP_S}; echo survived > "marker-$1"', 'sh', tag], opts)
})
`

/** Pids whose argv holds `tag`. */
function processesTagged(tag) {
  const found = []
  for (const ent of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(ent)) continue
    try {
      if (fs.readFileSync(`/proc/${ent}/cmdline`, 'utf8').includes(tag)) found.push(Number(ent))
    } catch {}
  }
  return found
}

/** Start one host, SIGKILL it `delay` ms after it says it asks for its run; resolves once it is dead. */
function killedHost(dir, tag, delay) {
  return new Promise((resolve, reject) => {
    const host = spawn(process.execPath, ['-e', HOST, dir, tag], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    host.stdout.on('data', (d) => {
      out += d
      if (out.includes('asking\n')) setTimeout(() => host.kill('SIGKILL'), delay)
    })
    host.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`host ended by ${code ?? signal}, not killed: ${out}`))))
  })
}

test(`${HOSTS} hosts SIGKILLed 0-${MAX_DELAY_MS} ms after asking for a bwrap run leave nothing running`, { timeout: 120000 }, async (t) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-host-killed-')))
  const prefix = `ss-hkis-${process.pid}-`
  t.after(() => {
    // Also the idle bwraps of containers/bubblewrap#633 (a host killed between bwrap's clone and
    // its go-ahead: the command never ran, bwrap waits forever, its parent init); they name the
    // run's directory, not the tag. Left by this test before (1 in about 390 killed hosts).
    for (const pid of [...processesTagged(prefix), ...processesTagged(dir)]) try { process.kill(pid, 'SIGKILL') } catch {}
    fs.rmSync(dir, { recursive: true, force: true })
  })
  const delays = Array.from({ length: HOSTS }, (_, i) => Math.round((i * MAX_DELAY_MS) / (HOSTS - 1)))
  let next = 0
  const worker = async () => {
    while (next < HOSTS) {
      const i = next++
      await killedHost(dir, `${prefix}${i}`, delays[i])
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  // Long enough for a surviving command to write its marker; a killed one never does.
  await new Promise((r) => setTimeout(r, (COMMAND_SLEEP_S + 1) * 1000))
  const survivors = processesTagged(prefix)
  const markers = fs.readdirSync(dir).filter((f) => f.startsWith('marker-'))
  const runs = new Set([...markers.map((f) => f.slice('marker-'.length)), ...survivors.map((pid) => {
    try { return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').match(new RegExp(`${prefix}\\d+`))[0] } catch { return `pid ${pid}` }
  })])
  assert.deepEqual([...runs], [], `${runs.size} of ${HOSTS} killed hosts' runs outlived them (markers: ${markers.length}, processes still running: ${survivors.length})`)
})
