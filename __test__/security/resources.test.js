'use strict'
// Issue 29: every resource one run can take is bounded per run. Memory-backed filesystems the
// sandbox makes follow limits.memory (or a fixed cap), and /dev is not a place to write; what a
// run reports as its own memory use is the command's, not the host's.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const { sh, show, run, tempTree } = require('./helpers')

const MiB = 1024 * 1024

/** The dirty pages of `file` in the page cache (fixtures/dirty-pages.py, cachestat(2)); null where
 * the kernel has none (Linux before 6.5). */
function dirtyPages(file) {
  const probe = require('node:path').join(__dirname, '..', 'fixtures', 'dirty-pages.py')
  try {
    return Number(require('node:child_process').execFileSync('python3', [probe, file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }))
  } catch (e) {
    if (e.status === 3) return null
    throw e
  }
}

describe('the sandbox\'s memory-backed filesystems are bounded (issue 29)', () => {
  for (const [where, sandbox] of [['/dev/shm', 'read-only'], ['/tmp', { mode: 'workspace-write', tmp: 'private' }]]) {
    test(`256 MiB into ${where} under limits.memory 64 MiB fails; 32 MiB works`, async (t) => {
      const tree = tempTree(t)
      const write = (mib) => `dd if=/dev/zero of=${where}/f bs=1M count=${mib} 2>&1 | grep -E 'No space|copied'; rm -f ${where}/f`
      const r = await sh(`${write(256)}; echo; ${write(32)}`, { cwd: tree.ws, sandbox, limits: { memory: 64 * MiB } })
      const [big, small] = r.stdout.split('\n\n')
      assert.match(big, /No space left on device/, show(r))
      assert.match(big, /^67108864 bytes /m, `stopped at the limit\n${show(r)}`)
      assert.match(small, /^33554432 bytes .* copied/m, `a write below the limit works\n${show(r)}`)
      assert.doesNotMatch(small, /No space/, show(r))
    })
  }

  // Empty files take no data blocks but an inode, a dentry and a name each (about 1.2 KiB of kernel
  // memory with long names): 1M of them took 1.2 GB of the host's slab beyond a "512 MiB" /dev/shm.
  // The inode count is bounded too, at one per 4 KiB of the data cap (16384 under 64 MiB).
  for (const [where, sandbox] of [['/dev/shm', 'read-only'], ['/tmp', { mode: 'workspace-write', tmp: 'private' }]]) {
    test(`empty files in ${where} under limits.memory 64 MiB stop with ENOSPC at 16384 inodes`, async (t) => {
      const tree = tempTree(t)
      const py = `import os, errno
made = 0
try:
    for i in range(100000):
        os.close(os.open("${where}/%d%s" % (i, "y" * 200), os.O_CREAT | os.O_WRONLY))
        made += 1
except OSError as e:
    print("stopped", errno.errorcode[e.errno])
print("made", made, "files", os.statvfs("${where}").f_files)`
      const r = await run(['python3', '-c', py], { cwd: tree.ws, sandbox, limits: { memory: 64 * MiB }, timeout: 60000 })
      assert.equal(r.exitCode, 0, show(r))
      assert.match(r.stdout, /^stopped ENOSPC$/m, show(r))
      const [, made, files] = /^made (\d+) files (\d+)$/m.exec(r.stdout).map(Number)
      assert.equal(files, 16384, show(r))
      // The root directory is one of the inodes.
      assert.ok(made >= 16380 && made < 16384, show(r))
    })
  }

  test('without limits, /dev/shm holds at most 131072 inodes and a private /tmp 524288', async (t) => {
    const tree = tempTree(t)
    const r = await sh('df --output=itotal /dev/shm /tmp | tail -2', { cwd: tree.ws, sandbox: { mode: 'workspace-write', tmp: 'private' } })
    assert.deepEqual(r.stdout.trim().split('\n').map(Number), [131072, 524288], show(r))
  })

  test('a cwd in the host\'s /dev/shm is visible in read-only mode (read, not written) and writable in workspace-write', async (t) => {
    const fs = require('node:fs')
    if (!fs.existsSync('/dev/shm')) return t.skip('no /dev/shm on this host')
    const dir = fs.mkdtempSync('/dev/shm/sandspawn-cwd-')
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
    fs.writeFileSync(`${dir}/in`, 'host\n')
    const ro = await sh('cat in; echo x > out 2>&1 || echo REFUSED', { cwd: dir, sandbox: 'read-only' })
    assert.equal(ro.exitCode, 0, show(ro))
    assert.match(ro.stdout, /^host\n/, show(ro))
    assert.match(ro.stdout + ro.stderr, /REFUSED|Read-only/, show(ro))
    assert.equal(fs.existsSync(`${dir}/out`), false)
    const ww = await sh('echo x > out', { cwd: dir, sandbox: 'workspace-write' })
    assert.equal(ww.exitCode, 0, show(ww))
    assert.equal(fs.readFileSync(`${dir}/out`, 'utf8'), 'x\n')
  })

  test('without limits, /dev/shm has the documented cap, and /dev itself takes no files', async () => {
    const r = await sh('df -B1 --output=size /dev/shm | tail -1; touch /dev/sandspawn-x 2>&1 || true')
    assert.equal(Number(r.stdout.split('\n')[0].trim()), 512 * MiB, show(r))
    assert.match(r.stdout, /Read-only file system/, show(r))
  })
})

