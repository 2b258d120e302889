'use strict'
// toolCaches: 'private' on the real bwrap. Package managers write their caches, the writes land in
// sandspawn's store, the host's caches (a temporary HOME's) stay byte-for-byte the same and their
// content stays readable; and with the network off, lookups fail at once. Nothing here needs the
// network. Temporary homes live under /var/tmp: /tmp is a writable root in workspace-write, and a
// cache inside a writable root is left writable as the user made it (not covered).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const { spawnSandboxed, startSandboxed, SandboxError } = require('..')

const linux = process.platform === 'linux'
const base = fs.mkdtempSync(path.join(fs.existsSync('/var/tmp') ? '/var/tmp' : require('node:os').tmpdir(), 'sandspawn-caches-'))
test.after(async () => {
  // Runs fold their layers after their results (off the result's path): a test that failed early
  // left folds going, and removing the directory under them failed (ENOTEMPTY) and left it behind.
  await require('../binding').toolCachesSettled()
  // The store holds overlayfs's mode-000 work leftovers only when a run was killed; be thorough.
  try { execFileSync('chmod', ['-R', 'u+rwx', base]) } catch {}
  fs.rmSync(base, { recursive: true, force: true })
})

/**
 * A run lets go of its directories in the store and folds the layers after its result went out (off
 * the result's path): wait for that, 10 s at most, then say what is left.
 */
