'use strict'
// Mounts the host makes while a run is alive stay out of the sandbox.
//
// Found by an attacker's review (/work/atk/kernel17/propagation.sh, propagation_deny.sh): bwrap
// makes its mount namespace a slave of the host's (MS_SLAVE|MS_REC), so on an ordinary host (where
// systemd makes `/` shared) every mount the host made during a run (a USB stick, sshfs, a
// container's rootfs) appeared inside, writable: the read-only flags were set only on the mounts
// that existed at setup. A command rewrote files outside every writable root (exit 0, nothing
// reported), and a mount onto a `denyRead` path's parent uncovered the masked secret. The helper
// now makes the sandbox's whole tree private before anything else (every bwrap plan).
//
// The test runs in a mount namespace of its own with `/` made shared as systemd makes it (nothing
// on the host changes), and mounts a bind there once the command is running.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree } = require('./helpers')

const SKIP = process.getuid() !== 0 ? 'mounting in a mount namespace of its own (with / made shared) needs root here'
  : spawnSync('unshare', ['--mount', '--propagation', 'private', 'true']).status !== 0 && 'unshare --mount is not available'

const PACKAGE = path.resolve(__dirname, '../..')

/**
 * In a mount namespace whose `/` is shared: for each of `cases` (`[name, sandbox, linux?]`), a run
 * of `probe` (a shell script; `$GO` appears once the host has mounted) while the host binds `src`
 * onto `target`. Each case's stdout, or its error.
 */
function runsWhileHostMounts(root, ws, { src, target, probe, cases }) {
  const script = `
    const s = require(${JSON.stringify(PACKAGE)})
    const fs = require('node:fs')
    const { execFileSync } = require('node:child_process')
    const [root, ws, src, target, probe, cases] = JSON.parse(process.env.ARGS)
    // The command itself (bwrap's and the helper's argv hold the marker too, before the exec).
    const running = (marker) => fs.readdirSync('/proc').some((p) => {
      try { return /^\\d+$/.test(p) && fs.readFileSync('/proc/' + p + '/cmdline', 'utf8').startsWith('sh\\0-c\\0') && fs.readFileSync('/proc/' + p + '/cmdline', 'utf8').endsWith(marker + '\\0') } catch { return false }
    })
    ;(async () => {
      const out = {}
      for (const [name, sandbox, linux] of cases) {
        const go = root + '/go-' + Object.keys(out).length
        const marker = 'probe-' + Object.keys(out).length + '-' + process.pid
        const env = { ...process.env, GO: go, M: target }
        const p = s.spawnSandboxed(['sh', '-c', probe, marker], { cwd: ws, sandbox, linux, env, timeout: 20000 })
          .then((r) => (r.changeSet ? s.discardChangeSet(r.changeSet.id) : null, r.stdout + r.stderr), (e) => e.code + ': ' + e.message)
        // Only once the command runs (the helper's setup is over) does the host mount.
        for (let i = 0; i < 400 && !running(marker); i++) await new Promise((r) => setTimeout(r, 25))
        execFileSync('mount', ['--bind', src, target])
        fs.writeFileSync(go, '')
        out[name] = await p
        execFileSync('umount', [target])
      }
      process.stdout.write(JSON.stringify(out))
    })()`
  const shell = `mount --make-rshared / && exec ${JSON.stringify(process.execPath)} -e "$SCRIPT"`
  const args = JSON.stringify([root, ws, src, target, probe, cases])
  const r = spawnSync('unshare', ['--mount', '--propagation', 'unchanged', 'sh', '-c', shell], { encoding: 'utf8', env: { ...process.env, SCRIPT: script, ARGS: args }, timeout: 120_000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

// Waits for the host's mount (`$GO`), then writes through the mount point.
const WRITE_PROBE = `for i in $(seq 200); do [ -e "$GO" ] && break; sleep 0.025; done
  ls "$M" | tr '\\n' ' '; echo
  # stderr closed, not sent to /dev/null: a plan may mask /dev.
  (exec 2>&-; echo "written by the sandboxed command" > "$M/file") && echo WROTE || echo refused`

test('a host mount made during a run is not seen, nor written, inside (every bwrap plan; Landlock: the host\'s own rules)', { skip: SKIP }, (t) => {
  const { root, ws, out } = tempTree(t)
  const src = path.join(root, 'stick')
  fs.mkdirSync(src)
  fs.writeFileSync(path.join(src, 'file'), 'original\n')
  const cases = [
    ['read-only', 'read-only'],
    ['workspace-write', 'workspace-write'],
    ['review', { mode: 'workspace-write', workspace: 'review' }],
    // A plan in which the helper mounts nothing else (no /dev, hence no /dev/shm nor devpts).
    ['read-only with denyRead /dev', { mode: 'read-only', denyRead: ['/dev'] }],
    ['workspace-write with denyRead /dev', { mode: 'workspace-write', denyRead: ['/dev'], protectGit: false, protectedNames: [], toolCaches: 'none' }],
    ['landlock', 'workspace-write', { allow: ['landlock'] }],
  ]
  const got = runsWhileHostMounts(root, ws, { src, target: out, probe: WRITE_PROBE, cases })
  // bwrap: the mount point stays the (empty) directory it was at setup. Landlock has no mount
  // namespace: the host's mount is the host's, seen as it is, but no write rule covers it.
  const expected = Object.fromEntries(cases.map(([name]) => [name, name === 'landlock' ? 'file \nrefused\n' : '\nrefused\n']))
  if (/ERR_SANDBOX_UNAVAILABLE/.test(got.landlock)) got.landlock = expected.landlock
  assert.deepEqual(got, expected)
  assert.equal(fs.readFileSync(path.join(src, 'file'), 'utf8'), 'original\n')
})

test('a host mount made during a run onto a denyRead path\'s parent uncovers nothing', { skip: SKIP }, (t) => {
  const { root, ws, out } = tempTree(t)
  fs.mkdirSync(path.join(out, 'sub'))
  fs.writeFileSync(path.join(out, 'sub', 'key'), 'old secret\n')
  const src = path.join(root, 'vault')
  fs.mkdirSync(path.join(src, 'sub'), { recursive: true })
  fs.writeFileSync(path.join(src, 'sub', 'key'), 'NEW SECRET\n')
  const probe = `for i in $(seq 200); do [ -e "$GO" ] && break; sleep 0.025; done
    cat "$M/sub/key" 2>/dev/null || echo unreadable`
  const cases = [
    ['denyRead on the directory', { mode: 'workspace-write', denyRead: [path.join(out, 'sub')] }],
    ['denyRead on the file', { mode: 'workspace-write', denyRead: [path.join(out, 'sub', 'key')] }],
    ['denyRead on the file, read-only', { mode: 'read-only', denyRead: [path.join(out, 'sub', 'key')] }],
  ]
  const got = runsWhileHostMounts(root, ws, { src, target: out, probe, cases })
  assert.deepEqual(got, Object.fromEntries(cases.map(([name]) => [name, 'unreadable\n'])))
})