describe('resourceUsage is the command\'s own (issue 29)', () => {
  test('maxRssBytes of `true` is small while the host holds a 600 MB heap', async () => {
    const held = Buffer.alloc(600 * 1000 * 1000, 1)
    try {
      for (const sandbox of ['read-only', 'danger-full-access']) {
        const r = await run(['true'], { sandbox })
        assert.equal(r.exitCode, 0, show(r))
        assert.ok(r.resourceUsage.maxRssBytes < 50 * MiB, `${sandbox}: ${r.resourceUsage.maxRssBytes} bytes`)
      }
      // A command that does use memory still shows it.
      const big = await run(['python3', '-c', 'import time; b = bytearray(200 * 1024 * 1024); time.sleep(0.5)'], { sandbox: 'danger-full-access' })
      assert.ok(big.resourceUsage.maxRssBytes > 150 * MiB, `${big.resourceUsage.maxRssBytes}`)
    } finally {
      held.fill(0)
    }
  })
})

describe('limits.memory bounds each process\'s private memory, as the README says (RLIMIT_DATA)', () => {
  // What it bounds: the heap, private anonymous mappings and private writable file mappings, each
  // process on its own. (What it does not bound, shared memory, is listed in the README.)
  const PY = `import mmap, os, subprocess, sys
MiB = 1 << 20
def attempt(name, make):
    try:
        make()
        print(name, "allowed")
    except (MemoryError, OSError):
        print(name, "refused")
attempt("heap", lambda: bytearray(256 * MiB))
attempt("private-anonymous", lambda: mmap.mmap(-1, 256 * MiB, flags=mmap.MAP_PRIVATE))
fd = os.open("/dev/shm/sparse", os.O_RDWR | os.O_CREAT)
os.ftruncate(fd, 256 * MiB)
attempt("private-file", lambda: mmap.mmap(fd, 256 * MiB, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE))
held = bytearray(24 * MiB)
print("held 24 MiB")
child = subprocess.run([sys.executable, "-c", "bytearray(24 << 20)"])
print("child", "allowed" if child.returncode == 0 else "refused")`

  test('under 64 MiB: 256 MiB of heap, of private anonymous and of private file mappings are refused; 24 MiB in each of two processes works', async () => {
    const r = await run(['python3', '-c', PY], { limits: { memory: 64 * MiB } })
    assert.equal(r.exitCode, 0, show(r))
    assert.deepEqual(r.appliedLimits, { memory: 'rlimit' })
    assert.equal(r.stdout, 'heap refused\nprivate-anonymous refused\nprivate-file refused\nheld 24 MiB\nchild allowed\n', show(r))
  })
})