async function afterCleanup(scope, names) {
  const list = (d) => (fs.existsSync(d) ? fs.readdirSync(d) : [])
  // Pending layers not folded yet, writes left in a run's directories (its slot's `upper`, which a
  // run that wrote nothing leaves empty for the next run), run directories of earlier versions.
  const left = () =>
    names.flatMap((name) => {
      const cache = path.join(scope, name)
      const uppers = list(path.join(cache, 'slots')).flatMap((s) => list(path.join(cache, 'slots', s, 'upper')).map((e) => `slots/${s}/upper/${e}`))
      return [...list(path.join(cache, 'pending')).map((e) => `pending/${e}`), ...uppers, ...list(path.join(cache, 'runs')).map((e) => `runs/${e}`)].map((e) => `${name}/${e}`)
    })
  // A bound that catches a fold that never ends, not a speed: a fold of ~100,000 entries took 14 s
  // on this shared machine under load, past the 10 s this waited before (a failure seen so).
  const deadline = Date.now() + 60000
  while (left().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  return left()
}

let n = 0
/** A home with host caches in it (one known file in each), and an empty workspace. */
function setup() {
  const dir = path.join(base, String(n++))
  const home = path.join(dir, 'home')
  const ws = path.join(dir, 'ws')
  for (const d of ['.npm/_cacache', '.cache/pip', '.cargo/registry/cache', 'go/pkg/mod'].map((d) => path.join(home, d))) {
    fs.mkdirSync(d, { recursive: true })
    fs.writeFileSync(path.join(d, 'host-file'), `host content of ${d}\n`)
  }
  fs.mkdirSync(ws, { recursive: true })
  // The user's store; a run's writes live in its workspace's directory in it (`toolCaches.store`).
  const store = path.join(home, '.local/state/sandspawn/tool-caches')
  // TMPDIR inside the workspace: tools need a writable temporary directory.
  fs.mkdirSync(path.join(ws, '.tmp'))
  // The variables that could move the caches or the store elsewhere are emptied (ignored then):
  // this test's "host" caches are the temporary home's, never the machine's.
  const moved = ['SANDSPAWN_TOOL_CACHE_DIR', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'CARGO_HOME', 'GOPATH', 'GOMODCACHE']
  const env = { ...Object.fromEntries(moved.map((k) => [k, ''])), HOME: home, TMPDIR: path.join(ws, '.tmp'), npm_config_update_notifier: 'false' }
  // Under `npm test` npm exports its own cache directory (the machine's ~/.npm) to scripts.
  env.npm_config_cache = path.join(home, '.npm')
  return { home, ws, store, env }
}

/** Paths, sizes, modes and mtimes of everything under the host's caches (the store excluded). */
function snapshot(home) {
  const out = []
  const walk = (p) => {
    const st = fs.lstatSync(p)
    out.push(`${path.relative(home, p)} ${st.mode} ${st.size} ${st.mtimeMs}`)
    if (st.isDirectory()) for (const e of fs.readdirSync(p).sort()) walk(path.join(p, e))
  }
  for (const d of ['.npm', '.cache', '.cargo', 'go']) walk(path.join(home, d))
  return out.join('\n')
}

// The interpreter itself, not a pyenv shim (whose `pyenv rehash` after an install writes outside).
const python = linux ? execFileSync('python3', ['-c', 'import sys; print(sys.executable)']).toString().trim() : 'python3'

const run = (cmd, s, sandbox = 'workspace-write', extra = {}) =>
  spawnSandboxed(cmd, { cwd: s.ws, sandbox, env: s.env, timeout: 120000, ...extra })

test('private caches: writable inside, host content readable, host unchanged, writes persist to the next run', { skip: !linux }, async () => {
  const s = setup()
  const before = snapshot(s.home)
  const write = await run(['sh', '-c', [
    'cat ~/.npm/_cacache/host-file ~/.cache/pip/host-file ~/.cargo/registry/cache/host-file ~/go/pkg/mod/host-file',
    'echo mine > ~/.npm/_cacache/new && echo more >> ~/.cache/pip/host-file && rm ~/.cargo/registry/cache/host-file',
    'mkdir -p ~/.cache/uv/x && echo uv > ~/.cache/uv/x/f',
  ].join(' && ')], s)
  assert.equal(write.exitCode, 0, write.stderr)
  assert.match(write.stdout, /host content of .*\.npm\/_cacache/)
  assert.match(write.stdout, /host content of .*go\/pkg\/mod/)
  assert.equal(write.toolCaches.mode, 'private')
  assert.equal(write.toolCaches.hostContent, 'visible')
  assert.equal(path.dirname(path.dirname(fs.realpathSync(write.toolCaches.store))), fs.realpathSync(s.store), 'a directory of the workspace\'s own in the store')
  const scope = write.toolCaches.store
  assert.deepEqual(write.toolCaches.caches.map((c) => c.name), ['xdg-cache', 'npm', 'cargo-registry', 'go-mod'])
  assert.equal(snapshot(s.home), before, 'the host caches are byte-for-byte unchanged')
  assert.equal((fs.statSync(s.store).mode & 0o777).toString(8), '700')

  const next = await run(['sh', '-c', 'cat ~/.npm/_cacache/new ~/.cache/pip/host-file ~/.cache/uv/x/f; test ! -e ~/.cargo/registry/cache/host-file'], s)
  assert.equal(next.exitCode, 0, next.stderr)
  assert.equal(next.stdout, `mine\nhost content of ${s.home}/.cache/pip\nmore\nuv\n`)
  assert.equal(snapshot(s.home), before)
  // Only the runs' own directories are gone; the writes stay in the store, folded into its base.
  assert.deepEqual(await afterCleanup(scope, ['npm']), [])
  assert.equal(fs.readFileSync(path.join(scope, 'npm/base/_cacache/new'), 'utf8'), 'mine\n')
})

// A run that writes nothing into a cache leaves its upper directory, empty, to the next run
// (src/tool_caches/slots.rs). What a command can change there without writing an entry, the
// directory's mode and its extended attributes (through the cache's root inside the sandbox), must
// not reach the next run: such a directory is made again.
test('what a run changes on a cache\'s root without writing in it does not reach the next run', { skip: !linux }, async () => {
  const s = setup()
  // Each run lets go of its slot after its result: waited for (toolCacheStore waits for that), so
  // that every run here takes the same slot, the first.
  const { toolCacheStore } = require('..')
  const look = ['sh', '-c', `stat -c %a ~/.npm; ${python} -c 'import os; print(sorted(os.listxattr(os.path.expanduser("~/.npm"))))'`]
  const fresh = await run(look, s)
  assert.equal(fresh.exitCode, 0, fresh.stderr)
  await toolCacheStore({ env: s.env })
  const plant = await run(['sh', '-c', `chmod 0777 ~/.npm && ${python} -c 'import os; os.setxattr(os.path.expanduser("~/.npm"), "user.planted", b"x")' && stat -c %a ~/.npm`], s)
  assert.equal(plant.exitCode, 0, plant.stderr)
  assert.equal(plant.stdout, '777\n', 'the command could change the root (else this test attacks nothing)')
  await toolCacheStore({ env: s.env })
  const slots = path.join(plant.toolCaches.store, 'npm/slots')
  const modes = () => fs.readdirSync(slots).map((n) => (fs.statSync(path.join(slots, n, 'upper')).mode & 0o777).toString(8))
  assert.deepEqual(modes(), ['777'], 'the slot kept what the command did to the root')
  const next = await run(look, s)
  assert.equal(next.exitCode, 0, next.stderr)
  assert.equal(next.stdout, fresh.stdout, 'the next run sees the root as a fresh run does')
})

// The point of keeping a slot: a run that wrote nothing costs the next run no `rmdir` and `mkdir`
// of its upper directory (ext4's journal, on every run's path). Linux 6.6 and later give a new
// overlay an identity stored as an extended attribute on the upper directory (`uuid=auto`), which
// made every slot look used and be made again on every run, until the helper mounted with
// `uuid=off`.
test('a run that writes nothing into a cache leaves its slot to the next run as it was', { skip: !linux }, async () => {
  const s = setup()
  const { toolCacheStore } = require('..')
  const first = await run(['true'], s)
  assert.equal(first.exitCode, 0, first.stderr)
  await toolCacheStore({ env: s.env })
  const upper = path.join(first.toolCaches.store, 'npm/slots/0/upper')
  const ino = fs.statSync(upper).ino
  const attributes = execFileSync(python, ['-c', 'import os, sys; print(sorted(os.listxattr(sys.argv[1])))', upper], { encoding: 'utf8' })
  assert.equal(attributes, '[]\n', 'the mount left no attribute on the upper directory')
  const second = await run(['true'], s)
  assert.equal(second.exitCode, 0, second.stderr)
  await toolCacheStore({ env: s.env })
  assert.equal(fs.statSync(upper).ino, ino, 'the same directory, not made again')
})

test('the command holds no capability and cannot create a user namespace, caches or not', { skip: !linux }, async () => {
  const s = setup()
  const r = await run(['sh', '-c', 'grep -E "^Cap(Prm|Eff|Bnd|Amb)" /proc/self/status; unshare -U true && echo UNSHARED; umount ~/.npm && echo UNMOUNTED; exit 0'], s)
  assert.equal(r.exitCode, 0)
  for (const line of r.stdout.trim().split('\n')) assert.match(line, /:\s+0+$/, line)
  assert.doesNotMatch(r.stdout, /UNSHARED|UNMOUNTED/)
  // The store itself is not writable inside (it was detached after the overlays were mounted).
  const scope = r.toolCaches.store
  const w = await run(['sh', '-c', `echo x > ${scope}/npm/base/planted`], s)
  assert.notEqual(w.exitCode, 0)
  assert.equal(fs.existsSync(path.join(scope, 'npm/base/planted')), false)
})

test('private caches together with the network allow-list, a pty and limits in one run', { skip: !linux }, async () => {
  const http = require('node:http')
  const upstream = http.createServer((req, res) => res.end(`upstream ${req.url}`))
  await new Promise((resolve) => upstream.listen(0, '127.0.0.2', resolve))
  try {
    const s = setup()
    const before = snapshot(s.home)
    const url = `http://127.0.0.2:${upstream.address().port}/via-proxy`
    const script = [
      'echo mine > ~/.npm/_cacache/new && cat ~/.npm/_cacache/host-file',
      `curl -sS ${url}; echo`,
      'echo "net=$SANDSPAWN_NETWORK nofile=$(ulimit -n)"',
      // The controlling terminal is the pty; the overlays' capabilities are gone by then.
      '[ -t 0 ] && echo via-dev-tty > /dev/tty',
      'grep -E "^CapEff" /proc/self/status',
      'getent hosts registry.npmjs.org || echo name-not-found',
    ].join('; ')
    const network = { allowedDomains: ['127.0.0.2'], allowPrivateAddresses: ['127.0.0.2'] }
    const r = await run(['sh', '-c', script], s, { mode: 'workspace-write', network }, { pty: true, limits: { openFiles: 64 } })
    assert.equal(r.exitCode, 0, r.stdout)
    assert.match(r.stdout, /host content of .*\.npm\/_cacache/)
    assert.match(r.stdout, /upstream \/via-proxy/)
    assert.match(r.stdout, /net=proxy nofile=64/)
    assert.match(r.stdout, /via-dev-tty/)
    assert.match(r.stdout, /CapEff:\s+0+\r?\n/)
    assert.match(r.stdout, /name-not-found/, 'names resolve only through the proxy (offline nsswitch.conf)')
    assert.equal(r.toolCaches.mode, 'private')
    assert.deepEqual(r.appliedLimits, { openFiles: 'rlimit' })
    assert.deepEqual(r.networkDenials, [])
    assert.equal(snapshot(s.home), before, 'the host caches are byte-for-byte unchanged')
    assert.deepEqual(await afterCleanup(r.toolCaches.store, ['npm']), [])
    assert.equal(fs.readFileSync(path.join(r.toolCaches.store, 'npm/base/_cacache/new'), 'utf8'), 'mine\n')
  } finally {
    upstream.close()
  }
})

test("toolCaches: 'none' keeps today's read-only caches; 'private' outside workspace-write is invalid", { skip: !linux }, async () => {
  const s = setup()
  const r = await run(['sh', '-c', 'echo x > ~/.npm/new'], s, { mode: 'workspace-write', toolCaches: 'none' })
  assert.notEqual(r.exitCode, 0)
  assert.match(r.stderr, /read-only file system/i)
  assert.deepEqual(r.toolCaches, { mode: 'none', store: null, hostContent: null, caches: [] })
  assert.equal(fs.existsSync(s.store), false, 'no store is created when none is used')
  const ro = await run(['true'], s, 'read-only')
  assert.equal(ro.toolCaches.mode, 'none')
  for (const sandbox of [{ mode: 'read-only', toolCaches: 'private' }, { mode: 'workspace-write', toolCaches: 'yes' }]) {
    await assert.rejects(run(['true'], s, sandbox), (e) => e instanceof SandboxError && e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && /toolCaches/.test(e.message))
  }
})

test('npm install of a local tarball and pip install of a local wheel work with default options', { skip: !linux }, async () => {
  const s = setup()
  const before = snapshot(s.home)
  const pkg = path.join(s.ws, 'dep')
  fs.mkdirSync(pkg)
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'sandspawn-local-dep', version: '1.0.0', main: 'index.js' }))
  fs.writeFileSync(path.join(pkg, 'index.js'), 'module.exports = 42\n')
  fs.writeFileSync(path.join(s.ws, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0' }))
  const packed = await run(['npm', 'pack', './dep'], s)
  assert.equal(packed.exitCode, 0, packed.stderr)
  const install = await run(['npm', 'install', '--no-audit', '--no-fund', './sandspawn-local-dep-1.0.0.tgz'], s)
  assert.equal(install.exitCode, 0, install.stderr)
  assert.equal(require(path.join(s.ws, 'node_modules/sandspawn-local-dep')), 42)
  assert.deepEqual(await afterCleanup(install.toolCaches.store, ['npm']), [])
  assert.ok(fs.readdirSync(path.join(install.toolCaches.store, 'npm/base/_cacache')).length > 0, 'npm cached into the store')

  // A minimal wheel, built here (no network, no build backend).
  const wheel = path.join(s.ws, 'sandspawn_local_wheel-1.0-py3-none-any.whl')
  execFileSync('python3', ['-c', `
import zipfile, sys
d = 'sandspawn_local_wheel-1.0.dist-info/'
files = {'sandspawn_local_wheel.py': 'VALUE = 7\\n',
         d + 'METADATA': 'Metadata-Version: 2.1\\nName: sandspawn-local-wheel\\nVersion: 1.0\\n',
         d + 'WHEEL': 'Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'}
with zipfile.ZipFile(sys.argv[1], 'w') as z:
    for name, text in files.items(): z.writestr(name, text)
    z.writestr(d + 'RECORD', ''.join(n + ',,\\n' for n in files) + d + 'RECORD,,\\n')
`, wheel])
  const pip = await run([python, '-m', 'pip', 'install', '--no-index', '--target', path.join(s.ws, 'site'), wheel], s)
  assert.equal(pip.exitCode, 0, pip.stderr)
  assert.equal(fs.readFileSync(path.join(s.ws, 'site/sandspawn_local_wheel.py'), 'utf8'), 'VALUE = 7\n')
  assert.equal(snapshot(s.home), before)
})

