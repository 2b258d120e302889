'use strict'
// A run as root cannot change the modes of the host's kernel objects every process shares.
//
// Found by an attacker's review (/work/atk/kernel17/hostmodes.sh): in the default read-only mode, a
// command running as root (the CI's case) did `chmod 640 /dev/full` and the host's /dev/full was
// 640 after the run (bwrap's `--dev` binds the host's device nodes read-write; `--remount-ro /dev`
// covers its tmpfs only), and `chmod 400 /proc/buddyinfo` persisted into every later proc (procfs
// keeps the mode in the kernel's one `proc_dir_entry`). The uid-0 command owns them and needs no
// capability. The helper now remounts the device binds read-only and binds every top-level /proc
// entry but the pid directories read-only: chmod is refused (EROFS); the devices still work.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { run, tempTree, show } = require('./helpers')

const SKIP = process.getuid() !== 0 && 'only a command running as root owns the host\'s device nodes and /proc entries'

// Entries rarely used, so a failure does not disturb the machine; restored in any case.
const OBJECTS = { '/dev/full': 0o640, '/proc/buddyinfo': 0o400, '/proc/driver': 0o500 }

const mode = (p) => fs.statSync(p).mode & 0o7777

test('a root run\'s chmod of /dev/full and of global /proc entries changes nothing on the host; the devices still work', { skip: SKIP }, async (t) => {
  const { ws } = tempTree(t)
  const objects = Object.entries(OBJECTS).filter(([p]) => fs.existsSync(p))
  const before = Object.fromEntries(objects.map(([p]) => [p, mode(p)]))
  try {
    const chmods = objects.map(([p, m]) => `chmod ${m.toString(8)} ${p} 2>&1 || true; `).join('')
    // The devices still read and write on a read-only mount, and the command's own /proc entries
    // still read. They are read-only too since kern34 (the OOM adjustment the helper sets must stay:
    // host-oom.test.js); a process names itself through prctl (the C libraries' own thread).
    const uses = `echo x > /dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c;
      dd if=/dev/zero of=/dev/full bs=1 count=1 2>&1 | grep -c 'No space'; (printf renamed > /proc/$$/comm) 2>/dev/null || cat /proc/$$/comm`
    // A later run's fresh /proc shows the modes the kernel keeps (the host's proc keeps its own
    // inodes' copies until they are evicted).
    const later = async () => JSON.parse((await run(['sh', '-c', `stat -c '"%n": %a,' ${objects.map(([p]) => p).join(' ')} | tr -d '\\n' | sed 's/^/{/; s/,$/}/'`], { cwd: ws })).stdout)
    const seen = await later()
    for (const sandbox of ['read-only', 'workspace-write']) {
      const r = await run(['sh', '-c', chmods + uses], { cwd: ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      assert.deepEqual(await later(), seen, `${sandbox}: the modes a later run sees: ${show(r)}`)
      assert.deepEqual(Object.fromEntries(objects.map(([p]) => [p, mode(p)])), before, `${sandbox}: the host's modes: ${show(r)}`)
      for (const [p] of objects) assert.match(r.stdout, new RegExp(`${p}.*Read-only file system`), sandbox)
      assert.match(r.stdout, /\n4\n4\n1\nsh\n$/, sandbox)
    }
  } finally {
    for (const [p, m] of Object.entries(before)) fs.chmodSync(p, m)
  }
})