describe('one run\'s hostRisks are bounded (issue 29)', () => {
  // 100,000 planted repositories made 200,000 entries (52 MB of JSON, 530 MiB more host RSS). A run
  // lists 1,000, then one scan-incomplete entry that counts the rest by kind.
  test('1,500 planted repositories with hooks and core.fsmonitor: 1,000 entries and one that counts 2,000 more', { timeout: 120000 }, async (t) => {
    const tree = tempTree(t)
    const py = `import os
for i in range(1500):
    d = "r%d/p%d/.git" % (i % 20, i)
    os.makedirs(d + "/hooks")
    open(d + "/HEAD", "w").write("ref: refs/heads/main\\n")
    open(d + "/config", "w").write("[core]\\n\\tfsmonitor = /bin/echo\\n")
    open(d + "/hooks/pre-commit", "w").write("#!/bin/sh\\n")`
    const r = await run(['python3', '-c', py], { cwd: tree.ws, sandbox: 'workspace-write', timeout: 100000 })
    assert.equal(r.exitCode, 0, show(r))
    const others = r.hostRisks.filter((h) => h.kind !== 'repository-created' && h.kind !== 'hooks-written')
    assert.equal(r.hostRisks.length, 1001, `${show(r)}\nentries of other kinds: ${JSON.stringify(others)}`)
    const last = r.hostRisks.at(-1)
    assert.equal(last.kind, 'scan-incomplete')
    assert.equal(last.path, tree.ws, 'the area the unlisted entries lie in')
    assert.match(last.detail, /^2000 more host risks were found here and are not listed \(repository-created: \d+, hooks-written: \d+\)/)
    const listed = r.hostRisks.slice(0, -1)
    assert.ok(listed.every((h) => h.kind === 'repository-created' || h.kind === 'hooks-written'), 'every listed entry is one of them')
    assert.deepEqual(listed.map((h) => h.path), listed.map((h) => h.path).sort(), 'in path order')
  })
})

describe('the host\'s reading of the git configuration a run made is bounded (attacker review, cross32)', () => {
  // Repositories whose config is one file of entries, hard-linked (no disk for the command): the host
  // read every entry of each after the run (a Vec of all of them, however many; only then the
  // 10,000-entry bound applied), and again at the next run's setup. 40 repositories of a 16 MiB
  // config cost the host 12 s of CPU after the run and 12 s before the next `true`, the command
  // 0.15 s; 100 of a 1 MiB config 4.3 s and 2.1 s.
  test('40 repositories sharing a 16 MiB config and 100 sharing a 1 MiB one: a few seconds of host CPU, not tens', { timeout: 300000 }, async (t) => {
    const tree = tempTree(t)
    const fs = require('node:fs')
    const path = require('node:path')
    const unit = '[core]\n\tfsmonitor = x\n'
    fs.writeFileSync(path.join(tree.ws, 'big'), unit.repeat(Math.floor((16 << 20) / unit.length) - 1))
    fs.writeFileSync(path.join(tree.ws, 'small'), unit.repeat(Math.floor((1 << 20) / unit.length) - 1))
    fs.writeFileSync(path.join(tree.ws, 'head'), 'ref: refs/heads/main\n')
    const make = (n, cfg) => `for i in $(seq ${n}); do d=${cfg}$i/.git; mkdir -p $d/refs $d/objects; ln ${cfg} $d/config; ln head $d/HEAD; done`
    const hostCpu = async (script) => {
      const before = process.cpuUsage()
      const r = await sh(script, { cwd: tree.ws, sandbox: 'workspace-write', timeout: 200000 })
      const used = process.cpuUsage(before)
      return { r, ms: (used.user + used.system) / 1000 }
    }
    const made = await hostCpu(`${make(40, 'big')}; ${make(100, 'small')}`)
    assert.equal(made.r.exitCode, 0, show(made.r))
    assert.equal(made.r.hostRisks.filter((h) => h.kind === 'repository-created').length, 140, show(made.r))
    const next = await hostCpu('true')
    assert.equal(next.r.exitCode, 0, show(next.r))
    assert.ok(made.ms < 5000, `the run that made them cost the host ${made.ms} ms of CPU`)
    assert.ok(next.ms < 5000, `the next run cost the host ${next.ms} ms of CPU`)
  })
})