test('20 concurrent runs writing the same cache all succeed and leave it whole (issue 29)', { skip: !linux }, async () => {
  const s = setup()
  const before = snapshot(s.home)
  // Each run writes its own entry and replaces a shared one atomically, as content-addressed caches
  // do. Each run has an upper directory of its own now: none of them races another.
  const script = 'i=$1; mkdir -p ~/.npm/_cacache/c && printf "%s" "$i" > ~/.npm/_cacache/c/$i.tmp && mv ~/.npm/_cacache/c/$i.tmp ~/.npm/_cacache/c/$i && printf shared > ~/.npm/_cacache/s.$i && mv ~/.npm/_cacache/s.$i ~/.npm/_cacache/shared'
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) => run(['sh', '-c', script, 'sh', String(i)], s)))
  for (const r of results) assert.equal(r.exitCode, 0, r.stderr)
  const check = await run(['sh', '-c', `for i in $(seq 0 19); do printf "%s," "$(cat ~/.npm/_cacache/c/$i)"; done; cat ~/.npm/_cacache/shared`], s)
  assert.equal(check.stdout, Array.from({ length: 20 }, (_, i) => `${i},`).join('') + 'shared', 'every run left its entry whole')
  assert.equal(snapshot(s.home), before)
  const scope = check.toolCaches.store
  assert.deepEqual(await afterCleanup(scope, ['npm', 'xdg-cache']), [], 'no run directory left, and the last run folded every layer')
})

// Found when a longer scope name made the test above fail now and then: the helper named every
// pending layer by its path in the overlay's options, which must fit in one page (4,096 bytes); 20
// layers of paths deep in the store overflowed it, and the kernel's cut list failed the next run
// (ENOENT). A run that holds the cache keeps the others' layers pending, so they pile up.
test('a run mounts its cache over 40 pending layers with long paths', { skip: !linux }, async () => {
  const s = setup()
  // A home whose store paths are long (the layers' paths grow with it).
  const deep = path.join(s.home, 'x'.repeat(120), 'y'.repeat(120))
  for (const d of ['.npm/_cacache'].map((d) => path.join(deep, d))) fs.mkdirSync(d, { recursive: true })
  const env = { ...s.env, HOME: deep, npm_config_cache: path.join(deep, '.npm') }
  const holder = await startSandboxed(['sleep', '60'], { cwd: s.ws, sandbox: 'workspace-write', env })
  try {
    for (let i = 0; i < 40; i++) {
      const r = await spawnSandboxed(['sh', '-c', `echo ${i} > ~/.npm/_cacache/f${i}`], { cwd: s.ws, sandbox: 'workspace-write', env, timeout: 120000 })
      assert.equal(r.exitCode, 0, r.stderr)
    }
    const r = await spawnSandboxed(['sh', '-c', 'cat ~/.npm/_cacache/f0 ~/.npm/_cacache/f39'], { cwd: s.ws, sandbox: 'workspace-write', env, timeout: 120000 })
    assert.equal(r.exitCode, 0, r.stderr)
    assert.equal(r.stdout, '0\n39\n')
    const layers = fs.readdirSync(path.join(r.toolCaches.store, 'npm', 'pending'))
    assert.ok(layers.length >= 40, `the layers stayed pending while a run held the cache (${layers.length})`)
    holder.kill('SIGKILL')
    await holder.wait().catch(() => {})
    // The holder's end folds the 40 layers, off its result's path: wait for it before the removal.
    assert.deepEqual(await afterCleanup(r.toolCaches.store, ['npm']), [])
  } finally {
    holder.kill('SIGKILL')
    await holder.wait().catch(() => {})
  }
})

// Found by an attacker's review: a run's writes are folded into the cache's base under the cache's
// exclusive lock after its result, entry by entry where they land in directories the base has
// (~70 µs each). The next run in the workspace waited for the whole fold in its setup, before its
// timeout and abort counted: a `timeout: 1000` settled after 18 s (`durationMs: 1008`), an abort at
// 1.5 s after 14 s. A fold now stops for a waiting run between two entries.
test('a run that starts while the last run\'s writes are folded keeps its timeout and abort', { skip: !linux }, async () => {
  const s = setup()
  const opts = { cwd: s.ws, sandbox: 'workspace-write', env: s.env, timeout: 120000 }
  // First the directories (folded by one rename each) and 1,000 files in one of them; then the
  // files hard-linked into each other directory (creating a file costs ~0.7 ms on a loaded disk, a
  // link ~0.07 ms), which the fold moves one by one: ~100,000 entries, ~4 s of fold here.
  const dirs = 100
  const made = await spawnSandboxed(['sh', '-c', `cd ~/.npm && mkdir _junk && cd _junk && mkdir $(seq ${dirs}) && cd 1 && seq 1000 | xargs touch`], opts)
  assert.equal(made.exitCode, 0, made.stderr)
  const scope = made.toolCaches.store
  assert.deepEqual(await afterCleanup(scope, ['npm']), [])
  const filled = await spawnSandboxed(['sh', '-c', `cd ~/.npm/_junk && mkdir s && cp -al 1/. s/ && for d in $(seq 2 ${dirs}); do cp -al s/. $d/ || exit 1; done`], opts)
  assert.equal(filled.exitCode, 0, filled.stderr)
  // Its fold begins now, off the result's path. Two runs start during it: one with a timeout, one
  // aborted (a command that would run for a minute either way).
  const started = Date.now()
  const settledAt = (p) => p.then((r) => ({ r, ms: Date.now() - started }), (e) => ({ e, ms: Date.now() - started }))
  const ac = new AbortController()
  setTimeout(() => ac.abort(), 500)
  const [timed, aborted] = await Promise.all([
    settledAt(spawnSandboxed(['sleep', '60'], { ...opts, timeout: 1000 })),
    settledAt(spawnSandboxed(['sleep', '60'], { ...opts, timeout: 0, signal: ac.signal })),
  ])
  const folded = await afterCleanup(scope, ['npm'])
  const foldMs = Date.now() - started
  console.log(`fold of ~${dirs * 1000} entries: ~${foldMs} ms; the timeout run settled at ${timed.ms} ms, the aborted one at ${aborted.ms} ms`)
  assert.ok(timed.r, `the run with a timeout resolves: ${timed.e}`)
  assert.equal(timed.r.timedOut, true)
  assert.ok(timed.ms < 3000, `the run with timeout: 1000 settled after ${timed.ms} ms`)
  assert.ok(timed.r.durationMs >= 1000 && timed.r.durationMs <= timed.ms + 50, `durationMs ${timed.r.durationMs} counts from the request (settled at ${timed.ms} ms)`)
  assert.equal(aborted.e?.name, 'AbortError', `the aborted run rejects: ${aborted.e}`)
  assert.ok(aborted.ms < 2500, `the run aborted at 500 ms settled after ${aborted.ms} ms`)
  // The fold was left to the last run and completed, and every file is in the base.
  assert.deepEqual(folded, [])
  assert.equal(fs.readdirSync(path.join(scope, 'npm/base/_junk/7')).length, 1000)
})

