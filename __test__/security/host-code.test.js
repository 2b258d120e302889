'use strict'
// A root run cannot make /usr (or /etc) writable, nor plant code the host, or the next run's
// system bwrap, loads.
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
const { tempTree, q, ownerRwx } = require('./helpers')

const SKIP = process.getuid() !== 0 ? 'a run that can write /usr needs root, and mounting an overlay over it a mount namespace of its own'
  : spawnSync('unshare', ['--mount', '--propagation', 'private', 'true']).status !== 0 && 'unshare --mount is not available'

const PACKAGE = path.resolve(__dirname, '../..')

// What a run tries to plant, from its cwd: the loader's directories (through /lib too, which
// merged-usr makes a link to usr/lib), the loader's configuration, Perl's modules (before perl-base
// in @INC: the host's `perl -e 'use strict'` loads them), git's template hooks (`git clone` copies
// and runs them), /usr/local/etc, a new top entry of /usr/local (`go/bin`, on many a PATH), and
// /usr/src, which stays writable (Docker's WORKDIR /usr/src/app).
const WRITES = `
  for f in /usr/lib/sandspawn-probe /lib/sandspawn-probe /usr/lib64/sandspawn-probe /usr/local/lib/sandspawn-probe \
           /usr/share/sandspawn-probe /usr/share/perl5/sandspawn-probe.pm /usr/local/share/sandspawn-probe \
           /usr/share/git-core/templates/hooks/sandspawn-probe /usr/local/etc/sandspawn-probe /usr/include/sandspawn-probe \
           /etc/ld.so.conf.d/sandspawn-probe.conf /etc/perl/sandspawn-probe.pm /etc/profile.d/sandspawn-probe.sh \
           /usr/src/sandspawn-probe; do
    (echo x > "$f") 2>/dev/null && echo "wrote $f"
  done
  mkdir -p /usr/local/sandspawn-probe-go/bin 2>/dev/null && echo "wrote /usr/local/sandspawn-probe-go"
  true`

/**
 * In a private mount namespace with /usr and /etc overlaid, each case (`{ cwd, writableRoots }`)
 * in each mode: `{ type, out }` (type 'error' with the code and message when refused), and what
 * reached the upper layers.
 */
function runInUsr(root, cases) {
  const script = `
    const s = require(${JSON.stringify(PACKAGE)})
    const one = async (c, extra) => {
      try {
        const sandbox = { mode: 'workspace-write', writableRoots: c.writableRoots || [], ...extra.sandbox }
        const r = await s.spawnSandboxed(['sh', '-c', process.env.WRITES], { cwd: c.cwd, sandbox, linux: extra.linux })
        if (r.changeSet) await s.applyChangeSet(r.changeSet.id)
        return { type: r.sandboxType, out: r.stdout }
      } catch (e) { return { type: 'error', out: e.code + ': ' + e.message } }
    }
    ;(async () => {
      const out = []
      for (const c of JSON.parse(process.env.CASES)) {
        out.push({
          bwrap: await one(c, {}),
          review: await one(c, { sandbox: { workspace: 'review' } }),
          landlock: await one(c, { linux: { allow: ['landlock'] } }),
        })
      }
      process.stdout.write(JSON.stringify(out))
    })()`
  for (const d of ['usr-up', 'usr-work', 'etc-up', 'etc-work']) fs.mkdirSync(path.join(root, d))
  const overlay = (dir, up, work) => `mount -t overlay overlay -o lowerdir=${dir},upperdir=${q(path.join(root, up))},workdir=${q(path.join(root, work))} ${dir}`
  const shell = `set -e; ${overlay('/usr', 'usr-up', 'usr-work')}; ${overlay('/etc', 'etc-up', 'etc-work')}; cd /; ${q(process.execPath)} -e "$SCRIPT"`
  const env = { ...process.env, SCRIPT: script, WRITES, CASES: JSON.stringify(cases) }
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', shell], { encoding: 'utf8', env, timeout: 300_000 })
  assert.equal(r.status, 0, r.stderr)
  const landed = []
  for (const [up, top] of [['usr-up', '/usr'], ['etc-up', '/etc']]) {
    const walk = (dir, rel) => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name)
        // What a run created at a missing kept path is moved aside to `<name>.sandspawn-held-*`,
        // which nothing reads.
        const aside = e.name.includes('.sandspawn-held-')
        if (!aside && e.name.includes('sandspawn-probe')) landed.push(path.join(rel, e.name))
        if (e.isDirectory() && !e.name.includes('sandspawn-probe')) walk(p, path.join(rel, e.name))
      }
    }
    walk(path.join(root, up), top)
  }
  ownerRwx(root)
  return { out: JSON.parse(r.stdout), landed: landed.sort() }
}

// Found by attackers' reviews: a root run with the cwd /usr wrote the libraries the next run's
// system bwrap loads (libcap.so.2) and Perl's modules; with the cwd /usr/share/perl5,
// /usr/local/share, /usr/share/git-core/templates, /usr/local/etc or /etc (not program or library
// directories, and not /usr itself, whose entries were kept) it wrote `strict.pm` (which the host's
// `perl -e 'use strict'` ran as root) and git's template hooks (which the host's next `git clone`
// ran); with /usr/local writable it made a new top entry there (`go/bin/go`). Each is refused
// before anything runs, in every mode, and a link to one is its target.
test('a root run whose cwd or writable root is in /usr or /etc is refused and plants nothing there', { skip: SKIP }, (t) => {
  const { root } = tempTree(t)
  const link = path.join(root, 'perl-link')
  fs.symlinkSync('/usr/share/perl5', link)
  const refused = [
    { cwd: '/usr', writableRoots: ['/etc'] }, { cwd: '/usr/share/perl5' }, { cwd: '/usr/local/share' },
    { cwd: '/usr/share/git-core/templates' }, { cwd: '/usr/local/etc' }, { cwd: '/usr/local' }, { cwd: '/etc' },
    { cwd: '/usr/lib' }, { cwd: link }, { cwd: '/usr/src', writableRoots: ['/usr/share'] },
  ].filter((c) => fs.existsSync(c.cwd))
  const { out, landed } = runInUsr(root, [...refused, { cwd: '/usr/src' }])
  const src = out.pop()
  for (const [i, c] of refused.entries()) {
    for (const [mode, r] of Object.entries(out[i])) {
      assert.equal(r.type, 'error', `${JSON.stringify(c)} ${mode}: ${r.out}`)
      assert.match(r.out, /^ERR_SANDBOX_INVALID_OPTIONS: options\.(cwd|sandbox\.writableRoots): .*plant code/, `${JSON.stringify(c)} ${mode}`)
    }
  }
  // /usr/src stays a workspace; from it nothing else of /usr or /etc is writable.
  const ran = Object.entries(src).filter(([mode, r]) => mode !== 'landlock' || r.type === 'landlock')
  assert.deepEqual(Object.fromEntries(ran.map(([mode, r]) => [mode, r.out.trim()])), Object.fromEntries(ran.map(([mode]) => [mode, 'wrote /usr/src/sandspawn-probe'])), JSON.stringify(src))
  assert.deepEqual([...new Set(landed)], ['/usr/src/sandspawn-probe'], JSON.stringify(landed))
})