describe('one run\'s proxy takes a bounded share of the host\'s descriptors (issue 29)', () => {
  // The command opens 10,000 CONNECT tunnels to an allowed upstream (at most 1,000 in flight) and
  // keeps every one that opens. The run's limit is 256 connections, each two host descriptors
  // (client and upstream), so the proxy holds at most 513 (README, "Limits"). Its counts are
  // written to another name and renamed to `ready`: the test read an empty `ready` once, between
  // its creation and the write (CI, 1 run in 7).
  const FLOOD = `
const net = require('node:net'), fs = require('node:fs')
const proxy = new URL(process.env.HTTP_PROXY), target = process.argv[1]
let started = 0, opened = 0, refused = 0, ended = 0
function next() {
  if (started >= 10000) return
  started++
  const s = net.connect(Number(proxy.port), proxy.hostname, () => s.write('CONNECT ' + target + ' HTTP/1.1\\r\\nHost: ' + target + '\\r\\n\\r\\n'))
  let answered = false
  const settle = (ok) => { if (answered) return; answered = true; ok ? opened++ : refused++; if (!ok) s.destroy(); if (++ended === 10000) { fs.writeFileSync('ready.tmp', opened + ' ' + refused); fs.renameSync('ready.tmp', 'ready') } next() }
  s.once('data', (d) => settle(/^HTTP\\/1\\.[01] 200/.test(d.toString('latin1'))))
  s.on('error', () => settle(false))
  s.on('close', () => settle(false))
}
for (let k = 0; k < 1000; k++) next()
setInterval(() => {}, 1000)
`

  test('10,000 idle tunnels keep the proxy of one run under 513 host descriptors, refused with connection_limit, while another run works', { timeout: 120000 }, async (t) => {
    const fs = require('node:fs')
    const net = require('node:net')
    const { spawnSandboxed } = require('./helpers').sandspawn
    const held = new Set()
    const upstream = net.createServer((s) => {
      held.add(s)
      s.on('error', () => {})
      s.on('close', () => held.delete(s))
    })
    await new Promise((r) => upstream.listen(0, '127.0.0.2', r))
    t.after(() => new Promise((r) => { for (const s of held) s.destroy(); upstream.close(r) }))
    const fds = () => fs.readdirSync('/proc/self/fd').length
    const tree = tempTree(t)
    const options = {
      cwd: tree.ws,
      sandbox: { mode: 'workspace-write', network: { allowedDomains: ['127.0.0.2'], allowPrivateAddresses: ['127.0.0.2'] } },
      limits: { openFiles: 4096 },
    }
    // What a run of this policy holds with no connection (its pipes, pidfd, the proxy's bridge).
    const { startSandboxed } = require('./helpers').sandspawn
    await spawnSandboxed(['true'], options)
    const before = fds()
    const idle = await startSandboxed(['sleep', '60'], options)
    const ownFds = fds() - before
    idle.kill('SIGKILL')
    await idle.wait()
    const ac = new AbortController()
    const target = `127.0.0.2:${upstream.address().port}`
    const flood = spawnSandboxed(['node', '-e', FLOOD, target], { ...options, signal: ac.signal }).catch((e) => e)
    const ready = `${tree.ws}/ready`
    for (let waited = 0; !fs.existsSync(ready) && waited < 90000; waited += 100) await new Promise((r) => setTimeout(r, 100))
    const [opened, refused] = fs.readFileSync(ready, 'utf8').split(' ').map(Number)
    // Descriptors the proxy holds: the host's growth, less the upstream's own accepted sockets
    // and what the run holds anyway; refused connections the command saw answered may take the
    // proxy a moment more to close, so the count is read until it settles (5 s at most).
    let proxyFds = fds() - before - held.size - ownFds
    for (let waited = 0; proxyFds > 513 && waited < 5000; waited += 100) {
      await new Promise((r) => setTimeout(r, 100))
      proxyFds = fds() - before - held.size - ownFds
    }
    const upstreamHeld = held.size
    const other = await spawnSandboxed(['true'])
    const probe = fs.openSync(__filename, 'r')
    fs.closeSync(probe)
    ac.abort()
    const r = await flood
    t.diagnostic(`tunnels open ${opened}, refused ${refused}, proxy descriptors ${proxyFds}, upstream connections ${upstreamHeld}, a run's own ${ownFds}`)
    assert.equal(opened, 256, `the run keeps exactly its 256 connections (refused ${refused})`)
    assert.equal(refused, 10000 - 256)
    assert.equal(upstreamHeld, 256)
    assert.ok(proxyFds <= 513, `the proxy held ${proxyFds} descriptors`)
    assert.equal(other.exitCode, 0, show(other))
    const denials = (r.result || r).networkDenials || []
    const limit = denials.filter((d) => d.reason === 'connection_limit')
    assert.ok(limit.length > 0, `the refusals are reported as connection_limit denials: ${JSON.stringify(denials.slice(0, 3))}`)
  })
})

