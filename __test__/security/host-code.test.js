'use strict'
// A root run with /usr (or /etc) writable cannot plant code the host, or the next run's system
// bwrap, loads.
//
// Found by an attacker's review: the system program directories were kept read-only in a writable
// root that holds them, but the libraries were not. A root run with cwd /usr wrote
// /usr/lib/x86_64-linux-gnu/libcap.so.2 (on merged-usr /lib is /usr/lib), and the next run's
// system bwrap loaded it: its constructor ran on the host as root. The test runs in a private mount
// namespace where /usr and /etc are overlays whose upper layers are the test's own directories, so
// the host's /usr and /etc are never written; what a run wrote lands in those upper layers.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree, q } = require('./helpers')

const SKIP = process.getuid() !== 0 ? 'a run that can write /usr needs root, and mounting an overlay over it a mount namespace of its own'
  : spawnSync('unshare', ['--mount', '--propagation', 'private', 'true']).status !== 0 && 'unshare --mount is not available'

const PACKAGE = path.resolve(__dirname, '../..')

// Each write the run tries, with the cwd /usr: the loader's directories (through /lib too, which
// merged-usr makes a link to usr/lib), a missing one, the loader's configuration (with /etc
// writable), /usr's other entries (share: Perl's modules, git's template hooks; include; local/etc),
// and /usr/src, which stays writable (Docker's WORKDIR /usr/src/app).
const WRITES = `
  for f in lib/sandspawn-probe /lib/sandspawn-probe lib64/sandspawn-probe libexec/sandspawn-probe local/lib/sandspawn-probe \
           share/sandspawn-probe local/share/sandspawn-probe local/etc/sandspawn-probe include/sandspawn-probe \
           /etc/ld.so.preload /etc/ld.so.conf.d/sandspawn-probe.conf /etc/ld.so.cache /etc/ld.so.conf src/sandspawn-probe; do
    if [ -e "$f" ] && [ "\${f#/etc/ld.so.c}" != "$f" ]; then (printf '' >> "$f") 2>/dev/null && echo "wrote $f"; continue; fi
    (echo x > "$f") 2>/dev/null && echo "wrote $f"
  done
  mkdir lib32 2>/dev/null && echo "wrote lib32"
  true`

/** In a private mount namespace with /usr and /etc overlaid: each mode's output, and what reached the upper layers. */
function runInUsr(root) {
  const script = `
    const s = require(${JSON.stringify(PACKAGE)})
    const sandbox = { mode: 'workspace-write', writableRoots: ['/etc'] }
    const one = async (extra) => {
      try {
        const r = await s.spawnSandboxed(['sh', '-c', process.env.WRITES], { cwd: '/usr', sandbox: { ...sandbox, ...extra.sandbox }, linux: extra.linux })
        if (r.changeSet) await s.applyChangeSet(r.changeSet.id)
        return { type: r.sandboxType, out: r.stdout }
      } catch (e) { return { type: 'error', out: e.code + ': ' + e.message } }
    }
    ;(async () => {
      const out = {}
      out.bwrap = await one({})
      // Not /etc: this test's overlay hides the host's mounts below /etc, which review mode would put back.
      out.review = await one({ sandbox: { workspace: 'review', writableRoots: [] } })
      out.landlock = await one({ linux: { allow: ['landlock'] } })
      process.stdout.write(JSON.stringify(out))
    })()`
  for (const d of ['usr-up', 'usr-work', 'etc-up', 'etc-work']) fs.mkdirSync(path.join(root, d))
  const overlay = (dir, up, work) => `mount -t overlay overlay -o lowerdir=${dir},upperdir=${q(path.join(root, up))},workdir=${q(path.join(root, work))} ${dir}`
  const shell = `set -e; ${overlay('/usr', 'usr-up', 'usr-work')}; ${overlay('/etc', 'etc-up', 'etc-work')}; cd /usr; ${q(process.execPath)} -e "$SCRIPT"`
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', shell], { encoding: 'utf8', env: { ...process.env, SCRIPT: script, WRITES }, timeout: 120_000 })
  assert.equal(r.status, 0, r.stderr)
  const landed = []
  for (const [up, top] of [['usr-up', '/usr'], ['etc-up', '/etc']]) {
    const walk = (dir, rel) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name)
        // What a run created at a missing kept path is moved aside to `<name>.sandspawn-held-*`,
        // which the loader never reads.
        const aside = e.name.includes('.sandspawn-held-')
        if (!aside && (e.name.includes('sandspawn-probe') || /^(ld\.so|lib32)/.test(e.name))) landed.push(path.join(rel, e.name))
        if (e.isDirectory()) walk(p, path.join(rel, e.name))
      }
    }
    walk(path.join(root, up), top)
  }
  spawnSync('chmod', ['-R', 'u+rwx', root])
  return { out: JSON.parse(r.stdout), landed: landed.sort() }
}

test('a root run with /usr and /etc writable writes neither the libraries nor the loader configuration', { skip: SKIP }, (t) => {
  const { root } = tempTree(t)
  const { out, landed } = runInUsr(root)
  // A missing path (/etc/ld.so.preload, /usr/lib32) may be created in the run: what it made there is
  // moved aside after it (direct) or held back (review). It must not land.
  const kept = (text) => text.split('\n').filter((l) => l && !/ld\.so\.preload|lib32/.test(l)).join('\n')
  const ran = Object.entries(out).filter(([mode, r]) => mode !== 'landlock' || r.type === 'landlock')
  assert.deepEqual(Object.fromEntries(ran.map(([mode, r]) => [mode, kept(r.out)])), Object.fromEntries(ran.map(([mode]) => [mode, 'wrote src/sandspawn-probe'])), JSON.stringify(out))
  // /usr/src/sandspawn-probe from each mode that ran; nothing else.
  assert.deepEqual([...new Set(landed)], ['/usr/src/sandspawn-probe'], JSON.stringify(landed))
})
