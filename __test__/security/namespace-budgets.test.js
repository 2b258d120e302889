'use strict'
// The bounds the helper sets in the sandbox's own namespaces, over what no rlimit counts.
//
// System V semaphores and message queues in the sandbox's own IPC namespace are kernel memory no
// rlimit counts (README, "Per-user kernel budgets"). Found by an attacker's review (kern41): a new
// IPC namespace's defaults let a default read-only run under `limits.memory: 64 MiB` hold 2 GiB of
// semaphores and 2 GiB of empty messages (the host's SUnreclaim grew by as much) and far more was
// allowed (61 GiB and 31 GiB). The helper now bounds both in the sandbox's namespace.
//
// The host's pids (kernel.pid_max, one budget for the whole machine): found by the same review, a
// default run's threads took every pid the host had left (root is not bounded by RLIMIT_NPROC, and
// limits.processes is no default). Since Linux 6.14 the helper bounds the sandbox's pid namespace.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { run, show, tempTree, which, BASE } = require('./helpers')

const skip = which('cc') === null && 'no C compiler to build the attack'
let bin
before(() => {
  if (skip) return
  bin = fs.mkdtempSync(path.join(BASE, 'sandspawn-sysv-'))
  fs.chmodSync(bin, 0o755)
  execFileSync('cc', ['-O1', '-o', path.join(bin, 'sysv-kernel-memory'), path.join(__dirname, 'attacks', 'sysv-kernel-memory.c')], { stdio: 'pipe' })
  execFileSync('cc', ['-O1', '-pthread', '-o', path.join(bin, 'tasks'), path.join(__dirname, 'attacks', 'tasks.c')], { stdio: 'pipe' })
})
after(() => bin && fs.rmSync(bin, { recursive: true, force: true }))

const results = (stdout) => Object.fromEntries(stdout.split('\n').filter(Boolean).map((l) => l.split(' ')))

// 32,000 semaphores (2 MiB) and 32 queues of at most 16,384 messages (32 MiB of empty ones).
const MAX_SEMS = 32000
const MAX_MESSAGES = 32 * 16384

describe('System V semaphores and messages take a bounded share of kernel memory (kern41)', { concurrency: 2 }, () => {
  for (const [name, sandbox] of Object.entries({ 'read-only': 'read-only', 'workspace-write': 'workspace-write' })) {
    test(`${name}: 64 MiB of each is refused past the bound; a few sets and queues still work`, { skip }, async (t) => {
      const tree = tempTree(t)
      const r = await run([path.join(bin, 'sysv-kernel-memory'), '64'], { cwd: tree.ws, sandbox, limits: { memory: 64 * 1024 * 1024 }, timeout: 60000 })
      assert.equal(r.exitCode, 0, show(r))
      const got = results(r.stdout)
      assert.ok(Number(got.sems) >= 250, `ordinary semaphore sets must still work\n${show(r)}`)
      assert.ok(Number(got.sems) <= MAX_SEMS, `semaphores: ${got.sems} (${got['sem-stop']})\n${show(r)}`)
      assert.equal(got['sem-stop'], 'ENOSPC', show(r))
      assert.ok(Number(got.messages) >= 16384, `ordinary message queues must still work\n${show(r)}`)
      assert.ok(Number(got.messages) <= MAX_MESSAGES, `messages: ${got.messages} (${got['msg-stop']})\n${show(r)}`)
      assert.equal(got['msg-stop'], 'ENOSPC', show(r))
      // Nor can the command raise the bounds again (its /proc/sys is read-only, and it does not own
      // the namespace).
      const again = await run(['sh', '-c', 'echo 32000 > /proc/sys/kernel/msgmni; echo "1000 1024000000 500 32000" > /proc/sys/kernel/sem; cat /proc/sys/kernel/msgmni /proc/sys/kernel/sem'], { cwd: tree.ws, sandbox })
      assert.match(again.stdout, /^32\n\d+\s+32000\s+\d+\s+128\n$/, show(again))
    })
  }
})

// Since 6.14 a pid namespace keeps a pid_max of its own (the helper's `task_budget`).
const [major, minor] = require('node:os').release().split('.').map(Number)
const perNamespace = major > 6 || (major === 6 && minor >= 14)
const MAX_TASKS = 8192

describe('a run takes a bounded share of the host\'s pids (kern41)', () => {
  const pidSkip = skip || (!perNamespace && 'this kernel keeps no pid_max per pid namespace (Linux 6.14+): not bounded, as the README says')
  for (const [name, sandbox] of Object.entries({ 'read-only': 'read-only', 'workspace-write': 'workspace-write' })) {
    test(`${name}: ${MAX_TASKS + 500} threads are refused past ${MAX_TASKS} tasks; the bound cannot be raised`, { skip: pidSkip, timeout: 120000 }, async (t) => {
      const tree = tempTree(t)
      const r = await run([path.join(bin, 'tasks'), String(MAX_TASKS + 500)], { cwd: tree.ws, sandbox, timeout: 90000 })
      assert.equal(r.exitCode, 0, show(r))
      const got = results(r.stdout)
      assert.ok(Number(got.tasks) >= 1000, `ordinary thread counts must still work\n${show(r)}`)
      assert.ok(Number(got.tasks) < MAX_TASKS, `threads: ${got.tasks} (${got.stop})\n${show(r)}`)
      assert.equal(got.stop, 'EAGAIN', show(r))
      const again = await run(['sh', '-c', 'echo 4194304 > /proc/sys/kernel/pid_max; cat /proc/sys/kernel/pid_max'], { cwd: tree.ws, sandbox })
      assert.equal(again.stdout, `${MAX_TASKS}\n`, show(again))
    })
  }
})