describe('one run takes a bounded share of the machine\'s pseudo-terminals (attacker review)', () => {
  // Found by an attacker's review: a run opened /dev/ptmx in its sandbox's own devpts (bwrap's
  // `--dev` mounts a new instance) until the kernel refused, 3,066 ptys: every instance but the
  // host's first one draws on one pool (`kernel.pty.max` less `kernel.pty.reserve`, 3,072 by
  // default), so other runs, containers and flatpaks then got no pty at all. The sandbox's devpts
  // now holds at most 256 (README, "Resource limits"). The loop stops 10 past the bound, or at the first
  // refusal, then closes what it opened and opens a pair again: the bound is the instance's, not a
  // leak. The modes bwrap gave the instance are kept (a remount resets what it is not given).
  const PTYS_PER_RUN = 256
  const HOG = `import os, errno, stat
fds = []
try:
    for i in range(${PTYS_PER_RUN + 10}):
        fds.append(os.open('/dev/ptmx', os.O_RDWR | os.O_NOCTTY))
except OSError as e:
    print('stopped', errno.errorcode[e.errno])
print('opened', len(fds))
for fd in fds:
    os.close(fd)
master, slave = os.openpty()
print('reopened', os.ttyname(slave))
print('modes', oct(stat.S_IMODE(os.stat('/dev/pts/ptmx').st_mode)), oct(stat.S_IMODE(os.fstat(slave).st_mode)))`
  const modes = [
    ['read-only', {}],
    ['workspace-write', { sandbox: 'workspace-write' }],
    ['review', { sandbox: { mode: 'workspace-write', workspace: 'review' } }],
    ['a pty run', { pty: true }],
  ]
  for (const [name, options] of modes) {
    test(`${name}: at most ${PTYS_PER_RUN} ptys in the sandbox's devpts, released when closed`, async (t) => {
      const tree = tempTree(t)
      const r = await run(['python3', '-c', HOG], { cwd: tree.ws, limits: { openFiles: 1024 }, timeout: 30000, ...options })
      if (r.changeSet) await require('./helpers').sandspawn.discardChangeSet(r.changeSet.id)
      const out = r.stdout.replace(/\r/g, '')
      assert.equal(r.exitCode, 0, show(r))
      assert.match(out, /^stopped ENOSPC$/m, show(r))
      assert.match(out, new RegExp(`^opened ${PTYS_PER_RUN}$`, 'm'), show(r))
      assert.match(out, /^modes 0o666 0o620$/m, `ptmxmode and mode are bwrap's\n${show(r)}`)
      assert.match(out, /^reopened \/dev\/pts\/\d+$/m, show(r))
    })
  }
})

