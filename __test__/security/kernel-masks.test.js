'use strict'
// Found by an attacker's review (root host user): the command read, and so consumed, the host's
// kernel trace buffer (`/sys/kernel/tracing/trace_pipe`: the read-only `/` stops no read, and a
// read takes the events a host tracer was waiting for), and read `/proc/kpageflags` and its
// siblings (the host's physical page map). They are hidden in every bwrap plan, as Docker's masked
// paths are: the directories empty and read-only, the files empty. `trace_pipe` is never read here
// (a read would block, and take the host's events): the probe only looks for it.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { execFileSync } = require('node:child_process')
const { run, show, tempTree, which } = require('./helpers')

// Found by an attacker's review (root host user): a read of `/sys/class/zram-control/hot_add`
// makes the host kernel add a zram block device, one per read, outliving the run; a read of
// `/proc/sys/vm/stat_refresh` queues work on every host CPU and waits for it (and reads empty, so
// the probe tells the mask by the file's type: the sandbox's /dev/null, a character device).
// Found by an attacker's review (kern27, root host user): `/sys/kernel/slab` showed every slab
// cache's object and slab counts, the same state `/proc/slabinfo` (hidden) shows, root-only on the
// host for the same reasons; `objects` and `objects_partial` count each node's whole partial list
// holding its list lock with interrupts off, the walk Linux 6.10 bounded for slabinfo alone. Idle
// page tracking's bitmap, root-only, is kpageflags' twin, and a read of it clears the accessed bits
// of the host's page tables (absent on kernels without CONFIG_IDLE_PAGE_TRACKING).
// Found by an attacker's review (kern31): `/proc/fs` (bwrap binds the host's read-only, which stops
// no read) holds the filesystems' own state, and ext4's `es_shrinker_info` walks every in-memory
// inode of the filesystem with cached extents holding its spinlock (154,000 here: host processes
// pinned to a CPU woke up to 25 ms late from a 1 ms sleep while one idle-priority reader looped),
// a list the command lengthens by reading files of its own there; `mb_groups` loads every block
// group's bitmaps from the disk.
const DIRS = ['/sys/kernel/tracing', '/sys/kernel/debug', '/sys/devices/virtual/powercap', '/sys/class/zram-control', '/sys/kernel/slab', '/sys/kernel/mm/page_idle', '/proc/fs']
// Found by an attacker's review (root host user): `/proc/pagetypeinfo` (root-only on the host since
// Linux 5.4) walks every free list holding the zone lock with interrupts off, each read; so do
// `/proc/slabinfo` and `/proc/vmallocinfo` with their global locks (and the latter shows kernel
// addresses).
// Found by an attacker's review (kern31): `/proc/locks`, world-readable, takes the machine's file-lock
// lock for writing (every flock and fcntl lock of every process takes it to read) and a spinlock, and
// walks every lock of the machine from the first to where the read starts, inside one hold: a run
// that took 1,000,000 byte-range locks on its own files and read at a deep offset, at idle priority,
// held it 0.55 s a read; host lock calls waited up to 622 ms and host processes pinned to either CPU
// woke up to 327 ms late. It also lists the host processes' locks (device and inode of each file).
const FILES = ['/proc/kpageflags', '/proc/kpagecount', '/proc/kpagecgroup', '/proc/keys', '/proc/timer_list', '/proc/sched_debug', '/proc/kcore', '/proc/sys/vm/stat_refresh', '/proc/pagetypeinfo', '/proc/slabinfo', '/proc/vmallocinfo', '/proc/locks']