// Found by an attacker's review: a Landlock-mode run reads every workspace's part of the store, and
// `flock -x` on each cache's `lock` (and `waiting`) held every other workspace's next run in its
// setup, its timeout and abort unheard (a `timeout: 3000` settled after 38 s, timedOut false), a run
// without a timeout for as long as the holder lived. The locks a run waits for are now ones a
// command that can only read them cannot take against it, and every wait hears the run's end.
test('a Landlock-mode run that locks every tool cache of the store holds up no other workspace\'s run', { skip: !linux }, async () => {
  const s = setup()
  const other = setup()
  const opts = { cwd: s.ws, sandbox: 'workspace-write', env: s.env, timeout: 20000 }
  const first = await spawnSandboxed(['true'], opts)
  assert.equal(first.exitCode, 0, first.stderr)
  const scope = first.toolCaches.store
  assert.ok(scope && fs.existsSync(path.join(scope, 'npm', 'lock')), `the scope's caches exist: ${scope}`)
  const locks = `${s.store}/workspaces/*/*/lock ${s.store}/workspaces/*/*/waiting ${s.store}/workspaces/*/*/slots/*/lock`
  // `-w`, not `-n`: the test's own check below takes each lock shared for a moment, and a holder
  // that tried once and met it gave up (CI failed so, once, under load).
  const script = `for l in ${locks}; do [ -f "$l" ] && flock -x -w 10 "$l" sleep 30 & done; sleep 0.3; echo held >&2; wait`
  const hostile = await startSandboxed(['sh', '-c', script], { cwd: other.ws, env: { ...s.env, TMPDIR: path.join(other.ws, '.tmp') }, sandbox: 'workspace-write', linux: { allow: ['landlock'] }, timeout: 40000 })
  try {
    // Since cross28 the lock files are mode 0200: the command cannot open them to lock them (its
    // flock fails); before, it held them (flock -x, and any read lock a reader can take).
    const holds = () => { try { execFileSync('flock', ['-n', '-s', path.join(scope, 'npm', 'lock'), 'true']); return false } catch { return true } }
    for (let waited = 0; !holds() && waited < 1000; waited += 50) await new Promise((r) => setTimeout(r, 50))
    const started = Date.now()
    // Hang bounds under the holder's 30 s: a run's setup alone takes 2 to 3 s at load 39 on 2 cores.
    const bound = new Promise((resolve) => setTimeout(() => resolve('still waiting after 20 s'), 20000))
    // No timeout: before, it waited as long as the holder lived.
    const b = await Promise.race([spawnSandboxed(['echo', 'B ran'], { ...opts, timeout: 0 }).catch((e) => e), bound])
    const ms = Date.now() - started
    assert.equal(b.stdout, 'B ran\n', `the other workspace's run: ${b.stdout === undefined ? b : JSON.stringify(b)}`)
    assert.ok(ms < 20000, `it settled after ${ms} ms`)
  } finally {
    hostile.kill('SIGKILL')
    await hostile.wait()
  }
})

test('with the network off, npm, npx, pip and curl fail in seconds and the failure reads as network', { skip: !linux }, async () => {
  const s = setup()
  const cases = [
    ['npm', 'view', 'left-pad', 'version'],
    ['npx', '--no-install', 'sandspawn-surely-not-installed-pkg'],
    [python, '-m', 'pip', 'download', 'six', '--no-cache-dir', '-d', path.join(s.ws, 'dl'), '--index-url', 'https://pypi.org/simple'],
    ['curl', '-sS', 'https://example.com'],
  ]
  for (const cmd of cases) {
    const started = Date.now()
    const r = await run(cmd, s)
    const seconds = (Date.now() - started) / 1000
    assert.notEqual(r.exitCode, 0, cmd.join(' '))
    // Measured 0.1 to 1.3 s; before, npm took 71 s. A generous bound: this is a hang check.
    assert.ok(seconds < 20, `${cmd.join(' ')} took ${seconds} s`)
    assert.equal(r.denial && r.denial.kind, 'network', `${cmd.join(' ')}: ${r.stderr.slice(-300)}`)
  }
  // Names in /etc/hosts still resolve; others are "not found" at once, not "try again".
  const lookup = await run(['node', '-e', "require('dns').lookup('localhost', (e) => require('dns').lookup('registry.invalid', (f) => console.log(e && e.code, f && f.code)))"], s)
  assert.equal(lookup.stdout.trim(), 'null ENOTFOUND')
})

test('a run in one workspace cannot change what a run in another one builds; within a workspace the writes are reused (issue 29)', { skip: !linux }, async () => {
  const s = setup()
  const crate = path.join(s.home, '.cargo/registry/src/index.crates.io-0/oorandom-11.1.5')
  fs.mkdirSync(path.join(crate, 'src'), { recursive: true })
  fs.writeFileSync(path.join(crate, 'src/lib.rs'), 'pub fn rand() -> u32 { 4 }\n')
  const other = path.join(path.dirname(s.ws), 'other-ws')
  fs.mkdirSync(other)
  const poison = `echo 'pub fn rand() -> u32 { std::process::exit(9) }' > ${crate}/src/lib.rs && echo 'fn main() { /* planted */ }' > ${crate}/build.rs`
  const a = await run(['sh', '-c', poison], s)
  assert.equal(a.exitCode, 0, a.stderr)
  const look = `cat ${crate}/src/lib.rs; test -e ${crate}/build.rs && echo BUILD-RS || echo no-build-rs`
  const b = await spawnSandboxed(['sh', '-c', look], { cwd: other, sandbox: 'workspace-write', env: s.env, timeout: 60000 })
  assert.equal(b.stdout, 'pub fn rand() -> u32 { 4 }\nno-build-rs\n', 'another workspace sees the host\'s crate')
  assert.notEqual(b.toolCaches.store, a.toolCaches.store)
  const again = await run(['sh', '-c', look], s)
  assert.equal(again.stdout, 'pub fn rand() -> u32 { std::process::exit(9) }\nBUILD-RS\n', 'the same workspace reuses what it wrote')
  // Sharing across workspaces is the caller's explicit choice.
  const shared = { mode: 'workspace-write', toolCaches: 'shared' }
  const put = await run(['sh', '-c', `echo shared > ${crate}/SHARED`], s, shared)
  assert.equal(put.toolCaches.mode, 'shared')
  const seen = await spawnSandboxed(['cat', `${crate}/SHARED`], { cwd: other, sandbox: shared, env: s.env, timeout: 60000 })
  assert.equal(seen.stdout, 'shared\n')
})