describe('a run\'s end does not flush the host\'s filesystem (issue 32, issue 36)', () => {
  // An overlay mounted without `volatile` syncs its upper directory's whole filesystem when the
  // run's mount namespace goes away (overlayfs's sync_fs on unmount): the run's exit waited for
  // every dirty page on the host's disk, 50 to 110 ms while a build wrote (every workspace-write
  // run mounts the private tool caches' overlays; review mode one more). The probe: a fresh file
  // written beside the overlays' upper directories keeps its dirty pages through a run, as it does
  // through any 30 s without a sync (`vm.dirty_expire_centisecs`).
  const fs = require('node:fs')
  const path = require('node:path')

  for (const [what, sandbox] of [
    ['workspace-write with the private tool caches', { mode: 'workspace-write', toolCaches: 'private' }],
    ['review mode', { mode: 'workspace-write', workspace: 'review', toolCaches: 'none' }],
  ]) {
    test(`${what}: 64 MiB written before the run are still dirty after it`, async (t) => {
      const tree = tempTree(t)
      const state = path.join(tree.root, 'state')
      fs.mkdirSync(state)
      const env = { ...process.env, SANDSPAWN_TOOL_CACHE_DIR: path.join(state, 'caches'), SANDSPAWN_CHANGE_SET_DIR: path.join(state, 'sets') }
      const saved = process.env.SANDSPAWN_CHANGE_SET_DIR
      process.env.SANDSPAWN_CHANGE_SET_DIR = env.SANDSPAWN_CHANGE_SET_DIR
      t.after(() => (saved === undefined ? delete process.env.SANDSPAWN_CHANGE_SET_DIR : (process.env.SANDSPAWN_CHANGE_SET_DIR = saved)))
      // A first run makes the store's directories, so the probe run is an ordinary warm one.
      assert.equal((await run(['true'], { cwd: tree.ws, env, sandbox })).exitCode, 0)
      // A fresh file (never truncated: ext4 allocates an overwritten file's blocks early, and any
      // journal commit then writes them) on the filesystem of the overlays' upper directories.
      const probe = path.join(state, 'probe')
      fs.writeFileSync(probe, Buffer.alloc(64 * MiB, 1))
      const before = dirtyPages(probe)
      if (before === null) return t.skip('this kernel has no cachestat(2) (Linux 6.5+) to count dirty pages')
      assert.ok(before > (48 * MiB) / 4096, `the probe is dirty before the run (${before} pages)`)
      const r = await run(['true'], { cwd: tree.ws, env, sandbox })
      const after = dirtyPages(probe)
      assert.equal(r.exitCode, 0, show(r))
      assert.ok(after > before / 2, `the run's end wrote the host's dirty pages back: ${before} dirty pages before, ${after} after`)
    })
  }
})