// Per path one line: a directory's entry count and whether a file can be made in it; a file's
// bytes read (at most 4 KiB), or the errno's name.
const PROBE = `
import errno, json, os, stat, sys
for p in ${JSON.stringify(DIRS)}:
    if not os.path.isdir(p):
        print(p, 'absent'); continue
    try:
        n = len(os.listdir(p))
    except OSError as e:
        n = errno.errorcode[e.errno]
    try:
        os.close(os.open(p + '/sandspawn-probe', os.O_WRONLY | os.O_CREAT, 0o600)); os.unlink(p + '/sandspawn-probe'); w = 'writable'
    except OSError as e:
        w = errno.errorcode[e.errno]
    print(p, 'entries', n, w, 'trace_pipe' if os.path.exists(p + '/trace_pipe') or os.path.exists(p + '/tracing/trace_pipe') else '-')
for p in ${JSON.stringify(FILES)}:
    try:
        with open(p, 'rb') as f:
            print(p, 'read', len(f.read(4096)), 'chr' if stat.S_ISCHR(os.fstat(f.fileno()).st_mode) else 'file')
    except OSError as e:
        print(p, errno.errorcode[e.errno])
# The files' masks as mounts: the last (topmost) mount at each path, its own options' first (rw/ro).
tops = {}
for line in open('/proc/self/mountinfo'):
    f = line.split()
    tops[f[4]] = f[5].split(',')[0]
for p in ${JSON.stringify(FILES)}:
    if p in tops:
        print('mount:' + p, tops[p])
`

const MODES = {
  'workspace-write': 'workspace-write',
  'read-only': 'read-only',
  // A mask of the caller's over one of them: that one is hidden already, the rest still.
  'workspace-write with denyRead of /sys/kernel/debug': { mode: 'workspace-write', denyRead: ['/sys/kernel/debug'] },
}

/** path -> the rest of its line. */
const lines = (out) => Object.fromEntries(out.split('\n').filter(Boolean).map((l) => [l.split(' ')[0], l.split(' ').slice(1).join(' ')]))

const skip = !which('python3') && 'no python3 for the probe'

