'use strict'
// Privilege and kernel settings: root inside the sandbox (the host runs as root) has no
// capabilities, cannot mount, load modules, write /sys or /proc/sys, gain anything from setuid
// binaries, reach a terminal, or inherit host file descriptors.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { show, run, sh, tempTree, hostMounts, which, token, q } = require('./helpers')
const machineSetting = require('../fixtures/machine-setting')

const DENIED = /permission denied|operation not permitted|read-only file system|must be superuser|only root can/i

/**
 * Runs a host program on a pty's terminal end that runs `python3 -c attack`, then `echo
 * second-run-ran`, each through buildSandboxCommand with stdio 'inherit' (the README's example),
 * printing `EXIT <status>` after each. Then the driver runs `after` (Python with `m`, `s`, `p` the
 * pty's ends and the host program, setting `after` to text to print). Returns all that was printed.
 */
async function onCallersTerminal(tree, attack, after) {
  const hostJs = path.join(tree.out, 'host.js')
  fs.writeFileSync(hostJs, `
const { buildSandboxCommand } = require(${JSON.stringify(path.resolve(__dirname, '../..'))})
const { spawnSync } = require('node:child_process')
;(async () => {
  for (const argv of [['python3', '-c', ${JSON.stringify(attack)}], ['echo', 'second-run-ran']]) {
    const plan = await buildSandboxCommand(argv, { cwd: ${JSON.stringify(tree.ws)} })
    const r = spawnSync(plan.program, plan.args, { cwd: plan.cwd, env: plan.env, stdio: 'inherit' })
    process.stdout.write('EXIT ' + r.status + '\\n')
  }
})()
`)
  const driver = `
import fcntl, os, pty, select, struct, subprocess, sys
m, s = pty.openpty()
p = subprocess.Popen([${JSON.stringify(process.execPath)}, ${JSON.stringify(hostJs)}], stdin=s, stdout=s, stderr=s)
out = b''
while True:
    r, _, _ = select.select([m], [], [], 0.2)
    if r:
        try: out += os.read(m, 4096)
        except OSError: break
    elif p.poll() is not None: break
${after}
sys.stdout.write(out.decode('utf-8', 'replace') + after)
`
  return new Promise((resolve) => {
    const p = spawn('python3', ['-c', driver], { stdio: ['ignore', 'pipe', 'inherit'], timeout: 60_000 })
    let text = ''
    p.stdout.on('data', (d) => (text += d))
    p.on('close', () => resolve(text.replace(/\r/g, '')))
  })
}

/** A python script that opens each path for writing and writes back its current content. */
function writeBackScript(paths) {
  return `
import os, sys
for p in ${JSON.stringify(paths)}:
    try:
        cur = open(p, 'rb').read()
    except OSError as e:
        cur = b''
    try:
        fd = os.open(p, os.O_WRONLY)
    except OSError as e:
        print('open-failed', p, e.strerror); continue
    try:
        if cur: os.write(fd, cur)
        print('WROTE' if cur else 'OPENED', p)
    except OSError as e:
        print('write-failed', p, e.strerror)
    finally:
        os.close(fd)
`
}

function assertNoWrite(r, paths) {
  assert.equal(r.exitCode, 0, show(r))
  for (const p of paths) {
    assert.ok(!r.stdout.includes(`WROTE ${p}\n`) && !r.stdout.includes(`OPENED ${p}\n`), `${p} was writable\n${show(r)}`)
    assert.match(r.stdout, new RegExp(`(open|write)-failed ${p.replace(/[/.]/g, '\\$&')} `), show(r))
  }
}

const readOrNull = (p) => {
  try {
    return fs.readFileSync(p)
  } catch {
    return null
  }
}

