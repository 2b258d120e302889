'use strict'
// The Landlock mode shares the host's processes and files, and Landlock (to ABI 7) governs neither
// another process's scheduling nor a file's inode attributes. Found by an attacker's review: a
// command set nice 19, SCHED_IDLE, one CPU and the idle I/O class on any process of its user (its
// supervisor and the host program that started it, found through /proc, included) for their whole
// life, and the sync, nodump and noatime flags of host files it could only read.
//
// The helper runs the attacks (attacks/sched.c, attacks/inode-flags.c) directly, as the other
// Landlock-filter tests in processes.test.js, as an ordinary user: the kernel keeps a command
// without capabilities off the scheduling of root's processes, so as root the sched test switches
// to a uid of its own (`setpriv`). The bwrap modes, whose PID namespace hides the host's
// processes, are checked with the same attack.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn, spawnSync, execFileSync } = require('node:child_process')
const { run, show, tempTree, which, waitFor, BASE } = require('./helpers')
const otherUser = require('../fixtures/other-user')

const HAS_CC = which('cc') !== null
const UID = 64129 // a uid no other test uses: the attack's PRIO_USER reaches every process of its uid
const isRoot = process.getuid() === 0
const READS = ['/bin', '/etc', '/lib', '/lib64', '/usr', '/proc', '/dev', BASE].filter((d) => fs.existsSync(d)).map((d) => `--ll-read=${d}`)

let bin // the compiled attacks, readable by every user
before(() => {
  if (!HAS_CC) return
  bin = fs.mkdtempSync(path.join(BASE, 'sandspawn-ll-state-'))
  fs.chmodSync(bin, 0o755)
  for (const name of ['sched', 'inode-flags']) {
    execFileSync('cc', ['-O1', '-o', path.join(bin, name), path.join(__dirname, 'attacks', `${name}.c`)], { stdio: 'pipe' })
  }
})
after(() => bin && fs.rmSync(bin, { recursive: true, force: true }))

/** The "<name> <result>" lines of an attack program. */
function results(stdout) {
  return Object.fromEntries(stdout.split('\n').filter(Boolean).map((l) => l.split(' ')).map(([k, ...v]) => [k, v.join(' ')]))
}

/** The host's view of a process's scheduling (nice, policy, I/O priority, CPUs). */
const schedOf = (pid) => results(execFileSync(path.join(bin, 'sched'), ['get', String(pid)], { encoding: 'utf8' }))

/** `argv` as the test's ordinary user: this process's own, or as root the uid of its own. */
const asUser = (argv) => (isRoot ? ['setpriv', [`--reuid=${UID}`, `--regid=${UID}`, '--clear-groups', ...argv]] : [argv[0], argv.slice(1)])

/** The helper's Landlock mode at ABI 3 (none of what Landlock governs at any ABI covers these
 * calls), everything readable, nothing writable; as the test's ordinary user when `user`. */
function landlock(command, { user = false } = {}) {
  const helper = user && isRoot ? path.join(otherUser.stagedCheckout(), 'sandspawn-helper') : path.resolve(__dirname, '../../sandspawn-helper')
  const argv = [helper, 'v1', '--landlock=3', '--sockets=none', '--ll-list=/', ...READS, '--ll-write=/dev/null', '--', ...command]
  const [cmd, args] = user ? asUser(argv) : [argv[0], argv.slice(1)]
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30000 })
  return { exitCode: r.status, signal: r.signal, timedOut: false, stdout: r.stdout, stderr: r.stderr }
}

/** A host `sleep` of the test's ordinary user, leading a process group of its own. */
async function hostSleep(t, user) {
  const [cmd, args] = user ? asUser(['sleep', '60']) : ['sleep', ['60']]
  const child = spawn(cmd, args, { stdio: 'ignore', detached: true })
  t.after(() => child.kill('SIGKILL'))
  // Attacked before setpriv switched to the uid, root's process would be spared by the kernel alone.
  const uid = user && isRoot ? UID : process.getuid()
  const ready = await waitFor(() => {
    try {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8')
      return /^Name:\tsleep$/m.test(status) && new RegExp(`^Uid:\\t${uid}\\t`, 'm').test(status)
    } catch {
      return false
    }
  }, 5000)
  assert.ok(ready, `the host sleep did not start as uid ${uid}`)
  return child.pid
}

