'use strict'
// Resource limits (issue 19) on the real bwrap: each scenario of fixtures/limits-scenarios.js as
// this process's user (root here) and again as an unprivileged user through `setpriv`, where the
// process limit must be enforced instead of refused.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')

const { spawnSandboxed, startSandboxed, buildSandboxCommand, sandboxCapabilities } = require('..')
const { scenarios, MiB } = require('./fixtures/limits-scenarios')
const { tmpDir } = require('./fixtures/spawn-helpers')
const { stagedCheckout, cannotRunAs, asUser } = require('./fixtures/other-user')

const EMFILE = 24
const EAGAIN = 11
// A uid no other test uses, so that "nothing left behind" can count its processes.
const UID = 64123
const isRoot = process.getuid() === 0

/** Runs a scenario as UID (a fresh directory it owns), resolving with its facts. */
function unprivileged(name) {
  const dir = tmpDir('sandspawn-limits-user-')
  fs.chownSync(dir, UID, UID)
  // The package as UID can read it, wherever this checkout is (see fixtures/other-user.js).
  const script = path.join(stagedCheckout(), '__test__', 'fixtures', 'limits-scenarios.js')
  const [cmd, args] = asUser(UID, [script, name, dir])
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { cwd: dir, env: { PATH: process.env.PATH, HOME: dir }, maxBuffer: 16 * MiB, timeout: 120000 }, (err, stdout, stderr) => {
      fs.rmSync(dir, { recursive: true, force: true })
      if (err) return reject(new Error(`${name} as uid ${UID} failed: ${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
}

const users = [{ name: isRoot ? 'root' : `uid ${process.getuid()}`, run: (name, dir) => scenarios[name](dir), root: isRoot, skip: false }]
// As root, each scenario again as another user, or skipped saying why that user cannot run here.
if (isRoot) users.push({ name: `unprivileged uid ${UID}`, run: (name) => unprivileged(name), root: false, skip: cannotRunAs(UID) ?? false })

const scratch = tmpDir('sandspawn-limits-')
test.after(() => fs.rmSync(scratch, { recursive: true, force: true }))

for (const user of users) {
  test(`${user.name}: fileSize stops a 5 MB write at 1 MiB with limitExceeded 'fileSize'`, { skip: user.skip }, async () => {
    const dir = fs.mkdtempSync(path.join(scratch, 'fsize-'))
    const r = await user.run('fileSize', dir)
    assert.ok(r.result, JSON.stringify(r.error))
    assert.equal(r.size ?? MiB, MiB)
    assert.equal(r.result.signal, 'SIGXFSZ')
    assert.equal(r.result.limitExceeded, 'fileSize')
    assert.deepEqual(r.result.appliedLimits, { fileSize: 'rlimit' })
  })

  test(`${user.name}: cpuTime 1000 ends a busy loop with limitExceeded 'cpuTime', not the wall timeout`, { skip: user.skip }, async () => {
    const r = await user.run('cpuTime')
    assert.ok(r.result, JSON.stringify(r.error))
    assert.equal(r.result.limitExceeded, 'cpuTime')
    assert.equal(r.result.signal, 'SIGXCPU')
    assert.equal(r.result.timedOut, false)
    // A hang bound only: the loop needs one second of CPU, the timeout is 60 s of wall time.
    assert.ok(r.result.durationMs < 50000, `${r.result.durationMs} ms`)
    const cpu = r.result.resourceUsage.userCpuMs + r.result.resourceUsage.systemCpuMs
    // Sampled under bwrap: the CPU of the last sampling interval (100 ms, longer under load) is missing.
    assert.ok(cpu >= 500 && cpu < 5000, `the loop used ${cpu} ms of CPU before SIGXCPU`)
  })

  test(`${user.name}: openFiles 32 makes the 33rd descriptor fail with EMFILE`, { skip: user.skip }, async () => {
    const r = await user.run('openFiles')
    assert.ok(r.result, JSON.stringify(r.error))
    assert.equal(r.result.exitCode, 0, r.result.stderr)
    assert.equal(r.result.stdout.trim(), `31 ${EMFILE}`)
    assert.deepEqual(r.result.appliedLimits, { openFiles: 'rlimit' })
    assert.equal(r.result.limitExceeded, null, 'a failed open is no kernel evidence of a limit ending the run')
  })

  test(`${user.name}: memory 256 MiB lets Node start but stops a 1 GiB allocation`, { skip: user.skip }, async () => {
    const r = await user.run('memory')
    assert.ok(r.small.result && r.large.result, JSON.stringify([r.small.error, r.large.error]))
    assert.equal(r.small.result.exitCode, 0, r.small.result.stderr)
    assert.equal(r.small.result.stdout, `allocated ${16 * MiB}\n`)
    assert.notEqual(r.large.result.exitCode, 0)
    assert.equal(r.large.result.stdout, '', 'the 1 GiB buffer was never allocated')
    assert.match(r.large.result.stderr, /RangeError|allocation failed|out of memory/i)
    assert.deepEqual(r.large.result.appliedLimits, { memory: 'rlimit' })
  })

  test(`${user.name}: processes 50 stops a 200-process fork loop, or is refused where it cannot hold`, { skip: user.skip }, async () => {
    const r = await user.run('processes')
    if (user.root) {
      assert.equal(r.error && r.error.code, 'ERR_SANDBOX_UNSUPPORTED')
      assert.match(r.error.message, /^limits\.processes cannot be enforced here: .*root/)
      return
    }
    assert.ok(r.result, JSON.stringify(r.error))
    assert.equal(r.result.exitCode, 0, r.result.stderr)
    const [forked, errno] = r.result.stdout.trim().split(' ').map(Number)
    // 50 tasks of the command's own (its user namespace: bwrap's init is not in it): python itself
    // counts too.
    assert.ok(forked > 0 && forked <= 49, `forked ${forked}`)
    assert.equal(errno, EAGAIN)
    assert.deepEqual(r.result.appliedLimits, { processes: 'rlimit' })
  })

  test(`${user.name}: the limits of one run do not affect a concurrent run or the host`, { skip: user.skip }, async () => {
    const r = await user.run('concurrent')
    assert.ok(r.limited.result && r.free.result, JSON.stringify([r.limited.error, r.free.error]))
    assert.equal(r.limited.result.stdout.trim(), `15 ${EMFILE}`)
    const [opened, forks] = r.free.result.stdout.trim().split('\n')
    assert.ok(Number(opened.split(' ')[0]) > 1000, `the unlimited run opened up to descriptor ${opened}`)
    assert.equal(forks, '200 None', 'the unlimited run forked all 200')
    assert.deepEqual(r.free.result.appliedLimits, {})
    assert.equal(r.hostLimitsUnchanged, true)
  })

  test(`${user.name}: a fork bomb under processes and timeout leaves nothing behind`, { skip: user.skip }, async () => {
    const r = await user.run('forkBomb')
    if (user.root) {
      assert.equal(r.error && r.error.code, 'ERR_SANDBOX_UNSUPPORTED')
      return
    }
    assert.ok(r.result, JSON.stringify(r.error))
    assert.equal(r.result.timedOut, true)
    // See the scenario: the sandbox's init finishes tearing down its namespace after the result.
    assert.deepEqual(r.leftoverAfter10s, [], `right after the result:\n${r.leftover.join('\n')}`)
  })

  test(`${user.name}: danger-full-access sets per-process limits through the helper; processes refused`, { skip: user.skip }, async () => {
    const dir = fs.mkdtempSync(path.join(scratch, 'direct-'))
    const r = await user.run('unsandboxed', dir)
    assert.ok(r.fileSize.result, JSON.stringify(r.fileSize.error))
    assert.equal(r.fileSize.result.signal, 'SIGXFSZ')
    assert.equal(r.fileSize.result.limitExceeded, 'fileSize')
    assert.equal(r.size ?? MiB, MiB)
    assert.equal(r.processes.error && r.processes.error.code, 'ERR_SANDBOX_UNSUPPORTED')
    assert.match(r.processes.error.message, /danger-full-access/)
  })
}

test('resourceUsage is present and plausible on every result, appliedLimits {} without limits', async () => {
  for (const sandbox of [undefined, 'danger-full-access']) {
    const r = await spawnSandboxed(['sh', '-c', 'i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done'], { sandbox })
    assert.equal(r.exitCode, 0)
    assert.deepEqual(r.appliedLimits, {})
    assert.equal(r.limitExceeded, null)
    const u = r.resourceUsage
    assert.ok(u.userCpuMs > 0 && u.userCpuMs < r.durationMs * 2 + 100, JSON.stringify(u))
    assert.ok(u.systemCpuMs >= 0, JSON.stringify(u))
    assert.ok(u.maxRssBytes > 256 * 1024 && u.maxRssBytes < 1024 * MiB, JSON.stringify(u))
  }
  // Failed runs too: a signal death still has its usage.
  const killed = await spawnSandboxed(['sh', '-c', 'kill -9 $$'])
  assert.equal(killed.signal, 'SIGKILL')
  assert.equal(typeof killed.resourceUsage.maxRssBytes, 'number')
})

test('startSandboxed takes limits too, and its result reports them', async () => {
  for (const sandbox of [undefined, 'danger-full-access']) {
    const proc = await startSandboxed(['sh', '-c', 'ulimit -n; ulimit -t; ulimit -c'], { sandbox, limits: { openFiles: 40, cpuTime: 2001 } })
    const r = await proc.wait()
    assert.equal(r.stdout, '40\n3\n0\n', `${sandbox}: 2001 ms rounds up to 3 s; core dumps off`)
    assert.deepEqual(r.appliedLimits, { cpuTime: 'rlimit', openFiles: 'rlimit' })
    assert.equal(r.limitExceeded, null)
  }
})

test('a command that dies of SIGXCPU without a cpuTime limit is not reported as exceeding one', async () => {
  const r = await spawnSandboxed(['sh', '-c', 'kill -XCPU $$'], { limits: { openFiles: 64 } })
  assert.equal(r.signal, 'SIGXCPU')
  assert.equal(r.limitExceeded, null)
})

test('bad limit values are rejected with ERR_SANDBOX_INVALID_OPTIONS naming the field', async () => {
  for (const [limits, field] of [
    ['1g', 'limits'],
    [{ memory: -1 }, 'limits.memory'],
    [{ memory: 0 }, 'limits.memory'],
    [{ cpuTime: 1.5 }, 'limits.cpuTime'],
    [{ fileSize: '1m' }, 'limits.fileSize'],
    [{ processes: 1e7 }, 'limits.processes'],
    [{ openFiles: Infinity }, 'limits.openFiles'],
    [{ memoryMax: 1 }, 'limits.memoryMax'],
  ]) {
    await assert.rejects(spawnSandboxed(['true'], { limits }), (err) => {
      assert.equal(err.code, 'ERR_SANDBOX_INVALID_OPTIONS', JSON.stringify(limits))
      assert.ok(err.message.startsWith(`options.${field}:`), err.message)
      return true
    })
  }
})

test('macOS plans: cpuTime, fileSize and openFiles through the helper; memory and processes refused', () => {
  const plan = buildSandboxCommand(['ls'], { platform: 'darwin', limits: { cpuTime: 2500, fileSize: MiB, openFiles: 64 } })
  assert.equal(path.basename(plan.program), 'sandspawn-helper')
  assert.deepEqual(plan.args.slice(0, 7), ['v1', '--rlimit=cpu:3:4', `--rlimit=fsize:${MiB}:${MiB}`, '--rlimit=nofile:64:64', '--rlimit=core:0:0', '--', '/usr/bin/sandbox-exec'])
  assert.deepEqual(plan.args.slice(-2), ['--', 'ls'])
  for (const limits of [{ memory: 256 * MiB }, { processes: 50 }]) {
    assert.throws(() => buildSandboxCommand(['ls'], { platform: 'darwin', limits }), (err) => {
      assert.equal(err.code, 'ERR_SANDBOX_UNSUPPORTED')
      assert.match(err.message, new RegExp(`limits\\.${Object.keys(limits)[0]} cannot be enforced here: macOS`))
      return true
    })
  }
})

test('sandboxCapabilities().limits says how each limit is enforced here', async () => {
  const caps = await sandboxCapabilities()
  assert.deepEqual(Object.keys(caps.limits).sort(), ['cpuTime', 'fileSize', 'memory', 'openFiles', 'processes'])
  for (const name of ['memory', 'cpuTime', 'fileSize', 'openFiles']) assert.deepEqual(caps.limits[name], { mechanism: 'rlimit', reason: null })
  if (isRoot) {
    assert.equal(caps.limits.processes.mechanism, null)
    assert.match(caps.limits.processes.reason, /root/)
  } else {
    assert.equal(caps.limits.processes.mechanism, 'rlimit')
  }
})