describe('privilege (root inside, no capabilities)', { concurrency: 4 }, () => {
  test('all capability sets are empty, no_new_privs and seccomp are on', async () => {
    const r = await run(['grep', '-E', '^(Cap|NoNewPrivs|Seccomp:)', '/proc/self/status'])
    assert.equal(r.exitCode, 0, show(r))
    for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) assert.match(r.stdout, new RegExp(`^${set}:\\s+0000000000000000$`, 'm'), show(r))
    assert.match(r.stdout, /^NoNewPrivs:\s+1$/m)
    assert.match(r.stdout, /^Seccomp:\s+2$/m)
  })

  // A missing protected name is kept absent by moving aside what the command creates (issue 28):
  // no placeholder, no capability, no mount the command could undo.
  test('workspace-write: no capabilities, no user namespace; a created protected name is moved aside, not left', async (t) => {
    const tree = tempTree(t)
    const before = hostMounts()
    const script = [
      'grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb)" /proc/self/status',
      'unshare -U true && echo UNSHARED',
      'ls -A',
      'echo x > .envrc && echo WROTE',
      'echo ok',
    ].join('; ')
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write', toolCaches: 'none' } })
    assert.equal(r.exitCode, 0, show(r))
    for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapBnd', 'CapAmb']) assert.match(r.stdout, new RegExp(`^${set}:\\s+0000000000000000$`, 'm'), show(r))
    assert.doesNotMatch(r.stdout, /UNSHARED/, show(r))
    assert.doesNotMatch(r.stdout, /\.envrc\n|\.vscode|\.git\n/, 'nothing of sandspawn is listed in the workspace')
    assert.match(r.stdout, /ok\n$/)
    assert.equal(hostMounts(), before)
    assert.ok(!fs.existsSync(path.join(tree.ws, '.envrc')), 'the created .envrc is gone')
    assert.ok(r.hostRisks.some((h) => h.kind === 'protected-name-created' && h.path === path.join(tree.ws, '.envrc') && /moved aside/.test(h.detail)), show(r) + JSON.stringify(r.hostRisks))
  })

  test('mount -o remount,rw / fails and the host mounts are unchanged', async () => {
    const before = hostMounts()
    const r = await sh('mount -o remount,rw / ; echo "rc=$?"; touch /sandspawn-sec-remount 2>/dev/null && echo WROTE; umount /proc; echo "umount=$?"; mount --bind /tmp /usr; echo "bind=$?"')
    assert.match(r.stdout, /rc=(1|32)\n/, show(r))
    assert.doesNotMatch(r.stdout, /WROTE|umount=0|bind=0/, show(r))
    assert.match(r.stderr, DENIED, show(r))
    assert.equal(fs.existsSync('/sandspawn-sec-remount'), false)
    assert.equal(hostMounts(), before)
  })

  test('mount -t tmpfs none /mnt fails and the host mounts are unchanged', async () => {
    const before = hostMounts()
    const r = await sh('mount -t tmpfs none /mnt; echo "rc=$?"; python3 -c "import ctypes,os,sys; l=ctypes.CDLL(None,use_errno=True); rc=l.mount(b\'none\', b\'/mnt\', b\'tmpfs\', 0, None); print(\'pymount\', rc, os.strerror(ctypes.get_errno()))"')
    assert.match(r.stdout, /rc=(1|32)\n/, show(r))
    assert.match(r.stdout, /pymount -1 (Operation not permitted|Permission denied)/, show(r))
    assert.match(r.stderr, DENIED, show(r))
    assert.equal(hostMounts(), before)
  })

  test('a new user namespace (to regain capabilities) cannot be created', async () => {
    const code = `
import ctypes, os, sys
l = ctypes.CDLL(None, use_errno=True)
rc = l.unshare(0x10000000)  # CLONE_NEWUSER
print('unshare', rc, os.strerror(ctypes.get_errno()))
sys.exit(0 if rc != 0 else 1)
`
    const r = await run(['python3', '-c', code])
    assert.equal(r.exitCode, 0, show(r))
    assert.match(r.stdout, /unshare -1 /, show(r))
  })

  test(`kernel modules cannot be loaded (init_module/finit_module via ctypes${which('insmod') ? ', insmod' : ''}${which('modprobe') ? ', modprobe' : ''})`, async () => {
    const before = fs.readdirSync('/sys/module').sort()
    const code = `
import ctypes, os, sys
l = ctypes.CDLL(None, use_errno=True)
l.syscall.restype = ctypes.c_long
buf = ctypes.create_string_buffer(b'\\x7fELF' + b'\\0' * 60)
rc1 = l.syscall(175, buf, 64, b'')  # init_module
e1 = ctypes.get_errno()
fd = os.open('/dev/null', os.O_RDONLY)
rc2 = l.syscall(313, fd, b'', 0)  # finit_module
e2 = ctypes.get_errno()
print('init_module', rc1, os.strerror(e1)); print('finit_module', rc2, os.strerror(e2))
sys.exit(0 if rc1 == -1 and rc2 == -1 and e1 in (1, 38) and e2 in (1, 38) else 1)
`
    const r = await run(['python3', '-c', code])
    assert.equal(r.exitCode, 0, show(r))
    assert.match(r.stdout, /init_module -1 (Operation not permitted|Function not implemented)/, show(r))
    for (const tool of ['insmod', 'modprobe']) {
      if (!which(tool)) continue
      const t = await run([tool, 'dummy'])
      assert.notEqual(t.exitCode, 0, show(t))
    }
    assert.deepEqual(fs.readdirSync('/sys/module').sort(), before)
  })

  test('/sys cannot be written (write back the current value)', async () => {
    const paths = ['/sys/kernel/mm/transparent_hugepage/enabled', '/sys/kernel/mm/ksm/run', '/sys/kernel/mm/transparent_hugepage/defrag'].filter((p) => fs.existsSync(p))
    assert.ok(paths.length > 0, 'no known writable /sys file exists on this host')
    const before = paths.map(readOrNull)
    const r = await run(['python3', '-c', writeBackScript(paths)])
    assertNoWrite(r, paths)
    assert.deepEqual(paths.map(readOrNull), before)
  })

  test('a setuid-root binary gains nothing', { skip: process.getuid() !== 0 && 'making the setuid copies needs root (chown)' }, async (t) => {
    const tree = tempTree(t)
    const suidGrep = path.join(tree.ws, 'grep')
    fs.copyFileSync('/usr/bin/grep', suidGrep)
    fs.chmodSync(suidGrep, 0o4755)
    const suidId = path.join(tree.ws, 'id')
    fs.copyFileSync('/usr/bin/id', suidId)
    fs.chownSync(suidId, 65534, 65534)
    fs.chmodSync(suidId, 0o6755)
    const r = await sh('./grep -E "^Cap(Eff|Prm)" /proc/self/status; ./id; /usr/bin/su -c true root; echo "su=$?"', { cwd: tree.ws })
    assert.match(r.stdout, /^CapEff:\s+0000000000000000$/m, show(r))
    assert.match(r.stdout, /^CapPrm:\s+0000000000000000$/m, show(r))
    assert.doesNotMatch(r.stdout, /euid=|egid=/, `the setuid bit took effect\n${show(r)}`)
    assert.doesNotMatch(r.stdout, /su=0\n/, show(r))
  })

  // Found by an attacker's review: in the default mode (workspace-write), as root, `cp /bin/bash
  // rootsh && chmod 4755 rootsh` in the workspace exited 0 with no host risk, and left a setuid-root
  // shell on the host (the sandbox's nosuid mount does not follow the file out): any local user's
  // `./rootsh -p` was root. As an ordinary user it lends that user's identity the same way. The
  // filter now refuses set-ID bits in every mode, at chmod and at creation.
  test('no set-ID bit can be set in the workspace (chmod u+s, chmod g+s, open with a set-ID mode)', async (t) => {
    const tree = tempTree(t)
    fs.chmodSync(tree.ws, 0o755)
    const script = `
cp /bin/sh ./rootsh || exit 9
chmod 4755 ./rootsh; echo "chmod-4755=$?"
chmod g+s ./rootsh; echo "chmod-g+s=$?"
python3 -c '
import errno, os
for name, mode in (("made-u", 0o4755), ("made-g", 0o2755)):
    try:
        os.close(os.open(name, os.O_CREAT | os.O_WRONLY, mode)); print("open", name, "ok")
    except OSError as e:
        print("open", name, errno.errorcode[e.errno])
'`
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' } })
    assert.equal(r.exitCode, 0, show(r))
    assert.match(r.stdout, /^chmod-4755=1$/m, show(r))
    assert.match(r.stdout, /^chmod-g\+s=1$/m, show(r))
    assert.match(r.stderr, /Operation not permitted/, show(r))
    assert.match(r.stdout, /^open made-u EPERM$/m, show(r))
    assert.match(r.stdout, /^open made-g EPERM$/m, show(r))
    for (const name of fs.readdirSync(tree.ws)) {
      const mode = fs.lstatSync(path.join(tree.ws, name)).mode
      assert.equal(mode & 0o6000, 0, `${name} is ${mode.toString(8)} on the host\n${show(r)}`)
    }
  })

  test('TIOCSTI cannot inject and /dev/tty cannot be opened (new session, no terminal)', async () => {
    const code = `
import fcntl, termios, os, sys
ok = 0
for fd in (0, 1, 2):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b'x'); print('INJECTED', fd)
    except OSError as e:
        ok += 1; print('tiocsti-failed', fd, e.strerror)
try:
    t = os.open('/dev/tty', os.O_RDWR); fcntl.ioctl(t, termios.TIOCSTI, b'x'); print('INJECTED tty')
except OSError as e:
    ok += 1; print('tty-failed', e.strerror)
print('sid', os.getsid(0), 'pid', os.getpid(), 'pgid', os.getpgid(0))
sys.exit(0 if ok == 4 else 1)
`
    const r = await run(['python3', '-c', code])
    assert.equal(r.exitCode, 0, show(r))
    assert.doesNotMatch(r.stdout, /INJECTED/)
  })

  test('TIOCSTI from a sandbox started under a real terminal cannot reach it', async (t) => {
    // The host program runs on a pty (its controlling terminal); the sandboxed command tries to
    // open /dev/tty and push a command into that terminal's input.
    const tree = tempTree(t)
    const marker = token('TIOCSTI')
    const inner = `
import fcntl, termios, os
for target in ('/dev/tty', '/proc/self/fd/0'):
    try:
        fd = os.open(target, os.O_RDWR)
        for ch in ${JSON.stringify(`echo ${marker}\n`)}: fcntl.ioctl(fd, termios.TIOCSTI, ch.encode())
        print('INJECTED', target)
    except OSError as e:
        print('failed', target, e.strerror)
`
    const hostJs = path.join(tree.out, 'host.js')
    fs.writeFileSync(hostJs, `
const { spawnSandboxed } = require(${JSON.stringify(path.resolve(__dirname, '../..'))})
spawnSandboxed(['python3', '-c', ${JSON.stringify(inner)}]).then((r) => { process.stdout.write('RESULT ' + JSON.stringify(r.stdout + r.stderr) + '\\n'); setTimeout(() => process.exit(0), 300) })
`)
    const driver = `
import os, pty, sys, select, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(${JSON.stringify(process.execPath)}, [${JSON.stringify(process.execPath)}, ${JSON.stringify(hostJs)}])
out = b''
deadline = time.time() + 15
while time.time() < deadline:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try: chunk = os.read(fd, 4096)
        except OSError: break
        if not chunk: break
        out += chunk
    elif os.waitpid(pid, os.WNOHANG)[0]: break
sys.stdout.write(out.decode('utf-8', 'replace'))
`
    const out = await new Promise((resolve) => {
      const p = spawn('python3', ['-c', driver], { stdio: ['ignore', 'pipe', 'inherit'] })
      let text = ''
      p.stdout.on('data', (d) => (text += d))
      p.on('close', () => resolve(text))
    })
    assert.match(out, /RESULT /, `the host program did not run under the pty: ${out}`)
    assert.doesNotMatch(out, /INJECTED/, out)
    // Injected input would be echoed by the pty (line discipline) even if nobody reads it.
    const echoed = out.split('\n').filter((l) => l.includes(marker) && !l.startsWith('RESULT'))
    assert.deepEqual(echoed, [], `input was injected into the host terminal: ${out}`)
  })

  // Found by an attacker's review (fixes18/excl.sh): a command given the caller's terminal
  // (buildSandboxCommand and stdio 'inherit', the README's example) made it exclusive (TIOCEXCL),
  // which outlived the run: every later run given it failed setup (exit 125, its reopen got EBUSY)
  // and, as an ordinary user, the user's own programs could not open their terminal by name.
  test("a command given the caller's terminal cannot make it exclusive; the next run starts", { skip: which('python3') === null && 'python3 is not installed' }, async (t) => {
    const excl = `
import fcntl, termios
try:
    fcntl.ioctl(0, termios.TIOCEXCL); print('EXCL set')
except OSError as e:
    print('EXCL refused', e.strerror)
`
    // Whether the terminal is exclusive (TIOCGEXCL: root may open it anyway, so asking is the one
    // test for every user).
    const after = "excl = struct.unpack('i', fcntl.ioctl(s, 0x80045440, b'\\0' * 4))[0]\nafter = 'EXCLUSIVE %d\\n' % excl"
    const out = await onCallersTerminal(tempTree(t), excl, after)
    assert.match(out, /^EXCL refused Operation not permitted$/m, out)
    assert.match(out, /^second-run-ran$/m, out)
    assert.deepEqual(out.match(/^EXIT \d+$/gm), ['EXIT 0', 'EXIT 0'], out)
    assert.match(out, /^EXCLUSIVE 0$/m, out)
  })

  // Found by an attacker's review (fixes19/ldisc.py, tcooff.py): as TIOCEXCL above, a line
  // discipline set on the caller's terminal (TIOCSETD to N_NULL) outlives the run: the terminal
  // took no input, refused tcgetattr, and the host's Node aborted in its exit's ResetStdio; and
  // tcflow(TCOOFF) left its output stopped, so the host's next write blocked.
  test("a command given the caller's terminal cannot change its line discipline or stop its output", { skip: which('python3') === null && 'python3 is not installed' }, async (t) => {
    const attack = `
import fcntl, struct, termios
for name, req, arg in (('SETD', 0x5423, struct.pack('i', 27)), ('TCOOFF', termios.TCXONC, 0)):
    try:
        fcntl.ioctl(1, req, arg); print(name, 'done')
    except OSError as e:
        print(name, 'refused', e.strerror)
`
    // The terminal's discipline (0 is N_TTY), and whether a write to it goes through (a stopped
    // output takes none: EAGAIN, non-blocking).
    const after = [
      "disc = struct.unpack('i', fcntl.ioctl(s, 0x5424, b'\\0' * 4))[0]",
      'os.set_blocking(s, False)',
      "try: os.write(s, b'x'); flowing = 1",
      'except OSError: flowing = 0',
      "after = 'HOST EXIT %d\\nDISCIPLINE %d\\nFLOWING %d\\n' % (p.returncode, disc, flowing)",
    ].join('\n')
    const out = await onCallersTerminal(tempTree(t), attack, after)
    assert.match(out, /^SETD refused Operation not permitted$/m, out)
    assert.match(out, /^TCOOFF refused Operation not permitted$/m, out)
    assert.match(out, /^second-run-ran$/m, out)
    assert.deepEqual(out.match(/^EXIT \d+$/gm), ['EXIT 0', 'EXIT 0'], out)
    assert.match(out, /^HOST EXIT 0$/m, out)
    assert.match(out, /^DISCIPLINE 0$/m, out)
    assert.match(out, /^FLOWING 1$/m, out)
  })

  test('no host block devices or kernel memory in /dev', async () => {
    const r = await sh('ls /dev; for d in /dev/vda /dev/sda /dev/nvme0n1 /dev/mem /dev/kmem /dev/port /dev/kmsg; do test -e $d && echo "PRESENT $d"; done; true')
    assert.equal(r.exitCode, 0, show(r))
    assert.doesNotMatch(r.stdout, /PRESENT/, show(r))
    assert.match(r.stdout, /^null$/m)
  })

  test('no host file descriptor leaks into the sandbox', async (t) => {
    const tree = tempTree(t)
    const secretFile = path.join(tree.out, 'open-secret')
    fs.writeFileSync(secretFile, 'x')
    const fd = fs.openSync(secretFile, 'r')
    t.after(() => fs.closeSync(fd))
    const r = await sh('for f in /proc/self/fd/*; do echo "$f -> $(readlink $f)"; done')
    assert.equal(r.exitCode, 0, show(r))
    const fds = r.stdout.trim().split('\n').map((l) => Number(/fd\/(\d+)/.exec(l)[1]))
    // 0, 1, 2, plus the one the shell glob itself holds open at most
    assert.ok(fds.every((n) => n <= 3), `unexpected descriptors inside: ${r.stdout}`)
    assert.ok(!r.stdout.includes(secretFile), show(r))
  })
})

