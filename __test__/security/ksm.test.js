'use strict'
// Found by an attacker's review of the kernel surface (kern45): kernel same-page merging (KSM) is
// an oracle on the memory of every process whose pages are mergeable, whatever its namespace. ksmd
// merges identical pages of mappings marked mergeable (madvise MADV_MERGEABLE, or a whole process
// under prctl(PR_SET_MEMORY_MERGE), which a process keeps across fork and exec since Linux 6.10),
// and a process sees which of its own pages were merged (smaps' "KSM:" field). With KSM running
// (Proxmox and other VM hosts run it; systemd's MemoryKSM=yes marks a service), a default read-only
// run mapped 256 pages of a host process's page layout, one guess of its unknown byte each, and
// read the byte in about a second. And a host process under PR_SET_MEMORY_MERGE handed that to the
// command unasked: bwrap and the helper kept it across their execs.
//
// attacks/ksm.c: `probe` (the calls, one line each), `victim BYTE` (the host), `guess SECONDS`,
// `any PROGRAM...` (exec with PR_SET_MEMORY_MERGE on).

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync, spawn } = require('node:child_process')
const { run, show, tempTree, which, BASE } = require('./helpers')
const machineSetting = require('../fixtures/machine-setting')

const ROOT = path.resolve(__dirname, '../..')
const KSM_RUN = '/sys/kernel/mm/ksm/run'
const HAS_CC = which('cc') !== null
const skip = (!HAS_CC && 'no C compiler to build the attack') || (!fs.existsSync(KSM_RUN) && 'this kernel has no KSM')

const MODES = {
  'read-only': 'read-only',
  'workspace-write': 'workspace-write',
  'read-only with network: true': { mode: 'read-only', network: true },
}

let ksm // the compiled attack, readable inside every sandbox
before(() => {
  if (skip) return
  const dir = fs.mkdtempSync(path.join(BASE, 'sandspawn-ksm-'))
  fs.chmodSync(dir, 0o755)
  ksm = path.join(dir, 'ksm')
  execFileSync('cc', ['-O1', '-o', ksm, path.join(__dirname, 'attacks', 'ksm.c')], { stdio: 'pipe' })
})
after(() => ksm && fs.rmSync(path.dirname(ksm), { recursive: true, force: true }))

/** The "<name> <result>" lines of the attack. */
function results(stdout) {
  return Object.fromEntries(stdout.split('\n').filter(Boolean).map((l) => l.split(' ')).map(([k, ...v]) => [k, v.join(' ')]))
}

/** A spawnSandboxed run of `command` from a host Node process started under PR_SET_MEMORY_MERGE. */
function runUnderMergeAny(command, cwd, sandbox) {
  const child = `require(${JSON.stringify(ROOT)}).spawnSandboxed(${JSON.stringify(command)}, { cwd: ${JSON.stringify(cwd)}, timeout: 30000, sandbox: ${JSON.stringify(sandbox)} })
    .then((r) => process.stdout.write(JSON.stringify({ exitCode: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() })))`
  return JSON.parse(execFileSync(ksm, ['any', process.execPath, '-e', child], { encoding: 'utf8', env: process.env }).split('\n').filter((l) => l.startsWith('{')).pop())
}

describe('KSM cannot be used as an oracle on host memory', { concurrency: 2 }, () => {
  const EXPECT = {
    'madvise-mergeable': 'EINVAL', 'madvise-unmergeable': 'ok', 'madvise-dontneed': 'ok',
    'prctl-set-memory-merge': 'EINVAL', 'prctl-set-memory-merge-off': 'EINVAL', 'merge-any': 'off',
  }
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: memory cannot be made mergeable (EINVAL, as a kernel without KSM); other advice works`, { skip }, async (t) => {
      const host = results(execFileSync(ksm, ['probe'], { encoding: 'utf8' }))
      assert.equal(host['madvise-mergeable'], 'ok', 'the host can make memory mergeable (the test can tell)')
      const tree = tempTree(t)
      const r = await run([ksm, 'probe'], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      assert.deepEqual(results(r.stdout), EXPECT, show(r))
    })
  }

  test('a host process under PR_SET_MEMORY_MERGE does not hand it to the command', { skip }, async (t) => {
    const tree = tempTree(t)
    const host = results(execFileSync(ksm, ['any', ksm, 'probe'], { encoding: 'utf8' }))
    assert.equal(host.any, 'ok', 'the host process can set it (the test can tell)')
    for (const mode of ['read-only', 'workspace-write']) {
      const r = runUnderMergeAny([ksm, 'probe'], tree.ws, mode)
      assert.equal(r.exitCode, 0, `${mode}: ${JSON.stringify(r)}`)
      assert.equal(results(r.stdout)['merge-any'], 'off', `${mode}: ${JSON.stringify(r)}`)
    }
  })

  // KSM's switch is the machine's: turned on under the lock every suite takes for it, and set back
  // by the lock's holder (fixtures/machine-setting.js).
  const runSkip = skip || (process.getuid() !== 0 && 'root only (turns KSM on for the test)')
  test('with KSM running, the command cannot read a byte of a mergeable host process (root only)', { skip: runSkip, timeout: 180000 }, async (t) => {
    const tree = tempTree(t)
    const before = await machineSetting.hold(t, KSM_RUN)
    if (before.trim() !== '0') return t.skip(`KSM is the host's own (run=${before.trim()}): not touched`)
    const victim = spawn(ksm, ['victim', '203'], { stdio: ['ignore', 'pipe', 'inherit'] })
    t.after(() => victim.kill('SIGKILL'))
    await new Promise((resolve, reject) => {
      victim.stdout.on('data', (d) => { if (/^ready$/m.test(d.toString())) resolve() })
      victim.on('exit', () => reject(new Error('the victim ended')))
    })
    fs.writeFileSync(KSM_RUN, '1')
    // The control: the same guesses from a host process find the byte (a generous bound, not a timing).
    assert.equal(results(execFileSync(ksm, ['guess', '30'], { encoding: 'utf8' })).secret, '203', 'KSM merges here (the test can tell)')
    const r = await run([ksm, 'guess', '30'], { cwd: tree.ws, sandbox: 'read-only', timeout: 60000 })
    assert.equal(results(r.stdout).secret, 'none', show(r))
    const u = runUnderMergeAny([ksm, 'guess', '30'], tree.ws, 'read-only')
    assert.equal(results(u.stdout).secret, 'none', JSON.stringify(u))
  })
})