describe('a command\'s sync() and syncfs() write back none of the host\'s dirty pages (attacker review, kern34)', () => {
  // Found by an attacker's review (kern34): sync() writes back every dirty page of every filesystem
  // of the machine, and syncfs() every one of a filesystem any descriptor lies on (a read-only one
  // will do), the host's files included, without the command opening them. A default
  // workspace-write run's sync loop (1,740 calls in 12 s) while a host process rewrote a 16 MiB file
  // ten times a second made the host's disk write 2,608 MiB in 10 s, against 73 MiB without it: each
  // rewrite written out instead of the last one after 30 s (vm.dirty_expire_centisecs). Both are
  // answered 0 without the call now; fsync of a file the command opens still writes that file.
  const fs = require('node:fs')
  const path = require('node:path')
  for (const [what, script] of [
    ['sync', 'sync'],
    ['syncfs (sync -f)', 'sync -f /'],
    ['Python\'s os.sync()', 'python3 -c "import os; os.sync()"'],
  ]) {
    test(`${what} in a default workspace-write run: 64 MiB the host wrote are still dirty after it`, async (t) => {
      const tree = tempTree(t)
      const probe = path.join(tree.root, 'probe')
      fs.writeFileSync(probe, Buffer.alloc(64 * MiB, 1))
      const before = dirtyPages(probe)
      if (before === null) return t.skip('this kernel has no cachestat(2) (Linux 6.5+) to count dirty pages')
      assert.ok(before > (48 * MiB) / 4096, `the probe is dirty before the run (${before} pages)`)
      const r = await run(['sh', '-c', `${script} && echo synced`], { cwd: tree.ws, sandbox: 'workspace-write' })
      const after = dirtyPages(probe)
      assert.equal(r.exitCode, 0, show(r))
      assert.match(r.stdout, /^synced$/m, `the call still succeeds\n${show(r)}`)
      assert.ok(after > before / 2, `the command wrote the host's dirty pages back: ${before} dirty pages before, ${after} after`)
    })
  }
})

describe('a command\'s quotactl(Q_SYNC) flushes none of the host\'s filesystem (attacker review, kern39)', () => {
  // Found by an attacker's review (kern39): Q_SYNC needs no privilege, and quotactl_fd asks no write
  // access for it, so a descriptor opened for reading through a read-only mount will do. On ext4
  // without its quota feature (mke2fs's default) it runs the filesystem's sync_fs, writes back every
  // dirty buffer of its block device and flushes the device's cache: the syncfs() the filter answers
  // 0 (kern34), past it. A read-only run's Q_SYNC loop while a host process touched 2,000 files made
  // the host's disk write 874 MiB in 10 s, against 0 MiB without it and 21 MiB for a run's fsync loop
  // on a file of its own. The probe: each call that reaches the filesystem makes the device flush its
  // cache (the 16th field of its stat); a host whose own calls flush nothing (XFS and btrfs have no
  // quota_sync, a device without a write-back cache takes no flush) cannot tell, and skips.
  const fs = require('node:fs')
  const path = require('node:path')
  const { execFileSync } = require('node:child_process')
  const CALLS = 200
  /** The flushes the block device under `dir` has completed, or null without one (tmpfs, overlayfs). */
  const flushes = (dir) => {
    const dev = fs.statSync(dir, { bigint: true }).dev
    const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn)
    const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn)
    try {
      const fields = fs.readFileSync(`/sys/dev/block/${major}:${minor}/stat`, 'utf8').trim().split(/\s+/)
      return fields.length >= 17 ? Number(fields[15]) : null
    } catch {
      return null
    }
  }

  for (const [what, sandbox] of [['read-only', 'read-only'], ['workspace-write', 'workspace-write']]) {
    test(`${what}: ${CALLS} calls on a descriptor of the host's filesystem make its device flush nothing`, { timeout: 60000 }, async (t) => {
      const tree = tempTree(t)
      const attack = path.join(tree.root, 'quota-sync')
      try {
        execFileSync('cc', ['-O1', '-o', attack, path.join(__dirname, 'attacks', 'quota-sync.c')], { stdio: 'pipe' })
      } catch {
        return t.skip('no C compiler')
      }
      const before = flushes(tree.root)
      if (before === null) return t.skip('the test tree lies on no block device')
      execFileSync(attack, [tree.root, '40'], { encoding: 'utf8' })
      const calibrated = flushes(tree.root) - before
      if (calibrated < 30) return t.skip(`the host's own 40 calls made ${calibrated} flushes: this filesystem's Q_SYNC flushes nothing here`)
      const start = flushes(tree.root)
      const r = await run([attack, tree.root, String(CALLS)], { cwd: tree.ws, sandbox })
      const made = flushes(tree.root) - start
      assert.equal(r.exitCode, 0, show(r))
      assert.ok(made < CALLS / 2, `the command's ${CALLS} calls made the host's device flush ${made} times (the host's 40: ${calibrated})\n${show(r)}`)
      assert.match(r.stdout, /^quotactl_fd-sync EPERM$/m, show(r))
    })
  }
})