// The store's scope follows what a run can write, not the repository around its cwd (found by an
// attacker's review): a run whose cwd was pkgA of a repository could not write pkgB, yet planted
// npx's cache (or cargo's registry sources) in a scope a later run in pkgB built from.
test('runs of one repository that cannot write each other\'s directories do not share caches; the same directory again does', { skip: !linux }, async () => {
  const s = setup()
  execFileSync('git', ['init', '-q', s.ws])
  const [a, b] = ['pkgA', 'pkgB'].map((p) => path.join(s.ws, p))
  for (const d of [a, b]) fs.mkdirSync(d)
  const tool = '~/.npm/_npx/h/node_modules/.bin/tool'
  const plant = `(touch ../pkgB/x 2>/dev/null || echo cannot-write-pkgB) && mkdir -p ${path.dirname(tool)} && echo 'echo attacker' > ${tool}`
  const planted = await run(['sh', '-c', plant], s, 'workspace-write', { cwd: a })
  assert.equal(planted.exitCode, 0, planted.stderr)
  assert.equal(planted.stdout, 'cannot-write-pkgB\n')
  const look = `cat ${tool} 2>/dev/null || echo absent`
  const other = await run(['sh', '-c', look], s, 'workspace-write', { cwd: b })
  assert.equal(other.stdout, 'absent\n', 'a run in pkgB does not see what a run confined to pkgA planted')
  assert.notEqual(other.toolCaches.store, planted.toolCaches.store)
  const wider = await run(['sh', '-c', look], s, { mode: 'workspace-write', writableRoots: [b] }, { cwd: a })
  assert.equal(wider.stdout, 'absent\n', 'nor does a run that can write pkgB too')
  const again = await run(['sh', '-c', look], s, 'workspace-write', { cwd: a })
  assert.equal(again.stdout, 'echo attacker\n', 'the same writable roots reuse what they wrote')
  assert.equal(again.toolCaches.store, planted.toolCaches.store)
})

// Found by an attacker's review of the per-roots key: a run with readOnlyPaths and denyRead planted
// a tool in its caches, and a run of the same cwd without them ran it: the tool read the secret
// and wrote the read-only directory.
test('runs of the same roots confined otherwise (read-only paths, hidden paths, the network) do not share caches', { skip: !linux }, async () => {
  const s = setup()
  const [ro, secret] = ['pkgB', 'secret'].map((p) => path.join(s.ws, p))
  for (const d of [ro, secret]) fs.mkdirSync(d)
  const tool = '~/.npm/_npx/h/node_modules/.bin/tool'
  const plant = `(touch pkgB/x 2>/dev/null || echo cannot-write-pkgB) && mkdir -p ${path.dirname(tool)} && echo 'echo attacker' > ${tool}`
  const confined = { mode: 'workspace-write', readOnlyPaths: [ro], denyRead: [secret] }
  const planted = await run(['sh', '-c', plant], s, confined)
  assert.equal(planted.exitCode, 0, planted.stderr)
  assert.equal(planted.stdout, 'cannot-write-pkgB\n')
  const look = `cat ${tool} 2>/dev/null || echo absent`
  const free = await run(['sh', '-c', look], s, 'workspace-write')
  assert.equal(free.stdout, 'absent\n', 'a run without those limits does not see what the confined run planted')
  assert.notEqual(free.toolCaches.store, planted.toolCaches.store)
  const again = await run(['sh', '-c', look], s, confined)
  assert.equal(again.stdout, 'echo attacker\n', 'the same confinement reuses what it wrote')
  const online = await run(['sh', '-c', look], s, { mode: 'workspace-write', readOnlyPaths: [ro], denyRead: [secret], network: true })
  assert.equal(online.stdout, 'absent\n', 'nor a run with the network on')
})

// Found by an attacker's review (xrun43): the key held only the readOnlyPaths outside the writable
// roots (read-only anyway), not those inside them (the ones that confine): the test above passed by
// its denyRead alone. A run with readOnlyPaths [ws/cfg] alone planted a tool that a run of the same
// cwd without it ran, and the tool wrote cfg.
test('a readOnlyPaths entry inside the workspace alone keeps the caches apart', { skip: !linux }, async () => {
  const s = setup()
  const cfg = path.join(s.ws, 'cfg')
  fs.mkdirSync(cfg)
  const tool = '~/.npm/_npx/h/node_modules/.bin/tool'
  const plant = `(touch cfg/x 2>/dev/null || echo cannot-write-cfg) && mkdir -p ${path.dirname(tool)} && echo 'echo planted > cfg/x' > ${tool}`
  const confined = { mode: 'workspace-write', readOnlyPaths: [cfg] }
  const planted = await run(['sh', '-c', plant], s, confined)
  assert.equal(planted.exitCode, 0, planted.stderr)
  assert.equal(planted.stdout, 'cannot-write-cfg\n')
  const free = await run(['sh', '-c', `sh ${tool} 2>/dev/null || echo absent`], s, 'workspace-write')
  assert.equal(free.stdout, 'absent\n', 'a run without the read-only path does not run what the confined run planted')
  assert.equal(fs.existsSync(path.join(cfg, 'x')), false, 'cfg stays unwritten')
  assert.notEqual(free.toolCaches.store, planted.toolCaches.store)
  const again = await run(['sh', '-c', `cat ${tool}`], s, confined)
  assert.equal(again.stdout, 'echo planted > cfg/x\n', 'the same confinement reuses what it wrote')
})

// Found by an attacker's review (cross40): the environment was no part of the key. A run given a
// small environment (`extendEnv: false`, as a host gives a model's command) planted a tool in
// ~/.npm/_npx, and a run of the same roots and confinement given a token in its environment (a
// publish, a deploy: the host's own command) ran it, the planted code holding the token.
test('runs of the same roots given other environments do not share caches; the shell\'s own bookkeeping does not count', { skip: !linux }, async () => {
  const s = setup()
  const tool = '~/.npm/_npx/h/node_modules/.bin/tool'
  const small = { ...s.env, PATH: process.env.PATH }
  const opts = (env) => ({ env, extendEnv: false })
  const planted = await run(['sh', '-c', `mkdir -p ${path.dirname(tool)} && echo 'echo "$DEPLOY_TOKEN"' > ${tool}`], s, 'workspace-write', opts(small))
  assert.equal(planted.exitCode, 0, planted.stderr)
  const look = ['sh', '-c', `cat ${tool} 2>/dev/null || echo absent`]
  const withToken = await run(look, s, 'workspace-write', opts({ ...small, DEPLOY_TOKEN: 'tok-123' }))
  assert.equal(withToken.exitCode, 0, withToken.stderr)
  assert.equal(withToken.stdout, 'absent\n', 'a run given a token does not see what a run without it planted')
  assert.notEqual(withToken.toolCaches.store, planted.toolCaches.store)
  const changed = await run(look, s, 'workspace-write', opts({ ...small, PATH: `/opt/planted/bin:${small.PATH}` }))
  assert.equal(changed.stdout, 'absent\n', 'nor one given another value of a variable')
  // A shell's cd and nesting change these between any two commands: they name no capability.
  const shell = await run(look, s, 'workspace-write', opts({ ...small, OLDPWD: '/elsewhere', PWD: s.ws, SHLVL: '3', _: '/usr/bin/env' }))
  assert.equal(shell.stdout, `echo "$DEPLOY_TOKEN"\n`, 'the same environment but for the shell\'s bookkeeping reuses what it wrote')
  assert.equal(shell.toolCaches.store, planted.toolCaches.store)
})

