'use strict'
// No zombies (issue 23): a host that is PID 1 of its PID namespace (a container without --init)
// adopts what bwrap and killed process groups orphan; sandspawn must reap exactly those, and never
// a child_process child. fixtures/zombie-host.js does 300 mixed runs next to a child_process loop.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { execFile, spawnSync } = require('node:child_process')

const HOST = path.join(__dirname, 'fixtures', 'zombie-host.js')
const RUNS = 300

function runHost(argv) {
  return new Promise((resolve, reject) => {
    execFile(argv[0], argv.slice(1), { timeout: 180000, killSignal: 'SIGKILL', maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${argv.join(' ')} failed: ${err.message}\nstdout: ${stdout}\nstderr: ${stderr}`))
      resolve(JSON.parse(stdout.trim().split('\n').pop()))
    })
  })
}

function check(report, { pid1 }) {
  assert.equal(report.runs, RUNS)
  assert.deepEqual(report.failures, [], 'every run ended as expected')
  if (pid1) assert.equal(report.pid, 1, 'the host ran as PID 1 of its namespace')
  assert.ok(report.zombies <= 2, `${report.zombies} zombie children of the host after ${RUNS} runs: ${JSON.stringify(report.zombieList)}`)
  // child_process children are never reaped by sandspawn: each 'exit' fired with its own code.
  assert.ok(report.host.started > 0)
  assert.equal(report.host.exited, report.host.started)
  assert.deepEqual(report.host.wrong, [])
}

const canUnshare = spawnSync('unshare', ['--fork', '--pid', '--mount-proc', 'true']).status === 0

test(`Node as PID 1 (unshare --pid): ${RUNS} mixed runs leave at most 2 zombies, child_process exits intact`, { skip: !canUnshare && 'needs `unshare --pid --mount-proc` (root or user namespaces)' }, async () => {
  check(await runHost(['unshare', '--fork', '--pid', '--mount-proc', '--kill-child', process.execPath, HOST, String(RUNS)]), { pid1: true })
})

test(`ordinary host process: ${RUNS} mixed runs leave at most 2 zombies, child_process exits intact`, async () => {
  check(await runHost([process.execPath, HOST, String(RUNS)]), { pid1: false })
})