describe('one run takes a bounded share of the user\'s queued signals and message-queue bytes (attacker review)', () => {
  // Found by an attacker's review: a run made POSIX timers until the kernel refused, 96,368, each
  // reserving a queued signal against the user's RLIMIT_SIGPENDING; while it lived no other program
  // of the user (root included) could make a timer or `sigqueue`. Likewise its POSIX message
  // queues took the user's whole RLIMIT_MSGQUEUE. The helper now lowers both inside the sandbox's
  // user namespace, whose count the kernel charges to the user's as a whole (README, "Per-user
  // kernel budgets"). The run takes until refused; the host then makes one more while it holds them.
  const fs = require('node:fs')
  const path = require('node:path')
  const { spawnSync } = require('node:child_process')
  const FIXTURE = path.join(__dirname, '..', 'fixtures', 'user-budget.py')
  const SIGPENDING_PER_RUN = 4096
  // Default-sized queues (10 messages of 8 KiB, about 82 KiB each with the kernel's bookkeeping)
  // within 256 KiB.
  const QUEUES_PER_RUN = 3
  // The host's soft limit, from a line like "Max pending signals  96369  96369  signals".
  const hostLimit = (name) => {
    const line = fs.readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith(name))
    const soft = line.slice(name.length).trim().split(/\s+/)[0]
    return soft === 'unlimited' ? Infinity : Number(soft)
  }

  for (const [kind, one, limit, bound] of [
    ['timers', 'timer', 'Max pending signals', SIGPENDING_PER_RUN],
    ['queues', 'queue', 'Max msgqueue size', QUEUES_PER_RUN],
  ]) {
    test(`${kind}: a run takes at most ${bound}, and the host still makes one while it holds them`, { timeout: 120000 }, async (t) => {
      if (process.platform !== 'linux') return t.skip('Linux only')
      if (kind === 'timers' && hostLimit(limit) < 2 * SIGPENDING_PER_RUN) return t.skip(`the host's own ${limit} is not above the run's bound`)
      if (kind === 'queues' && hostLimit(limit) < 3 * 262144) return t.skip(`the host's own ${limit} is not above the run's bound`)
      const tree = tempTree(t)
      const ready = path.join(tree.ws, 'ready')
      const ac = new AbortController()
      const held = run(['python3', FIXTURE, kind, ready], { cwd: tree.ws, sandbox: 'workspace-write', signal: ac.signal, timeout: 100000 }).catch((e) => e)
      for (let waited = 0; !fs.existsSync(ready) && waited < 90000; waited += 100) await new Promise((r) => setTimeout(r, 100))
      const made = fs.existsSync(ready) ? fs.readFileSync(ready, 'utf8') : 'no ready file'
      const host = spawnSync('python3', [FIXTURE, one], { encoding: 'utf8' })
      ac.abort()
      const r = await held
      t.diagnostic(`the run: ${made}; the host's one more: ${host.status === 0 ? 'made' : host.stdout.trim()}`)
      const m = /^made (\d+) (\w+)$/.exec(made)
      assert.ok(m, `${made}\n${show(r.result || r)}`)
      assert.ok(Number(m[1]) <= bound && Number(m[1]) >= bound * 0.9, `the run made ${m[1]}, bound ${bound}`)
      assert.equal(m[2], kind === 'timers' ? 'EAGAIN' : 'EMFILE')
      assert.equal(host.status, 0, `the host made no ${one} while the run held its ${kind}: ${host.stdout}${host.stderr}`)
    })
  }
})