describe('kernel settings (root inside)', { concurrency: 4 }, () => {
  const sysctls = ['/proc/sys/kernel/printk_ratelimit', '/proc/sys/kernel/core_pattern', '/proc/sys/kernel/hostname', '/proc/sys/vm/drop_caches']

  // core_pattern must not change meanwhile: other suites on the machine set it for a while
  // (kernel-surface), under a lock this test shares (fixtures/machine-setting.js). Only root's
  // suites set it; a lock file made by another user would keep root's out of /run/lock.
  test('writing back the current value of printk_ratelimit, core_pattern, hostname fails; drop_caches cannot be opened for writing', { timeout: 180000 }, async (t) => {
    if (process.getuid() === 0) await machineSetting.hold(t, '/proc/sys/kernel/core_pattern', { shared: true })
    const before = sysctls.map(readOrNull)
    const hostname = os.hostname()
    const r = await run(['python3', '-c', writeBackScript(sysctls)])
    assertNoWrite(r, sysctls)
    assert.match(r.stdout, /open-failed \/proc\/sys\/vm\/drop_caches /, show(r))
    assert.deepEqual(sysctls.map(readOrNull), before)
    const h = await sh(`hostname sandspawn-sec; echo "rc=$?"; sysctl -w kernel.printk_ratelimit=$(cat /proc/sys/kernel/printk_ratelimit) 2>&1; echo "sysctl=$?"`)
    assert.match(h.stdout, /rc=1\n/, show(h))
    assert.doesNotMatch(h.stdout, /sysctl=0/, show(h))
    assert.equal(os.hostname(), hostname)
  })

  // Found by an attacker's review: as root, a writable root under /sys (`--writable
  // /sys/kernel/mm/transparent_hugepage/khugepaged`, which the denial line itself suggested) let the
  // command change the host's kernel settings, whose files are judged by mode alone; one under
  // /proc/sys was silently bound read-only again. Each is refused before anything runs, whatever
  // names the path (a symlink, the cwd, TMPDIR, review mode). Nothing here writes a kernel setting:
  // the command would only make a file in a directory of the test's own.
  test('a writable root on a kernel filesystem (/sys, /proc, cgroupfs...) is refused before anything runs', async (t) => {
    const tree = tempTree(t)
    const ran = path.join(tree.out, 'ran')
    fs.symlinkSync('/sys/kernel/mm', path.join(tree.root, 'mm-link'))
    const kernelDirs = ['/sys/kernel/mm', '/proc/irq', '/proc/sys/kernel', '/sys/fs/cgroup', '/sys/fs/cgroup/unified', '/sys/kernel/debug', '/sys/kernel/security', '/sys/fs/bpf', '/proc/sys/fs/binfmt_misc'].filter((p) => fs.existsSync(p))
    const cases = [
      ...kernelDirs.map((d) => [d, { writableRoots: [tree.out, d] }]),
      ['a missing path under /sys', { writableRoots: [tree.out, '/sys/kernel/sandspawn-missing'] }],
      ['a missing path under /proc', { writableRoots: [tree.out, '/proc/sandspawn-missing'] }],
      ['a symlink to /sys/kernel/mm', { writableRoots: [tree.out, path.join(tree.root, 'mm-link')] }],
      ['review mode', { writableRoots: [tree.out, '/sys/kernel/mm'], workspace: 'review' }],
      ['/ (holds /proc and /sys)', { writableRoots: ['/'] }],
    ]
    const refused = async (what, options) => {
      await assert.rejects(sh(`touch ${q(ran)}`, options), (e) => {
        assert.equal(e.code, 'ERR_SANDBOX_INVALID_OPTIONS', `${what}: ${e.message}`)
        assert.match(e.message, /kernel/, what)
        return true
      }, what)
      assert.equal(fs.existsSync(ran), false, `${what}: the command ran`)
    }
    for (const [what, policy] of cases) await refused(what, { sandbox: { mode: 'workspace-write', ...policy } })
    await refused('the cwd', { cwd: '/sys/kernel/mm', sandbox: { mode: 'workspace-write', writableRoots: [tree.out] } })
    await refused('TMPDIR', { env: { TMPDIR: '/sys/kernel/mm' }, sandbox: { mode: 'workspace-write', writableRoots: [tree.out] } })
    const named = await sh('true', { sandbox: { mode: 'workspace-write', writableRoots: ['/sys/kernel/mm'] } }).catch((e) => e)
    assert.match(named.message, /\/sys\/kernel\/mm.*sysfs.*host/, named.message)
    // Read-only there is fine, as before: a read-only cwd in /sys, /proc paths kept read-only or hidden.
    const fine = await sh(`echo ok > ${q(ran)}`, { cwd: '/sys/kernel/mm', sandbox: { mode: 'read-only' } }).catch((e) => e)
    assert.equal(fine.exitCode, 1, show(fine))
    assert.equal(fs.existsSync(ran), false)
    const beside = await sh(`echo ok > ${q(ran)}`, { sandbox: { mode: 'workspace-write', writableRoots: [tree.out], readOnlyPaths: ['/sys/kernel/mm'], denyRead: ['/proc/irq'] } })
    assert.equal(beside.exitCode, 0, show(beside))
    assert.equal(fs.readFileSync(ran, 'utf8'), 'ok\n')
  })

  test(`/proc/sysrq-trigger ${fs.existsSync('/proc/sysrq-trigger') ? 'is' : '(absent on this host) would be'} neither writable (test -w) nor openable O_WRONLY`, async () => {
    // Nothing is ever written to sysrq-trigger, even if the open succeeded.
    const code = `
import os
try:
    fd = os.open('/proc/sysrq-trigger', os.O_WRONLY); os.close(fd); print('OPENED')
except OSError as e:
    print('open-failed', e.strerror)
`
    const r = await sh(`test -w /proc/sysrq-trigger && echo WRITABLE || echo not-writable; python3 -c ${q(code)}`)
    assert.equal(r.exitCode, 0, show(r))
    assert.match(r.stdout, /^not-writable$/m, show(r))
    assert.match(r.stdout, /^open-failed /m, show(r))
    assert.doesNotMatch(r.stdout, /OPENED|WRITABLE/)
  })
})