// A scope was the path of its workspace (found by an attacker's review): a project removed and
// another made at the same path (a CI checkout, a re-cloned repository) inherited, for 30 days,
// what the old one's runs planted in its caches.
test('a directory removed and made again at the same path starts with fresh caches, and the old ones go', { skip: !linux }, async () => {
  const s = setup()
  const proj = path.join(path.dirname(s.ws), 'reused')
  fs.mkdirSync(proj)
  const opts = { cwd: proj }
  const planted = await run(['sh', '-c', 'mkdir -p ~/.npm/_npx/x && echo planted > ~/.npm/_npx/x/p'], s, 'workspace-write', opts)
  assert.equal(planted.exitCode, 0, planted.stderr)
  const look = ['sh', '-c', 'cat ~/.npm/_npx/x/p 2>/dev/null || echo absent']
  assert.equal((await run(look, s, 'workspace-write', opts)).stdout, 'planted\n', 'reused while the directory lives')
  fs.rmSync(proj, { recursive: true })
  fs.mkdirSync(proj)
  const fresh = await run(look, s, 'workspace-write', opts)
  assert.equal(fresh.stdout, 'absent\n', 'another project at the same path')
  assert.notEqual(fresh.toolCaches.store, planted.toolCaches.store)
  assert.equal(fs.existsSync(planted.toolCaches.store), false, 'the old project\'s scope is removed')
})

test("no run reads sandspawn's stores: another workspace's cache writes, or a change set, even when its own denyRead hides the cache", { skip: !linux }, async (t) => {
  // Found by an attacker's review: the store was unmounted after the overlays were made, leaving the
  // host's view of it (read-only, but readable) at its path: a token a run wrote into ~/.npm in one
  // workspace was read by a run in another one, and by a run whose denyRead hid ~/.npm itself.
  const s = setup()
  const other = path.join(path.dirname(s.ws), 'other-ws')
  fs.mkdirSync(other)
  const secret = `${s.home}/.npm/_cacache/token`
  const a = await run(['sh', '-c', `echo WORKSPACE-A-SECRET > ${secret}`], s)
  assert.equal(a.exitCode, 0, a.stderr)
  // The change sets' store is the host process's (its environment, not the run's).
  const sets = path.join(path.dirname(s.ws), 'change-sets')
  const was = process.env.SANDSPAWN_CHANGE_SET_DIR
  process.env.SANDSPAWN_CHANGE_SET_DIR = sets
  t.after(() => (was === undefined ? delete process.env.SANDSPAWN_CHANGE_SET_DIR : (process.env.SANDSPAWN_CHANGE_SET_DIR = was)))
  fs.mkdirSync(path.join(sets, 'planted-set'), { recursive: true, mode: 0o700 })
  fs.writeFileSync(path.join(sets, 'planted-set', 'content'), 'CHANGE-SET-CONTENT\n')
  const look = `grep -rs -e WORKSPACE-A-SECRET -e CHANGE-SET-CONTENT ${s.home}/.local/state ${sets}; ls -A ${s.store}; ls -A ${sets}; true`
  for (const sandbox of ['read-only', 'workspace-write', { mode: 'workspace-write', denyRead: [path.join(s.home, '.npm')] }]) {
    const b = await spawnSandboxed(['sh', '-c', look], { cwd: other, sandbox, env: { ...s.env, XDG_STATE_HOME: '' }, timeout: 60000 })
    assert.equal(b.exitCode, 0, b.stderr)
    assert.equal(b.stdout, '', `${JSON.stringify(sandbox)}: ${b.stdout}`)
  }
  assert.equal(fs.readFileSync(path.join(sets, 'planted-set', 'content'), 'utf8'), 'CHANGE-SET-CONTENT\n', 'the host still has it')
})

// The store is bound writable for the helper to mount the overlays from, then moved into the
// covers' scratch directory and detached with it in one umount2 (each detach waits for an RCU grace
// period): the command must find no trace of either, and no way to write the store.
test('the writable bind of the store the overlays came from, and the covers\' scratch directory, are gone before the command runs', { skip: !linux }, async () => {
  const s = setup()
  const first = await run(['true'], s)
  assert.equal(first.exitCode, 0, first.stderr)
  // The store the run used (the host process's SANDSPAWN_TOOL_CACHE_DIR, when it has one).
  const scope = first.toolCaches.store
  const store = path.dirname(path.dirname(scope))
  const look = [
    `grep -F -e ${JSON.stringify(store)} -e .sandspawn-cover /proc/self/mountinfo | grep -v -F ' - overlay ' | grep -v -F ' - tmpfs ' || true`,
    'echo "shm: $(ls -A /dev/shm)"',
    `touch ${scope}/planted 2>/dev/null && echo WROTE-THE-STORE || true`,
    // Covered: gone, or an empty directory.
    `ls -A ${store} 2>/dev/null; true`,
  ].join('; ')
  const r = await run(['sh', '-c', look], s)
  assert.equal(r.exitCode, 0, r.stderr)
  assert.equal(r.stdout, 'shm: \n', 'no bind of the store, no scratch directory, the store covered (empty) and not writable')
  assert.ok(!fs.existsSync(path.join(scope, 'planted')))
  assert.ok(r.toolCaches.caches.length > 0, JSON.stringify(r.toolCaches))
})

test('a store that does not exist yet when a run starts is covered all the same', { skip: !linux }, async (t) => {
  // Found by a review of the cover: only stores that existed were covered, so a run planned before
  // the first review run made the change sets' store read the sets written while it lived.
  const s = setup()
  const sets = path.join(path.dirname(s.ws), 'later-change-sets')
  const was = process.env.SANDSPAWN_CHANGE_SET_DIR
  process.env.SANDSPAWN_CHANGE_SET_DIR = sets
  t.after(() => (was === undefined ? delete process.env.SANDSPAWN_CHANGE_SET_DIR : (process.env.SANDSPAWN_CHANGE_SET_DIR = was)))
  const { startSandboxed } = require('..')
  const look = `while [ ! -e ${s.ws}/go ]; do sleep 0.05; done; cat ${sets}/cs-later/secret 2>/dev/null; ls -A ${sets}; true`
  const p = await startSandboxed(['sh', '-c', look], { cwd: s.ws, sandbox: 'workspace-write', env: s.env, timeout: 60000 })
  // What a review run in another workspace writes while this one lives.
  fs.mkdirSync(path.join(sets, 'cs-later'), { recursive: true, mode: 0o700 })
  fs.writeFileSync(path.join(sets, 'cs-later', 'secret'), 'ANOTHER-WORKSPACE\n')
  fs.writeFileSync(path.join(s.ws, 'go'), '')
  const r = await p.wait()
  assert.equal(r.exitCode, 0, r.stderr)
  assert.equal(r.stdout, '', 'the run read a store made after it started')
})

