'use strict'
// The command's stdio, when it is a device of the host (a terminal, /dev/null), cannot have its
// mode or owner changed from inside the sandbox. Found by an attacker's review of the kernel
// surface (/work/atk/kernel17/ttymode.sh, ptymode.js): a descriptor opened on the host carries the
// host's writable mount, so `chmod 666 /proc/self/fd/0` (or `fchmod(0, 0666)`) got past the
// sandbox's read-only view. The caller's terminal (stdio: 'inherit' under buildSandboxCommand)
// went from 600 to 666 and stayed so: another local user then wrote into it and could read what
// was typed there. A pty run's pty (in the host's /dev/pts) was 666 while the run lived. As root,
// the host's /dev/null (spawnSandboxed's stdin) could be made unusable for every other user.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { run, show, tempTree, which } = require('./helpers')
const otherUser = require('../fixtures/other-user')

const ROOT = path.resolve(__dirname, '../..')
const linux = process.platform === 'linux'
const IS_ROOT = linux && process.getuid() === 0
// A uid no other test uses, for a pty master given by a user other than root.
const MASTER_UID = 64182

/** The command's ways to change its stdin's mode: by path through /proc, and by descriptor. */
const CHMODS = {
  'chmod of /proc/self/fd/0': (mode) => ['sh', '-c', `chmod ${mode.toString(8)} /proc/self/fd/0 && echo changed || echo refused`],
  'fchmod(0)': (mode) => [process.execPath, '-e', `try { require('fs').fchmodSync(0, ${mode}); console.log('changed') } catch (e) { console.log('refused', e.code) }`],
}