const skip = !HAS_CC && 'no C compiler to build the attacks'
const skipUser = skip || (isRoot && otherUser.cannotRunAs(UID)) || false

/** Every call of attacks/sched.c on process 0 (the host sleep) and on the user's processes. */
const OUTSIDE = ['setattr-0', 'nice-0', 'idle-0', 'param-0', 'affinity-0', 'ioprio-0', 'nice-group-0', 'ioprio-group-0', 'nice-user', 'ioprio-user']
const OWN = ['own-nice', 'own-setattr', 'own-idle', 'own-param', 'own-affinity', 'own-ioprio']

describe("the Landlock mode's filter: what Landlock does not govern on the host", () => {
  test("another process's scheduling (nice, policy, CPUs, I/O class) cannot be changed, by pid, group or user; the command's own can", { skip: skipUser }, async (t) => {
    const victim = await hostSleep(t, true)
    const before = schedOf(victim)
    const r = landlock([path.join(bin, 'sched'), 'attack', String(victim)], { user: true })
    assert.equal(r.exitCode, 0, show(r))
    const got = results(r.stdout)
    assert.deepEqual(schedOf(victim), before, `the host process's scheduling changed\n${show(r)}`)
    for (const name of OUTSIDE) assert.equal(got[name], 'EPERM', `${name}\n${show(r)}`)
    for (const name of OWN) assert.equal(got[name], 'ok', `${name}: the command's own (pid 0)\n${show(r)}`)
    // The price: a thread named by its id, even the caller's own (glibc's pthread_setaffinity_np
    // and pthread_setschedparam pass it), is refused like any other process (see the README).
    assert.equal(got['own-tid'], 'EPERM', show(r))
  })

  // As the file's owner (root too: the command has no capabilities, but owns root's files).
  test("a file's inode flags, version, verity and encryption policy cannot be set through a read-only descriptor", { skip }, (t) => {
    const tree = tempTree(t)
    const file = path.join(tree.out, 'host-file')
    fs.writeFileSync(file, 'keep\n')
    const get = () => results(execFileSync(path.join(bin, 'inode-flags'), ['get', file], { encoding: 'utf8' }))
    const before = get()
    const r = landlock([path.join(bin, 'inode-flags'), 'set', file])
    assert.equal(r.exitCode, 0, show(r))
    assert.deepEqual(get(), before, `the file's flags or version changed\n${show(r)}`)
    const refused = ['setflags', 'setflags32', 'fssetxattr', 'setversion', 'setversion-ext4', 'enable-verity', 'set-encryption-policy']
    assert.deepEqual(results(r.stdout), Object.fromEntries(refused.map((n) => [n, 'EPERM'])), show(r))
  })
})

// The bwrap modes: the PID namespace hides the host's processes (ESRCH), and PRIO_USER and
// IOPRIO_WHO_USER reach only the processes it shows (the run's own).
describe('the bwrap modes: the scheduling of host processes is out of reach', () => {
  for (const sandbox of ['read-only', 'workspace-write']) {
    test(`${sandbox}: a host process of the same user is not found, and keeps its scheduling`, { skip }, async (t) => {
      const tree = tempTree(t)
      const victim = await hostSleep(t, false)
      const before = schedOf(victim)
      const r = await run([path.join(bin, 'sched'), 'attack', String(victim)], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      assert.deepEqual(schedOf(victim), before, `the host process's scheduling changed\n${show(r)}`)
      const got = results(r.stdout)
      for (const name of OUTSIDE.slice(0, 8)) assert.equal(got[name], 'ESRCH', `${name}\n${show(r)}`)
      for (const name of [...OUTSIDE.slice(8), ...OWN, 'own-tid']) assert.equal(got[name], 'ok', `${name}\n${show(r)}`)
    })
  }
})
