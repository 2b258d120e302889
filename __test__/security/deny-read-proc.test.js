'use strict'
// denyRead entries under /proc hide what they name, for every user, or are refused; none is
// dropped and none fails every run.
//
// Found by an attacker's review (/work/atk/fixes18/procdeny.js, procsysdeny.js):
// - below /proc/sys (every user): the helper's user-namespace step detached /proc/sys, and every
//   mask below it, to write user.max_user_namespaces, then bound a fresh /proc/sys read-only: the
//   command read /proc/sys/kernel/hostname and random/boot_id, and listed /proc/sys/user;
// - below another top-level /proc directory (runs as root): the helper bound each top-level entry
//   onto itself read-only without its submounts, so /proc/tty/drivers was readable again;
// - denyRead ['/proc/sys'] failed every run (EROFS writing max_user_namespaces through bwrap's
//   read-only cover), and ['/proc'] failed every run in the helper (no /proc/self/mountinfo).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { run, show, tempTree } = require('./helpers')

const read = (p) => {
  try {
    return fs.readFileSync(p, 'utf8').trim()
  } catch {
    return null
  }
}

// Files whose content the command must not see (each is read through the host's proc here).
const FILES = ['/proc/sys/kernel/hostname', '/proc/sys/kernel/random/boot_id', '/proc/tty/drivers'].filter((p) => read(p))
// Directories whose listing it must not see.
const DIRS = ['/proc/sys/user'].filter((p) => fs.existsSync(p))

const MODES = { 'read-only': 'read-only', 'workspace-write (defaults)': 'workspace-write' }

test('denyRead below /proc/sys and /proc/tty hides each entry, in every mode', async (t) => {
  const { ws } = tempTree(t)
  const script = [
    ...FILES.map((p) => `echo "== ${p}"; cat ${p} 2>&1 | head -c 200; echo`),
    ...DIRS.map((p) => `echo "== ${p}"; ls -A ${p} | wc -l`),
  ].join('; ')
  for (const [name, mode] of Object.entries(MODES)) {
    const r = await run(['sh', '-c', script], { cwd: ws, sandbox: { mode, denyRead: [...FILES, ...DIRS] } })
    assert.equal(r.exitCode, 0, `${name}: ${show(r)}`)
    for (const p of FILES) {
      // A host name may be short enough to be in any text: the line after the header says more.
      const first = read(p).split('\n')[0]
      if (first.length >= 8) assert.ok(!r.stdout.includes(first), `${name}: ${p} was read: ${show(r)}`)
      assert.match(r.stdout, new RegExp(`== ${p}\\n.*Permission denied\\n\\n`), `${name}: ${p}: ${show(r)}`)
    }
    for (const p of DIRS) assert.match(r.stdout, new RegExp(`== ${p}\\n0\\n`), `${name}: ${p} listed: ${show(r)}`)
    assert.deepEqual((r.sandboxDetails.notEnforced || []).filter((x) => /proc/.test(x)), [], name)
  }
})

test('denyRead [\'/proc/sys\'] runs, with /proc/sys empty; the command still creates no user namespace', async (t) => {
  const { ws } = tempTree(t)
  const r = await run(['sh', '-c', 'ls -A /proc/sys | wc -l; cat /proc/sys/kernel/hostname 2>&1 | head -c 100; echo; unshare -U true 2>/dev/null && echo NEW-USERNS || echo refused'], {
    cwd: ws,
    sandbox: { mode: 'read-only', denyRead: ['/proc/sys'] },
  })
  assert.equal(r.exitCode, 0, show(r))
  assert.match(r.stdout, /^0\n.*No such file or directory\n\nrefused\n$/, show(r))
})

test('denyRead of /proc itself or of a process\'s directory is refused before anything runs', async (t) => {
  const { ws } = tempTree(t)
  // /proc/self leads, on the host, to the caller's own pid: inside, the sandbox numbers its own
  // processes, so no mask there could name the same process.
  for (const denied of ['/proc', '/proc/self/environ', '/proc/1', '/proc/thread-self']) {
    const marker = `${ws}/ran-${denied.replace(/\//g, '_')}`
    await assert.rejects(
      run(['sh', '-c', `touch ${marker}`], { cwd: ws, sandbox: { mode: 'workspace-write', denyRead: [denied] } }),
      (e) => e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && /\/proc/.test(e.message),
      denied,
    )
    assert.ok(!fs.existsSync(marker), `${denied}: the command ran`)
  }
})