/** The host's ptys whose "other" bits allow reading or writing. */
/** Every descriptor on a pipe of every host process this user may look at: `{ pid, comm, fd, pipe, flags }`. */
function pipeHolders() {
  const out = []
  for (const pid of fs.readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim()
      for (const fd of fs.readdirSync(`/proc/${pid}/fd`)) {
        try {
          const pipe = fs.readlinkSync(`/proc/${pid}/fd/${fd}`)
          if (!pipe.startsWith('pipe:')) continue
          const flags = parseInt(/^flags:\s*([0-7]+)$/m.exec(fs.readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8'))[1], 8)
          out.push({ pid: Number(pid), comm, fd: Number(fd), pipe, flags })
        } catch {}
      }
    } catch {}
  }
  return out
}

function openPtys() {
  const out = new Set()
  for (const n of fs.readdirSync('/dev/pts').filter((n) => /^\d+$/.test(n))) {
    try {
      if (fs.statSync(`/dev/pts/${n}`).mode & 0o006) out.add(n)
    } catch {}
  }
  return out
}

describe("the host's devices given as stdio keep their mode", { skip: !linux && 'Linux only' }, () => {
  for (const [how, argv] of Object.entries(CHMODS)) {
    test(`pty run, ${how}: the run's pty in the host's /dev/pts stays closed to other users`, async (t) => {
      const tree = tempTree(t)
      const before = openPtys()
      const p = run(['sh', '-c', '"$@"; sleep 1.5', 'sh', ...argv(0o666)], { cwd: tree.ws, pty: true })
      await new Promise((resolve) => setTimeout(resolve, 1000))
      const opened = [...openPtys()].filter((n) => !before.has(n))
      const r = await p
      assert.deepEqual(opened, [], `the pty became world-accessible during the run\n${show(r)}`)
      assert.match(r.stdout, /refused/, show(r))
      assert.equal(r.exitCode, 0, show(r))
    })

    test(`root, ${how}: the host's /dev/null as stdin keeps its mode`, { skip: !IS_ROOT && 'needs root (changes /dev/null, restored after)' }, async (t) => {
      const tree = tempTree(t)
      const mode = () => fs.statSync('/dev/null').mode & 0o7777
      assert.equal(mode(), 0o666)
      try {
        // 0667: observable, and harmless while it lasts.
        const r = await run(argv(0o667), { cwd: tree.ws })
        assert.equal(mode(), 0o666, `the host's /dev/null was changed\n${show(r)}`)
        assert.match(r.stdout, /refused/, show(r))
        // Still /dev/null for the command: reads end at once, writes vanish.
        const io = await run(['sh', '-c', 'cat; echo x >&0 2>/dev/null; echo ok'], { cwd: tree.ws })
        assert.equal(io.stdout, 'ok\n', show(io))
      } finally {
        fs.chmodSync('/dev/null', 0o666)
      }
    })
  }

  // The helper no longer closes each read-only copy of a device (and the message queues' mount)
  // on its own: each close of a detached mount waited for an RCU grace period. They are put inside
  // the mounts it detaches anyway (the bind of the host's /dev, the copy of proc, which takes the
  // covers' scratch directory along too), and must leave with them: the command's mount table shows
  // none of them, nor any mqueue, /dev/shm no scratch directory, and the device it was given
  // still refuses a mode change, in a pty run (three descriptors on one terminal) and a plain one.
  for (const pty of [false, true]) {
    test(`${pty ? 'pty' : 'plain'} run: the copies the helper set aside are gone from the command's mount table`, async (t) => {
      const tree = tempTree(t)
      const script = "grep -c -e sandspawn-host-dev -e sandspawn-cover -e ' mqueue ' -e ' /proc/sys/sys ' /proc/self/mountinfo; ls -A /dev/shm | grep -c sandspawn-cover; chmod 666 /proc/self/fd/0 && echo changed || echo refused"
      const r = await run(['sh', '-c', script], { cwd: tree.ws, pty })
      assert.match(r.stdout, /^0\r?\n0\r?\n/, show(r))
      assert.match(r.stdout, /refused/, show(r))
    })
  }

  test('a denyRead mask over /dev: the run works, its pty stays closed to other users', async (t) => {
    const tree = tempTree(t)
    const before = openPtys()
    const p = run(['sh', '-c', 'chmod 666 /proc/self/fd/0 && echo changed || echo refused; ls -A /dev; sleep 1.5'], { cwd: tree.ws, pty: true, sandbox: { mode: 'read-only', denyRead: ['/dev'] } })
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const opened = [...openPtys()].filter((n) => !before.has(n))
    const r = await p
    assert.deepEqual(opened, [], show(r))
    assert.equal(r.exitCode, 0, show(r))
    // chmod's complaint aside (a pty merges stderr into stdout), nothing: the mask shows again, empty.
    const lines = r.stdout.replace(/\r/g, '').split('\n').filter((l) => l && !l.startsWith('chmod:'))
    assert.deepEqual(lines, ['refused'], show(r))
  })

  test("buildSandboxCommand with stdio: 'inherit' from a terminal: the caller's terminal stays 600", { skip: !which('script') && 'no script(1)' }, (t) => {
    const tree = tempTree(t)
    const child = path.join(tree.out, 'inherit.js')
    fs.writeFileSync(child, `
      const { buildSandboxCommand } = require(${JSON.stringify(ROOT)})
      const { spawnSync } = require('child_process')
      const fs = require('fs')
      const tty = fs.readlinkSync('/proc/self/fd/0')
      const mode = () => (fs.statSync(tty).mode & 0o777).toString(8)
      console.log('before', mode())
      const plan = buildSandboxCommand(['sh', '-c', 'chmod 666 /proc/self/fd/0 && echo changed || echo refused; echo typed'], { cwd: ${JSON.stringify(tree.ws)} })
      spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio: 'inherit' })
      console.log('after', mode())
    `)
    const r = spawnSync('script', ['-qec', `${process.execPath} ${child}`, '/dev/null'], { encoding: 'utf8', timeout: 30000, stdio: ['ignore', 'pipe', 'pipe'] })
    const out = r.stdout.replace(/\r/g, '')
    assert.match(out, /before 6[02]0/, out + r.stderr)
    assert.match(out, /typed/, `the command ran and wrote to the terminal\n${out}${r.stderr}`)
    assert.match(out, /refused/, out + r.stderr)
    assert.match(out, /after 6[02]0/, out + r.stderr)
  })

  // Found by an attacker's review (kern30): a pipe among the inherited stdio was left as given, so
  // its status flags were the caller's open file, which the caller shares with its other processes
  // (a shell pipeline's next command, a CI log pipe): the command's fcntl(1, F_SETFL, O_NONBLOCK)
  // outlived the run, and the next host writer into that pipe lost its output to EAGAIN once the
  // pipe was full (`cat` wrote 61,485 of 3,000,000 bytes). Spawned from Python, which, unlike
  // Node, does not put its descriptors' flags back when it exits.
  test("buildSandboxCommand with a pipe as stdio: the command's O_NONBLOCK (and O_APPEND) stay its own; what it writes and reads goes through", { skip: !which('python3') && 'no python3' }, (t) => {
    const tree = tempTree(t)
    const command = ['python3', '-c', 'import fcntl, os, sys\nfor fd in (0, 1):\n    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK | os.O_APPEND)\nprint("read", sys.stdin.readline().strip(), flush=True)']
    const { buildSandboxCommand } = require(ROOT)
    const plan = buildSandboxCommand(command, { cwd: tree.ws })
    const driver = `
import fcntl, json, os, subprocess, sys
plan = json.loads(sys.argv[1])
r_in, w_in = os.pipe()
r_out, w_out = os.pipe()
os.write(w_in, b"given\\n")
p = subprocess.Popen([plan["program"]] + plan["args"], cwd=plan["cwd"], env=plan["env"], stdin=r_in, stdout=w_out)
p.wait()
flags = lambda fd: fcntl.fcntl(fd, fcntl.F_GETFL)
print("stdin-nonblock", bool(flags(r_in) & os.O_NONBLOCK), "stdout-nonblock", bool(flags(w_out) & os.O_NONBLOCK), "stdout-append", bool(flags(w_out) & os.O_APPEND))
os.close(w_out)
print("got", os.read(r_out, 4096).decode().strip())
`
    const r = spawnSync('python3', ['-c', driver, JSON.stringify(plan)], { encoding: 'utf8', timeout: 30000 })
    assert.match(r.stdout, /^got read given$/m, `the command read its stdin and wrote its stdout through the pipes\n${r.stdout}${r.stderr}`)
    assert.match(r.stdout, /^stdin-nonblock False stdout-nonblock False stdout-append False$/m, r.stdout + r.stderr)
  })

  // Found by an attacker's review (kern44): a regular file among the inherited stdio is left as
  // given (it cannot be opened again: its offset must stay the caller's, or a shell's `{ plan; echo
  // after; } > log` would write over the command's output), so its status flags are the caller's
  // open file. The command's fcntl(1, F_SETFL, O_DIRECT) outlived the run: every later write of the
  // caller's from an unaligned buffer got EINVAL (a Node host's next console.log threw, uncaught; a
  // shell's echo failed). The control, the same command without a sandbox, shows the flag sticks.
  test("buildSandboxCommand with a regular file as stdout: the command cannot turn O_DIRECT on the caller's open file", { skip: !which('python3') && 'no python3' }, (t) => {
    const { ws, out } = tempTree(t)
    const direct = ['python3', '-c', 'import errno, fcntl, os\ntry:\n    fcntl.fcntl(1, fcntl.F_SETFL, fcntl.fcntl(1, fcntl.F_GETFL) | os.O_DIRECT)\n    r = "ok"\nexcept OSError as e:\n    r = errno.errorcode[e.errno]\nos.write(2, ("setfl " + r + "\\n").encode())']
    // The caller opens its log for appending, gives it as stdout, then writes its own line.
    const caller = `
import errno, fcntl, json, os, subprocess, sys
plan = json.loads(sys.argv[1])
def given(label, argv, env, cwd, log):
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    p = subprocess.run(argv, cwd=cwd, env=env, stdout=fd, stderr=subprocess.PIPE)
    direct = bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_DIRECT)
    try:
        os.write(fd, b"host line after the run\\n")
        w = "ok"
    except OSError as e:
        w = errno.errorcode[e.errno]
    print(label, p.stderr.decode().strip().replace("\\n", " | "), "direct", direct, "write", w)
given("control", json.loads(sys.argv[3]), None, plan["cwd"], sys.argv[2] + "/control.log")
given("sandboxed", [plan["program"]] + plan["args"], plan["env"], plan["cwd"], sys.argv[2] + "/sandboxed.log")
`
    const plan = require(ROOT).buildSandboxCommand(direct, { cwd: ws })
    const r = spawnSync('python3', ['-c', caller, JSON.stringify(plan), out, JSON.stringify(direct)], { encoding: 'utf8', timeout: 30000 })
    assert.match(r.stdout, /^control setfl ok direct True write /m, `the probe cannot tell here (no O_DIRECT on ${out}'s filesystem?)\n${r.stdout}${r.stderr}`)
    assert.match(r.stdout, /^sandboxed setfl EINVAL direct False write ok$/m, `the command's O_DIRECT is on the caller's open file after the run\n${r.stdout}${r.stderr}`)
  })

  // Found by an attacker's review (fix31) of kern30's fix: a pipe the helper may not open again
  // (another user's: its inode is its creator's, mode 0600) was left as given, its status flags
  // still the caller's open file. A root process (a CI agent) that ran a plan as another user with
  // its own pipes as stdio (setpriv, sudo -u, su) had the command's O_NONBLOCK on both after the
  // run, its next writer into that pipe losing its output to EAGAIN, nothing said. Now such a pipe
  // fails setup, naming the descriptor, as a device that cannot be opened again does.
  test(`root: pipes of root's given to a plan run as uid ${MASTER_UID} keep the caller's status flags`, { skip: (!IS_ROOT && 'needs root (setpriv)') || (!fs.existsSync('/usr/bin/python3') && 'no /usr/bin/python3') || (IS_ROOT && otherUser.cannotRunAs(MASTER_UID)) || false }, (t) => {
    const tree = tempTree(t)
    fs.chownSync(tree.ws, MASTER_UID, MASTER_UID)
    fs.chmodSync(tree.root, 0o755)
    const command = ['/usr/bin/python3', '-c', 'import fcntl, os\nfor fd in (0, 1):\n    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)\nprint("ran", flush=True)']
    const build = `console.log(JSON.stringify(require(${JSON.stringify(otherUser.stagedCheckout())}).buildSandboxCommand(${JSON.stringify(command)}, { cwd: ${JSON.stringify(tree.ws)} })))`
    const [cmd, args] = otherUser.asUser(MASTER_UID, ['-e', build])
    const built = spawnSync(cmd, args, { cwd: tree.ws, env: { PATH: process.env.PATH, HOME: tree.ws }, encoding: 'utf8', timeout: 60000 })
    assert.equal(built.status, 0, built.stdout + built.stderr)
    // Python, not Node: Node puts its stdio's flags back when it exits.
    const driver = `
import fcntl, json, os, subprocess, sys
plan = json.loads(sys.argv[1])
r_in, w_in = os.pipe()
r_out, w_out = os.pipe()
os.write(w_in, b"given\\n")
p = subprocess.Popen([plan["program"]] + plan["args"], cwd=plan["cwd"], env=plan["env"], stdin=r_in, stdout=w_out, stderr=subprocess.PIPE, user=${MASTER_UID}, group=${MASTER_UID}, extra_groups=[])
err = p.communicate()[1].decode()
flags = lambda fd: fcntl.fcntl(fd, fcntl.F_GETFL)
print("stdin-nonblock", bool(flags(r_in) & os.O_NONBLOCK), "stdout-nonblock", bool(flags(w_out) & os.O_NONBLOCK))
print("exit", p.returncode, json.dumps(err))
`
    const r = spawnSync('/usr/bin/python3', ['-c', driver, built.stdout.trim()], { encoding: 'utf8', timeout: 60000 })
    assert.match(r.stdout, /^stdin-nonblock False stdout-nonblock False$/m, `the command's O_NONBLOCK is on the caller's open files\n${r.stdout}${r.stderr}`)
    assert.match(r.stdout, /^exit 125 .*descriptor 0 is a pipe/m, r.stdout + r.stderr)
  })

  // The test above in the Landlock mode, whose supervisor leaves the stdio pipes as given (pipe30,
  // checking kern30's fix): no caller's pipe reaches a Landlock command. buildSandboxCommand gives
  // no Landlock plan (plan.test.js), and spawnSandboxed and startSandboxed give every run pipes of
  // its own, whose other ends (distinct open files) only the runner holds. So the command's
  // fcntl(F_SETFL, O_NONBLOCK | O_APPEND) on its stdio reaches no open file of a host process
  // outside the run: each process holding one of those pipes is the run's, or holds an open file
  // the command's flags are not on.
  for (const [mode, extra] of [['Landlock', { linux: { allow: ['landlock'] } }], ['bwrap', {}]]) {
    test(`${mode} mode: the command's O_NONBLOCK | O_APPEND on its stdio pipes is on no open file of a host process outside the run`, { skip: !which('python3') && 'no python3' }, async (t) => {
      const tree = tempTree(t)
      const command = ['python3', '-c', 'import fcntl, os, sys, time\nfor fd in (0, 1, 2):\n    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK | os.O_APPEND)\nprint("pipes", *[os.readlink("/proc/self/fd/%d" % fd) for fd in (0, 1, 2)], "got", sys.stdin.readline().strip(), flush=True)\ntime.sleep(2)']
      let holders = null
      const r = await run(command, {
        cwd: tree.ws,
        sandbox: 'workspace-write',
        input: 'given\n',
        ...extra,
        onOutput: () => {
          holders ??= pipeHolders()
        },
      })
      assert.equal(r.sandboxType, mode.toLowerCase(), show(r))
      const pipes = (r.stdout.match(/^pipes (.*) got given$/m) ?? assert.fail(show(r)))[1].split(' ')
      assert.equal(pipes.length, 3, show(r))
      const appended = holders.filter((h) => pipes.includes(h.pipe) && h.flags & fs.constants.O_APPEND)
      // The run's own processes (the command, and in the Landlock mode its supervisor) hold the
      // open files the command changed: those have the same flags; any other is a host's.
      const outside = appended.filter((h) => !/^(python3|sandspawn-helpe)$/.test(h.comm))
      assert.deepEqual(outside, [], `a host process outside the run holds an open file the command set O_APPEND on\n${show(r)}`)
      assert.ok(appended.some((h) => h.comm === 'python3'), `the scan saw the command's own descriptors\n${JSON.stringify(holders.filter((h) => pipes.includes(h.pipe)))}`)
    })
  }

  // A review of the step above: failing every run whose stdin is a device the command cannot
  // change anyway broke ordinary setups (a git hook's `exec < /dev/tty`, a terminal `su` left to
  // another uid); and a device given read-only could be opened again for writing through
  // /proc/self/fd (a read-only mount does not stop a device's writes).
  test('root: a device another uid owns runs as given; one given read-only is not opened again for writing', { skip: !IS_ROOT && 'needs root (mknod)' }, (t) => {
    const tree = tempTree(t)
    const other = path.join(tree.out, 'other-null')
    assert.equal(spawnSync('mknod', [other, 'c', '1', '3']).status, 0)
    fs.chownSync(other, 65534, 65534)
    fs.chmodSync(other, 0o666)
    const { buildSandboxCommand } = require(ROOT)
    const go = (stdin, argv) => {
      const plan = buildSandboxCommand(argv, { cwd: tree.ws })
      const fd = fs.openSync(stdin, 'r')
      try {
        return spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8', timeout: 30000 })
      } finally {
        fs.closeSync(fd)
      }
    }
    const r = go(other, ['sh', '-c', 'cat >/dev/null && echo ran'])
    assert.equal(r.status, 0, r.stdout + r.stderr)
    assert.match(r.stdout, /ran/, r.stderr)
    // /dev/zero given read-only: opening it again for writing through /proc/self/fd is refused.
    const w = go('/dev/zero', ['sh', '-c', '(echo x > /proc/self/fd/0) 2>/dev/null && echo wrote || echo refused'])
    assert.equal(w.status, 0, w.stdout + w.stderr)
    assert.match(w.stdout, /refused/, w.stdout + w.stderr)
  })

  // Found by a review of the step above (/work/atk/fixes17b/devtty.sh, ptmx0.py): as root, every
  // run whose stdin was /dev/tty (a git hook's `exec < /dev/tty`) failed setup: /dev/tty opens the
  // opener's controlling terminal, and the helper has none. Left as given, a root command could
  // change the host's /dev/tty's mode through it; reopened by the number of the terminal behind it,
  // it is that terminal, through the read-only copy.
  test("root: stdin /dev/tty is the terminal behind it, and the host's /dev/tty keeps its mode", { skip: (!IS_ROOT && "needs root (the host's /dev/tty is root's)") || (!which('script') && 'no script(1)') }, (t) => {
    const tree = tempTree(t)
    const child = path.join(tree.out, 'devtty.js')
    fs.writeFileSync(child, `
      const { buildSandboxCommand } = require(${JSON.stringify(ROOT)})
      const { spawnSync } = require('child_process')
      const fs = require('fs')
      const script = 'chmod 667 /proc/self/fd/0 2>/dev/null && echo changed || echo refused; test -t 0 && echo a-terminal; echo written-to-the-terminal >&0'
      const plan = buildSandboxCommand(['sh', '-c', script], { cwd: ${JSON.stringify(tree.ws)} })
      const fd = fs.openSync('/dev/tty', 'r+')
      const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio: [fd, 'pipe', 'pipe'], encoding: 'utf8', timeout: 30000 })
      console.log('RESULT ' + JSON.stringify({ status: r.status, stdout: r.stdout, stderr: r.stderr }))
    `)
    const mode = () => fs.statSync('/dev/tty').mode & 0o7777
    assert.equal(mode(), 0o666)
    try {
      const r = spawnSync('script', ['-qec', `${process.execPath} ${child}`, '/dev/null'], { encoding: 'utf8', timeout: 60000, stdio: ['ignore', 'pipe', 'pipe'] })
      const out = r.stdout.replace(/\r/g, '')
      const line = out.split('\n').find((l) => l.startsWith('RESULT '))
      assert.ok(line, out + r.stderr)
      const run = JSON.parse(line.slice('RESULT '.length))
      assert.equal(run.status, 0, run.stderr)
      assert.equal(run.stdout, 'refused\na-terminal\n', run.stderr)
      assert.match(out, /^written-to-the-terminal$/m, 'written where /dev/tty leads: the terminal script(1) made')
      assert.equal(mode(), 0o666, "the host's /dev/tty was changed")
    } finally {
      fs.chmodSync('/dev/tty', 0o666)
    }
  })

  // A pty's master (a terminal logger reading what is typed on the other side) has no name of its
  // own: every open of /dev/ptmx makes a new terminal, so it cannot be opened again, and through
  // it a root command could change the host's /dev/ptmx's mode. Refused, saying so.
  test('root: a pty master as stdin is refused, naming the descriptor, and /dev/ptmx keeps its mode', { skip: !IS_ROOT && "needs root (the host's /dev/ptmx is root's: another user's command runs with it as given)" }, (t) => {
    const tree = tempTree(t)
    const { buildSandboxCommand } = require(ROOT)
    const plan = buildSandboxCommand(['sh', '-c', 'chmod 667 /proc/self/fd/0; echo ran'], { cwd: tree.ws })
    const master = fs.openSync('/dev/ptmx', 'r+')
    const mode = () => fs.statSync('/dev/ptmx').mode & 0o7777
    try {
      const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio: [master, 'pipe', 'pipe'], encoding: 'utf8', timeout: 30000 })
      assert.equal(r.status, 125, r.stdout + r.stderr)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, /^sandspawn-helper: descriptor 0 is the master side of a pseudo-terminal \(\/dev\/ptmx\)[^\n]*cannot be opened again[^\n]*give the command a pipe/m, r.stderr)
      assert.equal(mode(), 0o666)
    } finally {
      fs.closeSync(master)
      fs.chmodSync('/dev/ptmx', 0o666)
    }
  })
  // Found by a review of the step above (/work/atk/fixes18/ptsptmx.py): a master opened through
  // /dev/pts/ptmx (what /dev/ptmx is a symlink to in containers) was "reopened" without a word: an
  // open of that entry, which is in the devpts mount itself, makes a new pty, and its device and
  // inode are the same, so the check took it for the master given. The command read a new, empty
  // pty in the host's devpts, never what was typed on the caller's. A master is never opened again.
  test('root: a pty master opened through /dev/pts/ptmx as stdin is refused too, naming the descriptor', { skip: !IS_ROOT && "needs root (the host's /dev/pts/ptmx is root's)" }, (t) => {
    const tree = tempTree(t)
    const { buildSandboxCommand } = require(ROOT)
    const plan = buildSandboxCommand(['sh', '-c', 'grep tty-index /proc/self/fdinfo/0; echo ran'], { cwd: tree.ws })
    const master = fs.openSync('/dev/pts/ptmx', 'r+')
    try {
      const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio: [master, 'pipe', 'pipe'], encoding: 'utf8', timeout: 30000 })
      assert.equal(r.status, 125, `the command ran on another pty than the one given\n${r.stdout}${r.stderr}`)
      assert.equal(r.stdout, '')
      assert.match(r.stderr, /^sandspawn-helper: descriptor 0 is the master side of a pseudo-terminal \(\/dev\/pts\/ptmx\)[^\n]*cannot be opened again[^\n]*give the command a pipe/m, r.stderr)
    } finally {
      fs.closeSync(master)
    }
  })

  // The same master given by a user other than root: root's /dev/pts/ptmx, which that user cannot
  // chmod, so left as given (as a master through /dev/ptmx is). /dev/pts/ptmx is made 0666 for the
  // test (as containers mount it; 0000 here, which that user cannot open), restored after.
  test(`uid ${MASTER_UID}: a pty master opened through /dev/pts/ptmx is the command's stdin as given`, { skip: (!IS_ROOT && 'needs root (chmod of /dev/pts/ptmx, setpriv)') || (IS_ROOT && otherUser.cannotRunAs(MASTER_UID)) || false }, (t) => {
    const tree = tempTree(t)
    fs.chownSync(tree.ws, MASTER_UID, MASTER_UID)
    fs.chmodSync(tree.root, 0o755)
    const script = `
      const fs = require('fs')
      const { buildSandboxCommand } = require(${JSON.stringify(otherUser.stagedCheckout())})
      const index = (fdinfo) => /tty-index:\\s*(\\d+)/.exec(fdinfo)?.[1]
      const master = fs.openSync('/dev/pts/ptmx', 'r+')
      const plan = buildSandboxCommand(['cat', '/proc/self/fdinfo/0'], { cwd: ${JSON.stringify(tree.ws)} })
      const r = require('child_process').spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio: [master, 'pipe', 'pipe'], encoding: 'utf8', timeout: 30000 })
      console.log(JSON.stringify({ given: index(fs.readFileSync('/proc/self/fdinfo/' + master, 'utf8')), seen: index(r.stdout), status: r.status, stderr: r.stderr }))
    `
    const before = fs.statSync('/dev/pts/ptmx').mode & 0o7777
    fs.chmodSync('/dev/pts/ptmx', 0o666)
    try {
      const [cmd, args] = otherUser.asUser(MASTER_UID, ['-e', script])
      const r = spawnSync(cmd, args, { cwd: tree.ws, env: { PATH: process.env.PATH, HOME: tree.ws }, encoding: 'utf8', timeout: 60000 })
      assert.equal(r.status, 0, r.stdout + r.stderr)
      const seen = JSON.parse(r.stdout)
      assert.equal(seen.status, 0, seen.stderr)
      assert.ok(seen.given, r.stdout)
      assert.equal(seen.seen, seen.given, `the command's stdin is the master of another pty\n${r.stdout}`)
    } finally {
      fs.chmodSync('/dev/pts/ptmx', before)
    }
  })

  // Found by the same review (/work/atk/fixes18/blockoffset.sh): a block device given with its
  // offset past a header (4096) was reopened at offset 0, so the command's output overwrote the
  // device's first bytes; and the original's O_DIRECT was dropped. The new open file starts where
  // the given one stood, with its status flags; its offset is its own from then on (README).
  test('root: a block device given at an offset is written there, with the status flags it was given (and O_PATH)', { skip: (!IS_ROOT && 'needs root (losetup)') || (!which('losetup') && 'no losetup') }, (t) => {
    const tree = tempTree(t)
    const image = path.join(tree.out, 'disk.img')
    const header = Buffer.from('HEADER-KEEP-ME')
    fs.writeFileSync(image, Buffer.concat([header, Buffer.alloc(64 * 1024 - header.length)]))
    const loop = spawnSync('losetup', ['-f', '--show', image], { encoding: 'utf8' })
    if (loop.status !== 0) return t.skip(`losetup failed: ${loop.stderr.trim()}`)
    const dev = loop.stdout.trim()
    const { buildSandboxCommand } = require(ROOT)
    const go = (argv, stdio) => {
      const plan = buildSandboxCommand(argv, { cwd: tree.ws })
      return spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio, encoding: 'utf8', timeout: 30000 })
    }
    const at = (fd, pos, n) => {
      const buf = Buffer.alloc(n)
      return buf.subarray(0, fs.readSync(fd, buf, 0, n, pos)).toString()
    }
    const fds = []
    try {
      const fd = fs.openSync(dev, 'r+')
      fds.push(fd)
      assert.equal(fs.readSync(fd, Buffer.alloc(4096), 0, 4096, null), 4096, 'the caller moves past the header')
      const r = go(['sh', '-c', 'printf SANDBOXED'], ['ignore', fd, 'pipe'])
      assert.equal(r.status, 0, r.stderr)
      assert.equal(at(fd, 0, header.length), header.toString(), 'the header was overwritten: the command wrote at offset 0')
      assert.equal(at(fd, 4096, 9), 'SANDBOXED')
      // The command's offset was its own: the caller's is still 4096 (README).
      assert.equal(at(fd, null, 9), 'SANDBOXED')

      // Status flags: as given (the kernel shows them in fdinfo), close-on-exec and O_LARGEFILE aside.
      const { O_RDWR, O_APPEND, O_NONBLOCK, O_DIRECT, O_SYNC } = fs.constants
      const flags = (fdinfo) => parseInt(/^flags:\s*([0-7]+)$/m.exec(fdinfo)?.[1], 8) & ~0o2100000
      const given = fs.openSync(dev, O_RDWR | O_APPEND | O_NONBLOCK | O_DIRECT | O_SYNC)
      fds.push(given)
      const f = go(['sh', '-c', 'exec 4>&1 1>&2; cat /proc/self/fdinfo/4'], ['ignore', given, 'pipe'])
      assert.equal(f.status, 0, f.stderr)
      assert.equal(flags(f.stderr).toString(8), flags(fs.readFileSync(`/proc/self/fdinfo/${given}`, 'utf8')).toString(8), f.stderr)
      // An O_PATH descriptor (no reads, no writes) stays one: before, it was opened again for reading.
      const O_PATH = 0o10000000
      const bare = fs.openSync('/dev/zero', O_PATH)
      fds.push(bare)
      const p = go(['sh', '-c', 'cat /proc/self/fdinfo/0; head -c 3 | wc -c'], [bare, 'pipe', 'pipe'])
      assert.equal(flags(p.stdout).toString(8), flags(fs.readFileSync(`/proc/self/fdinfo/${bare}`, 'utf8')).toString(8), p.stdout + p.stderr)
      assert.match(p.stdout, /^0$/m, 'the command read through it')
    } finally {
      for (const fd of fds) fs.closeSync(fd)
      spawnSync('losetup', ['-d', dev])
    }
  })
})