/** A registry on loopback serving these packages (packuments and tarballs): npm downloads from it
 * through the run's proxy and caches what it fetched, as from the real registry. */
async function localRegistry(s, names) {
  const http = require('node:http')
  const dir = path.join(path.dirname(s.ws), 'registry')
  const tarballs = {}
  for (const name of names) {
    const pkg = path.join(dir, name)
    fs.mkdirSync(pkg, { recursive: true })
    fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name, version: '1.0.0', main: 'index.js' }))
    fs.writeFileSync(path.join(pkg, 'index.js'), `module.exports = ${JSON.stringify(name)}\n`)
    execFileSync('npm', ['pack', '--silent', '--pack-destination', dir, pkg], { env: { ...process.env, ...s.env } })
    tarballs[name] = fs.readFileSync(path.join(dir, `${name}-1.0.0.tgz`))
  }
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(req.url.split('/')[1] || '')
    if (!tarballs[name]) return res.writeHead(404).end()
    if (req.url.endsWith('.tgz')) return res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(tarballs[name])
    const { port } = server.address()
    const shasum = require('node:crypto').createHash('sha1').update(tarballs[name]).digest('hex')
    const integrity = `sha512-${require('node:crypto').createHash('sha512').update(tarballs[name]).digest('base64')}`
    const doc = { name, 'dist-tags': { latest: '1.0.0' }, versions: { '1.0.0': { name, version: '1.0.0', main: 'index.js', dist: { tarball: `http://127.0.0.2:${port}/${name}/-/${name}-1.0.0.tgz`, shasum, integrity } } } }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(doc))
  })
  // 127.0.0.2: inside the sandbox, 127.0.0.1 is the sandbox's own loopback (NO_PROXY), never the host's.
  await new Promise((resolve) => server.listen(0, '127.0.0.2', resolve))
  return server
}

test('six parallel npm installs on a cold store succeed, in one workspace and in six, three times (issue 29)', { skip: !linux }, async (t) => {
  const s = setup()
  const names = ['kleur', 'nanoid', 'is-odd', 'left-pad']
  const registry = await localRegistry(s, names)
  t.after(() => registry.close())
  const url = `http://127.0.0.2:${registry.address().port}/`
  const network = { allowedDomains: ['127.0.0.2'], allowPrivateAddresses: ['127.0.0.2'] }
  const install = (cwd) => spawnSandboxed(['npm', 'install', '--no-audit', '--no-fund', '--no-package-lock', `--registry=${url}`, ...names], {
    cwd,
    sandbox: { mode: 'workspace-write', network },
    env: s.env,
    timeout: 120000,
  })
  for (let round = 0; round < 3; round++) {
    // A cold store: nothing of the earlier rounds.
    fs.rmSync(s.store, { recursive: true, force: true })
    const one = path.join(path.dirname(s.ws), `one-${round}`)
    const dirs = Array.from({ length: 6 }, (_, i) => path.join(one, `p${i}`))
    const six = Array.from({ length: 6 }, (_, i) => path.join(path.dirname(s.ws), `six-${round}-${i}`))
    fs.mkdirSync(path.join(one, '.git'), { recursive: true }) // one workspace: the repository around them
    for (const d of [...dirs, ...six]) {
      fs.mkdirSync(d, { recursive: true })
      fs.writeFileSync(path.join(d, 'package.json'), '{"name":"app","version":"1.0.0"}')
    }
    for (const group of [dirs, six]) {
      const results = await Promise.all(group.map(install))
      results.forEach((r, i) => assert.equal(r.exitCode, 0, `round ${round}, ${group[i]}:\n${r.stderr}`))
      for (const d of group) assert.equal(require(path.join(d, 'node_modules/left-pad')), 'left-pad')
    }
  }
})

test('toolCacheStore measures the store a run used, cleans it, and refuses a directory that is no store (issue 29)', { skip: !linux }, async () => {
  const { toolCacheStore } = require('..')
  const s = setup()
  const empty = await toolCacheStore({ env: s.env })
  assert.deepEqual(empty, { path: s.store, bytes: 0, workspaces: 0, removed: false })
  const r = await run(['sh', '-c', 'head -c 300000 /dev/zero > ~/.npm/_cacache/big'], s)
  assert.equal(r.exitCode, 0, r.stderr)
  const used = await toolCacheStore({ env: s.env })
  assert.equal(used.workspaces, 1)
  assert.ok(used.bytes >= 300000, JSON.stringify(used))
  const cleaned = await toolCacheStore({ env: s.env, clean: true })
  assert.deepEqual(cleaned, { path: s.store, bytes: 0, workspaces: 0, removed: true })
  assert.equal(fs.existsSync(s.store), false)
  // The next run starts a new store.
  assert.equal((await run(['true'], s)).exitCode, 0)
  assert.equal((await toolCacheStore({ env: s.env })).workspaces, 1)

  const notStore = path.join(s.home, 'documents')
  fs.mkdirSync(notStore)
  fs.writeFileSync(path.join(notStore, 'thesis.txt'), 'mine')
  await assert.rejects(toolCacheStore({ env: { SANDSPAWN_TOOL_CACHE_DIR: notStore }, clean: true }), (e) => e instanceof SandboxError && e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && /does not look like a sandspawn tool cache store/.test(e.message))
  assert.equal(fs.readFileSync(path.join(notStore, 'thesis.txt'), 'utf8'), 'mine')
  await assert.rejects(toolCacheStore({ clean: 'yes' }), (e) => e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && /clean/.test(e.message))
  await assert.rejects(toolCacheStore({ cleanup: true }), (e) => e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && /cleanup/.test(e.message))
  await assert.rejects(toolCacheStore([]), (e) => e.code === 'ERR_SANDBOX_INVALID_OPTIONS')
})