describe("the host kernel's tracefs, debugfs and page map are hidden", { concurrency: 2 }, () => {
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: the directories are empty and read-only, the files read empty or not at all`, { skip }, async (t) => {
      const tree = tempTree(t)
      const r = await run(['python3', '-c', PROBE], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      const got = lines(r.stdout)
      for (const p of DIRS) {
        assert.match(got[p], /^(absent|entries (0|EACCES) (EROFS|EACCES|EPERM) -)$/, `${p}\n${show(r)}`)
      }
      for (const p of FILES) {
        assert.match(got[p], /^(read 0 chr|ENOENT|EACCES|EPERM)$/, `${p}\n${show(r)}`)
      }
      // Each file's mask is a read-only mount (the helper leaves out a remount when the bind of the
      // read-only /dev/null is read-only already: kernel_masks::hide_file). /proc/keys is in every
      // kernel here, so at least one mask is seen.
      const masks = FILES.filter((p) => got[`mount:${p}`] !== undefined)
      assert.ok(masks.includes('/proc/keys'), show(r))
      for (const p of masks) assert.equal(got[`mount:${p}`], 'ro', `${p}\n${show(r)}`)
    })
  }

  // Found by an attacker's review: the masks were fixed paths, and a tracefs mounted elsewhere (an
  // admin's /mnt/trace, perf's setups) was read from inside, its trace_pipe consumed. Mounted here
  // as root at directories outside the workspace (a writable root may not hold one), and one of its
  // files bound alone: each hidden, a directory empty, the file the sandbox's /dev/null. Nothing is
  // read: the probe lists and stats.
  const mountSkip = skip || (process.getuid() !== 0 ? 'mounting a tracefs needs root' : false)
  test('a tracefs or debugfs mounted elsewhere, or one of its files bound alone, is hidden (root only)', { skip: mountSkip }, async (t) => {
    const tree = tempTree(t)
    const at = (n) => `${tree.root}/${n}`
    const mounted = []
    try {
      for (const [type, dir] of [['tracefs', 'trace'], ['debugfs', 'debug']]) {
        fs.mkdirSync(at(dir))
        execFileSync('mount', ['-t', type, 'nodev', at(dir)])
        mounted.push(at(dir))
      }
      fs.writeFileSync(at('pipe'), '')
      execFileSync('mount', ['--bind', `${at('trace')}/trace_pipe`, at('pipe')])
      mounted.push(at('pipe'))
      const probe = `
import os, stat
for n in ('trace', 'debug'):
    print(n, len(os.listdir(${JSON.stringify(tree.root)} + '/' + n)))
print('pipe', 'regular' if stat.S_ISREG(os.stat(${JSON.stringify(at('pipe'))}).st_mode) else 'not regular')
`
      const outside = lines(execFileSync('python3', ['-c', probe], { encoding: 'utf8' }))
      assert.notEqual(outside.trace, '0', 'the probe sees the tracefs unsandboxed')
      for (const sandbox of ['workspace-write', 'read-only']) {
        const r = await run(['python3', '-c', probe], { cwd: tree.ws, sandbox })
        assert.equal(r.exitCode, 0, show(r))
        assert.deepEqual(lines(r.stdout), { trace: '0', debug: '0', pipe: 'not regular' }, `${sandbox}\n${show(r)}`)
      }
    } finally {
      for (const m of mounted.reverse()) execFileSync('umount', ['-l', m])
    }
  })

  // Found by an attacker's review (fix32) of kern31's masks: they were fixed paths below /proc and
  // /sys, and a procfs or sysfs the host has mounted elsewhere (a build chroot's /proc and /sys, as
  // schroot, pbuilder and debootstrap set up; bwrap's read-only `/` carries them in) showed every
  // masked file again: /proc/locks there walked the machine's whole lock list under the global
  // file-lock lock, /proc/fs the extent caches, /sys/kernel/slab the slab caches, /proc/timer_list
  // the host's timers. Mounted here as root outside the workspace, whole and in parts (a bind of
  // /proc/locks alone, of /proc/sys/vm): each masked file reads empty as the sandbox's /dev/null,
  // each masked directory is empty.
  test('a procfs or sysfs mounted elsewhere, whole or in parts, shows no masked file (root only)', { skip: mountSkip }, async (t) => {
    const tree = tempTree(t)
    const at = (n) => `${tree.root}/${n}`
    const mounted = []
    try {
      for (const [args, dir, file] of [[['-t', 'proc', 'proc'], 'proc'], [['-t', 'sysfs', 'sysfs'], 'sys'], [['--bind', '/proc/locks'], 'locks', true], [['--bind', '/proc/sys/vm'], 'vm']]) {
        if (file) fs.writeFileSync(at(dir), '')
        else fs.mkdirSync(at(dir))
        execFileSync('mount', [...args, at(dir)])
        mounted.push(at(dir))
      }
      const probe = `
import os, stat
def show(p):
    try:
        if os.path.isdir(p):
            return 'entries %d' % len(os.listdir(p))
        with open(p, 'rb') as f:
            return 'read %d %s' % (len(f.read(4096)), 'chr' if stat.S_ISCHR(os.fstat(f.fileno()).st_mode) else 'file')
    except OSError as e:
        return 'error %d' % e.errno
r = ${JSON.stringify(tree.root)}
for p in ('proc/locks', 'proc/timer_list', 'proc/fs', 'sys/kernel/slab', 'locks', 'vm/stat_refresh'):
    print(p, show(r + '/' + p))
`
      const outside = lines(execFileSync('python3', ['-c', probe], { encoding: 'utf8' }))
      assert.match(outside['proc/timer_list'], /^read [1-9]\d* file$/, 'the probe reads the procfs unsandboxed')
      assert.match(outside['proc/fs'], /^entries [1-9]/, 'and lists its fs')
      const hidden = { 'proc/locks': 'read 0 chr', 'proc/timer_list': 'read 0 chr', 'proc/fs': 'entries 0', 'sys/kernel/slab': 'entries 0', locks: 'read 0 chr', 'vm/stat_refresh': 'read 0 chr' }
      for (const sandbox of ['workspace-write', 'read-only']) {
        const r = await run(['python3', '-c', probe], { cwd: tree.ws, sandbox })
        assert.equal(r.exitCode, 0, show(r))
        assert.deepEqual(lines(r.stdout), hidden, `${sandbox}\n${show(r)}`)
      }
    } finally {
      for (const m of mounted.reverse()) execFileSync('umount', ['-l', m])
    }
  })

  // Found by an attacker's review: each read of hot_add made the host kernel add a block device
  // (zramN, /dev/zramN, a uevent), which outlived the run. The read is refused or empty now; a
  // device a failing run made is removed again (by the number it read), so none is left behind.
  const ZRAM = '/sys/class/zram-control'
  const zramSkip = process.getuid() !== 0 ? 'hot_add reads only as root' : !fs.existsSync(`${ZRAM}/hot_add`) && `no ${ZRAM} on this host (the zram module is not loaded)`
  test('a read of zram-control/hot_add adds no host block device (root only)', { skip: zramSkip }, async (t) => {
    const tree = tempTree(t)
    for (const sandbox of ['workspace-write', 'read-only']) {
      const r = await run(['sh', '-c', `cat ${ZRAM}/hot_add`], { cwd: tree.ws, sandbox })
      const made = String(r.stdout).trim()
      try {
        assert.equal(made, '', `${sandbox}: the run added host device zram${made}\n${show(r)}`)
      } finally {
        if (/^\d+$/.test(made)) removeZram(ZRAM, made)
      }
    }
  })

  // kern31's /proc/locks: each read walks the machine's whole lock list, to which the command adds
  // as many byte-range locks of its own as it likes (the kernel prints only the locks of processes
  // the reader's pid namespace shows, but walks them all holding the global locks). The command
  // takes 2,000 here and reads the file: nothing is walked, nothing listed. /proc/fs: nothing of
  // the host filesystem's extent-cache walk.
  test('the command\'s reads of /proc/locks and /proc/fs walk nothing of the host', { skip: !which('python3') && 'no python3' }, async (t) => {
    const tree = tempTree(t)
    const probe = `
import fcntl, glob, os
fd = os.open('locks.dat', os.O_RDWR | os.O_CREAT, 0o600)
for i in range(2000):
    fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, 2 * i)
print('locks listed', sum(1 for line in open('/proc/locks') if 'POSIX' in line))
print('extent walks', sum(1 for p in glob.glob('/proc/fs/*/*/es_shrinker_info') if 'inodes on list' in open(p).read()))
`
    const r = await run(['python3', '-c', probe], { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(r.stdout, 'locks listed 0\nextent walks 0\n', show(r))
  })

  // The probe can tell: on the host, as root, the page map reads (and the tracefs lists).
  test('without a sandbox the probe reads them (root only)', { skip: skip || (process.getuid() !== 0 && 'the files are root-only') }, () => {
    const got = lines(execFileSync('python3', ['-c', PROBE], { encoding: 'utf8' }))
    if (fs.existsSync('/proc/kpageflags')) assert.equal(got['/proc/kpageflags'], 'read 4096 file')
    assert.match(got['/proc/timer_list'], /^read [1-9]/)
    for (const p of ['/proc/pagetypeinfo', '/proc/slabinfo', '/proc/vmallocinfo']) if (fs.existsSync(p)) assert.match(got[p], /^read [1-9]\d* file$/, p)
    if (fs.existsSync('/sys/kernel/tracing/trace_pipe')) assert.match(got['/sys/kernel/tracing'], /^entries [1-9]\d* \w+ trace_pipe$/)
    if (fs.existsSync('/sys/kernel/slab')) assert.match(got['/sys/kernel/slab'], /^entries [1-9]\d* \w+ -$/)
  })
})

/** Removes host zram device `id`. udev may hold a new device open a moment (EBUSY): tried again
 * then, for up to about five seconds (cleanup only, nothing is timed). */
function removeZram(control, id) {
  for (let i = 0; ; i++) {
    try {
      return fs.writeFileSync(`${control}/hot_remove`, id)
    } catch (e) {
      if (e.code !== 'EBUSY' || i >= 100) throw e
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50)
    }
  }
}