// Found by an attacker's review (own18, storechain2.js): with the command's HOME inside a writable
// root (<ws>/.home, or HOME=/tmp/x with the default writable /tmp), its store lay where the run
// could write. A run with no cache to cover made nothing there; it planted the store itself
// (mode 0700, `workspaces` a symlink into the workspace), and the next run's scope was made through
// the link, uncovered: that run replaced `npm/base` with a link to a host directory and `npm/discard`
// with a link to host data, left a pending layer, and the host's fold after it moved the layer's
// file into the host directory and emptied the data. Now such a store is not used.
for (const where of ['workspace', 'tmp']) {
  test(`a tool cache store in a writable root (HOME in the ${where}) is not used: the host moves and removes nothing through what a run planted there`, { skip: !linux }, async (t) => {
    const dir = path.join(base, String(n++))
    const ws = path.join(dir, 'ws')
    const home = where === 'workspace' ? path.join(ws, '.home') : fs.mkdtempSync('/tmp/sandspawn-store-home-')
    if (where === 'tmp') t.after(() => fs.rmSync(home, { recursive: true, force: true }))
    const target = path.join(dir, 'hosthome', '.vim', 'plugin')
    const important = path.join(dir, 'hosthome', 'important')
    for (const d of [home, target, path.join(important, 'sub'), path.join(ws, 'W')]) fs.mkdirSync(d, { recursive: true })
    fs.writeFileSync(path.join(important, 'keep.txt'), 'data')
    const moved = ['SANDSPAWN_TOOL_CACHE_DIR', 'XDG_STATE_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'CARGO_HOME', 'GOPATH', 'GOMODCACHE']
    const env = { ...Object.fromEntries(moved.map((k) => [k, ''])), PATH: process.env.PATH, HOME: home }
    const go = (script) => spawnSandboxed(['bash', '-c', script], { cwd: ws, env, timeout: 60000, sandbox: { mode: 'workspace-write' } })
    const store = path.join(home, '.local/state/sandspawn/tool-caches')
    const plant = `set -e; mkdir -p ${store}; chmod 700 ${store}; ln -s ${path.relative(store, path.join(ws, 'W'))} ${store}/workspaces; echo planted`
    const a = await go(plant)
    assert.equal(a.stdout, 'planted\n', a.stderr)
    // A cache appears in that home outside the sandbox (an unsandboxed npm with the same HOME).
    fs.mkdirSync(path.join(home, '.npm'))
    const b = await go(`K=$(ls ${ws}/W); C=${ws}/W/$K/npm; [ -d "$C" ] || { echo "no scope through the link"; exit 0; }
      mv $C/base $C/base.old; ln -s ${target} $C/base; rm -rf $C/discard; ln -s ${important} $C/discard
      mkdir -p $C/pending/0-zz; echo '" planted by run B' > $C/pending/0-zz/evil.vim; echo done`)
    assert.equal(b.exitCode, 0, b.stderr)
    await require('../binding').toolCachesSettled()
    assert.deepEqual(fs.readdirSync(target), [], 'the host moved a file of the run\'s into a host directory')
    assert.deepEqual(fs.readdirSync(important).sort(), ['keep.txt', 'sub'], 'the host removed host data')
    assert.equal(b.stdout, 'no scope through the link\n', b.stdout)
    assert.deepEqual(b.toolCaches.caches, [], JSON.stringify(b.toolCaches))
    assert.ok(b.sandboxDetails.notEnforced.some((s) => /tool caches/.test(s) && s.includes(store)), JSON.stringify(b.sandboxDetails.notEnforced))
    // The home's cache stays read-only instead (as under toolCaches: 'none').
    const c = await go('echo x > ~/.npm/planted 2>/dev/null && echo wrote; true')
    assert.equal(c.stdout, '')
  })
}

// Found by an attacker's review (cross39): a host process whose tool cache store lies under /tmp
// (SANDSPAWN_TOOL_CACHE_DIR=$(mktemp -d), XDG_STATE_HOME or HOME there) used it, covered in its own
// runs only: known-stores lists no store under /tmp, so another process's default run (a second
// agent, the CLI), in any workspace, wrote the first one's npm cache of another workspace, and that
// workspace's next run read what it planted (npx runs from that cache), notEnforced []. The change
// set store was refused there for the same reason (land27); the tool caches were not.
test('a tool cache store under /tmp is not used: another process\'s run cannot plant in it', { skip: !linux }, async (t) => {
  const { home, ws } = setup()
  const store = fs.mkdtempSync('/tmp/sandspawn-tc-store-')
  t.after(() => fs.rmSync(store, { recursive: true, force: true }))
  // The host process of workspace B, with its store under /tmp: a run of its own, as it reports it.
  const env = { ...process.env, HOME: home, SANDSPAWN_TOOL_CACHE_DIR: store, XDG_STATE_HOME: '' }
  const host = (script) => {
    const run = `require(${JSON.stringify(path.join(__dirname, '..'))}).spawnSandboxed(['sh', '-c', ${JSON.stringify(script)}], { cwd: ${JSON.stringify(ws)}, sandbox: 'workspace-write' })
      .then((r) => console.log(JSON.stringify({ stdout: r.stdout, store: r.toolCaches.store, notEnforced: r.sandboxDetails.notEnforced })))`
    return JSON.parse(execFileSync(process.execPath, ['-e', run], { env, encoding: 'utf8' }))
  }
  const first = host('ls ~/.npm >/dev/null')
  // Another process's default run (this one's), in another workspace: /tmp is writable to it.
  const other = setup().ws
  const plant = await spawnSandboxed(['sh', '-c', `for d in ${store}/workspaces/*/npm/base; do [ -d "$d" ] && echo planted > "$d/planted" && echo wrote; done; true`], { cwd: other, sandbox: { mode: 'workspace-write' } })
  const second = host('cat ~/.npm/planted 2>/dev/null || echo none')
  assert.deepEqual([plant.stdout, second.stdout], ['', 'none\n'], `the other run wrote B's cache (${first.store}) and B's next run read it`)
  assert.equal(first.store, null)
  assert.ok(first.notEnforced.some((w) => w.includes(store) && /\/tmp/.test(w)), first.notEnforced.join('\n'))
})

// Found by an attacker's review (race18, cache_rename.js): with the cwd at $HOME, a run renamed the
// directories above the host's overlaid caches (~/go, ~/.m2, ~/.gradle, ~/.yarn, ~/.local/share)
// and made new ones at their paths: the host's ~/go/pkg/mod and ~/.m2/repository then led to the
// run's directories, which the host's next go or mvn build used, and nothing was reported. Now every
// directory between the root and an overlaid cache stays where it is (a mount point).
test('cwd = $HOME: the directories above the overlaid caches stay where they are', { skip: !linux }, async (t) => {
  const dir = path.join(base, String(n++))
  const home = path.join(dir, 'home')
  const caches = ['go/pkg/mod', '.yarn/berry', '.m2/repository', '.gradle/caches', '.local/share/pnpm', '.cache']
  for (const d of caches) fs.mkdirSync(path.join(home, d), { recursive: true })
  // The run's store is the host's own (the case where a held home's caches are overlaid).
  const store = path.join(dir, 'store')
  const was = process.env.SANDSPAWN_TOOL_CACHE_DIR
  process.env.SANDSPAWN_TOOL_CACHE_DIR = store
  t.after(() => (was === undefined ? delete process.env.SANDSPAWN_TOOL_CACHE_DIR : (process.env.SANDSPAWN_TOOL_CACHE_DIR = was)))
  const moved = ['XDG_STATE_HOME', 'XDG_CACHE_HOME', 'XDG_DATA_HOME', 'CARGO_HOME', 'GOPATH', 'GOMODCACHE']
  const env = { ...Object.fromEntries(moved.map((k) => [k, ''])), PATH: process.env.PATH, HOME: home, SANDSPAWN_TOOL_CACHE_DIR: store }
  const ino = (rel) => fs.statSync(path.join(home, rel)).ino
  const before = caches.map(ino)
  const script = 'for d in go go/pkg .yarn .m2 .gradle .local .local/share; do mv $d $d.moved 2>/dev/null && mkdir -p $d && echo "renamed $d"; done; true'
  const r = await spawnSandboxed(['sh', '-c', script], { cwd: home, env, timeout: 60000, sandbox: 'workspace-write' })
  assert.equal(r.exitCode, 0, r.stderr)
  assert.deepEqual(r.toolCaches.caches.map((c) => c.name).sort(), ['go-mod', 'gradle', 'maven', 'pnpm-store', 'xdg-cache', 'yarn-berry'])
  assert.equal(r.stdout, '', 'a directory above an overlaid cache was moved')
  assert.deepEqual(caches.map(ino), before, 'the host\'s cache paths lead to the same directories')
  assert.deepEqual(r.hostRisks, [])
})
