'use strict'
// Policy paths given through the host's symlink in the workspace (`link -> cfg`). A run may repoint
// the link; the next run resolved the path through what the run left there. denyRead's links were
// held (put back and reported after a run that changed them: deny-read.test.js); readOnlyPaths' and
// writableRoots' were not. Found by an attacker's review (rfix26): run 1 did `rm link; mkdir away;
// ln -s away link`, run 2's readOnlyPaths entry resolved to the missing `away/settings.json`, and
// run 2 overwrote the user's `cfg/settings.json` with no hostRisks.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree, show, sh, run, which, waitFor } = require('./helpers')

/** `ws/cfg/settings.json` holds the user's content; `ws/link -> cfg` is the host's link. */
function settingsBehindLink(t) {
  const tree = tempTree(t)
  fs.mkdirSync(path.join(tree.ws, 'cfg'))
  const real = path.join(tree.ws, 'cfg/settings.json')
  fs.writeFileSync(real, 'USER CONTENT\n')
  fs.symlinkSync('cfg', path.join(tree.ws, 'link'))
  return { tree, real, link: path.join(tree.ws, 'link') }
}

/** `writableRoots: ['ws/link/extra']`, `ws/link -> cfg`; `out/extra` is where another run would lead it. */
function writableRootBehindLink(t) {
  const tree = tempTree(t)
  fs.mkdirSync(path.join(tree.ws, 'cfg/extra'), { recursive: true })
  fs.mkdirSync(path.join(tree.out, 'extra'))
  const link = path.join(tree.ws, 'link')
  fs.symlinkSync('cfg', link)
  return { tree, link, policy: { mode: 'workspace-write', writableRoots: [path.join(link, 'extra')] } }
}

/**
 * A cwd named through the host's symlink in the writable /tmp (`BASE/link/proj`, `link -> real`),
 * and the command that plants a repository whose core.fsmonitor touches `marker` in `BASE/evil/proj`
 * and repoints `link` there (printing `planted`).
 */
function linkedCwd(t) {
  const base = fs.mkdtempSync(path.join('/tmp', 'sandspawn-cwdlink-'))
  t.after(() => fs.rmSync(base, { recursive: true, force: true }))
  fs.mkdirSync(path.join(base, 'real', 'proj'), { recursive: true })
  const link = path.join(base, 'link')
  fs.symlinkSync('real', link)
  const marker = path.join(base, 'PWNED')
  const plant = `cd ${base} && git init -q evil/proj && git -C evil/proj config core.fsmonitor 'touch ${marker}; false' && ln -sfn evil link && echo planted`
  return { base, link, cwd: path.join(link, 'proj'), marker, plant }
}

describe('policy paths resolved through a symlink in the workspace', { concurrency: 2 }, () => {
  for (const [what, plant] of [
    ['repointed to another directory', 'rm link && mkdir away && ln -s away link'],
    ['made a loop', 'rm link && ln -s link link'],
    ['removed', 'rm link'],
  ]) {
    test(`the host's symlink a readOnlyPaths path is resolved through, ${what} by a run: put back and reported; the next run cannot write the file`, async (t) => {
      const { tree, real, link } = settingsBehindLink(t)
      const policy = { mode: 'workspace-write', readOnlyPaths: [path.join(link, 'settings.json')] }
      const r1 = await sh(`echo x > cfg/settings.json; ${plant} && echo planted`, { cwd: tree.ws, sandbox: policy })
      assert.equal(r1.stdout, 'planted\n', show(r1))
      const risk = r1.hostRisks.find((h) => h.path === link)
      assert.ok(risk && /readOnlyPaths/.test(risk.detail) && /undone: the link was made again/.test(risk.detail), JSON.stringify(r1.hostRisks))
      assert.equal(fs.readlinkSync(link), 'cfg')
      const r2 = await sh('echo EVIL > cfg/settings.json; echo EVIL > link/settings.json; echo ran', { cwd: tree.ws, sandbox: policy })
      assert.match(r2.stdout, /ran\n$/, show(r2))
      assert.equal(fs.readFileSync(real, 'utf8'), 'USER CONTENT\n', `the read-only file was written\n${show(r2)}`)
    })
  }

  // Left open beside it: a writable root given through the link. Repointed by a run, the next
  // run's writable root was wherever the run pointed the link (here a directory outside the workspace).
  test("the host's symlink a writableRoots path is resolved through, repointed by a run: put back and reported; the next run writes where the caller meant", async (t) => {
    const tree = tempTree(t)
    fs.mkdirSync(path.join(tree.ws, 'cfg/extra'), { recursive: true })
    fs.mkdirSync(path.join(tree.out, 'extra'))
    fs.symlinkSync('cfg', path.join(tree.ws, 'link'))
    const link = path.join(tree.ws, 'link')
    const policy = { mode: 'workspace-write', writableRoots: [path.join(link, 'extra')] }
    const r1 = await sh(`rm link && ln -s ${tree.out} link && echo planted`, { cwd: tree.ws, sandbox: policy })
    assert.equal(r1.stdout, 'planted\n', show(r1))
    assert.ok(r1.hostRisks.some((h) => h.path === link && /writableRoots/.test(h.detail)), JSON.stringify(r1.hostRisks))
    assert.equal(fs.readlinkSync(link), 'cfg')
    const r2 = await sh(`echo EVIL > ${path.join(tree.out, 'extra/f')}; echo ran`, { cwd: tree.ws, sandbox: policy })
    assert.match(r2.stdout, /ran\n$/, show(r2))
    assert.ok(!fs.existsSync(path.join(tree.out, 'extra/f')), `the run wrote outside its roots\n${show(r2)}`)
  })

  // Found by an attacker's review (host29): the cwd's own way was never held. A workspace the
  // caller names through its link in the writable /tmp (`/tmp/x/link/proj`, `link -> real`): the
  // run made `evil/proj` a repository with `core.fsmonitor` (nothing walks /tmp) and repointed
  // `link` there, hostRisks []. The host's next `git status` in the cwd it named (an agent's diff
  // after each command) ran the planted program, unsandboxed; every later run in that cwd worked in
  // the run's tree. Each mode: Landlock's /tmp is writable there too.
  for (const [mode, extra] of Object.entries(require('./above-tmp').MODES)) {
    test(`${mode}: the host's symlink the cwd is named through, repointed by a run to a repository it planted in /tmp: put back and reported; the host's git status in that cwd runs nothing`, async (t) => {
      const { base, link, cwd, marker, plant } = linkedCwd(t)
      const sandbox = { mode: 'workspace-write', ...(extra.review ? { workspace: 'review' } : {}) }
      const r = await sh(plant, { cwd, sandbox, ...(extra.linux ? { linux: extra.linux } : {}) })
      // Whatever the assertions say: a pending set would stay in the default store.
      if (r.changeSet) t.after(() => require('./helpers').sandspawn.discardChangeSet(r.changeSet.id).catch(() => {}))
      const risks = r.hostRisks || []
      const target = fs.readlinkSync(link)
      spawnSync('git', ['status', '--short'], { cwd, stdio: 'ignore' })
      assert.equal(fs.existsSync(marker), false, `the host's git status in ${cwd} ran the planted core.fsmonitor (link -> ${target}, hostRisks ${JSON.stringify(risks)})\n${show(r)}`)
      assert.equal(target, 'real', show(r))
      if (r.stdout === 'planted\n') assert.ok(risks.some((h) => h.path === link), `the repointed link unreported: ${JSON.stringify(risks)}`)
    })
  }

  // Found by an attacker's review (rfix29): the CLI named its cwd `path.resolve('.')`, the
  // process's physical cwd, never the way the user's shell names it ($PWD, `pwd -L`): from a shell
  // in `/tmp/x/link/proj`, `sandspawn --mode workspace-write -- ...` held no link, the run
  // repointed `link` to its planted repository with nothing said, and the next `cd
  // /tmp/x/link/proj && git status` (an agent's next command) ran the planted program.
  for (const [how, from, args] of [['no --cwd', 'link/proj', []], ['a relative --cwd', 'link', ['--cwd', 'proj']]]) {
    test(`CLI run from a shell in a cwd named through the host's symlink (PWD), ${how}: the link a run repointed is put back and reported; the host's git status there runs nothing`, (t) => {
      const { base, link, cwd, marker, plant } = linkedCwd(t)
      const bin = path.join(__dirname, '..', '..', 'bin', 'sandspawn.js')
      // As a shell started there runs it: the process's cwd resolved, PWD the way the user named it.
      const shell = path.join(base, from)
      const r = spawnSync(process.execPath, [bin, ...args, '--mode', 'workspace-write', '--', 'sh', '-c', plant], { cwd: shell, env: { ...process.env, PWD: shell }, encoding: 'utf8', timeout: 60000 })
      const target = fs.readlinkSync(link)
      spawnSync('git', ['status', '--short'], { cwd, stdio: 'ignore' })
      const said = `status ${r.status}\nstdout ${r.stdout}\nstderr ${r.stderr}`
      assert.equal(fs.existsSync(marker), false, `the host's git status in ${cwd} ran the planted core.fsmonitor (link -> ${target})\n${said}`)
      assert.equal(target, 'real', said)
      assert.match(r.stderr, new RegExp(link.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), `the repointed link unreported\n${said}`)
    })
  }

  // The same review (host29), across processes: while the run that repointed the cwd's link
  // lives, a run started in another process with the same cwd worked in the run's tree.
  test("a cwd's link repointed by a run in another process: a run started here meanwhile is refused, and the user's link is what stays", async (t) => {
    const base = fs.mkdtempSync(path.join('/tmp', 'sandspawn-cwdlink-'))
    t.after(() => fs.rmSync(base, { recursive: true, force: true }))
    fs.mkdirSync(path.join(base, 'real', 'proj'), { recursive: true })
    fs.mkdirSync(path.join(base, 'evil', 'proj'), { recursive: true })
    const link = path.join(base, 'link')
    fs.symlinkSync('real', link)
    const cwd = path.join(link, 'proj')
    const other = `const s = require(${JSON.stringify(path.resolve(__dirname, '../..'))});
      s.spawnSandboxed(['bash', '-c', 'ln -sfn evil ${link} && sleep 3'], { cwd: ${JSON.stringify(cwd)}, sandbox: { mode: 'workspace-write' }, timeout: 20000 })
        .then((r) => console.log(r.exitCode), (e) => console.log(e.message))`
    const child = require('node:child_process').spawn(process.execPath, ['-e', other], { stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise((resolve) => child.on('exit', resolve))
    const target = () => { try { return fs.readlinkSync(link) } catch { return null } }
    const deadline = Date.now() + 10000
    while (target() !== 'evil' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.equal(target(), 'evil', 'the other run repointed the link')
    const here = await sh('echo EVIL > planted; echo ran', { cwd, sandbox: { mode: 'workspace-write' }, timeout: 20000 }).catch((e) => e)
    await exited
    assert.ok(!fs.existsSync(path.join(base, 'evil', 'proj', 'planted')), `the run here worked where the other run pointed the link: ${JSON.stringify(here.hostRisks || here.message)}`)
    assert.equal(here.code, 'ERR_SANDBOX_INVALID_OPTIONS', JSON.stringify(here.message || here.stdout))
    assert.equal(target(), 'real', `the link stayed repointed: ${JSON.stringify(here.hostRisks || here.message)}`)
  })

  // Found by an attacker's review (rfix27): the host's link dangles (`link -> cfg`, `cfg` not made
  // yet). The path's first missing component was taken to be the link itself, which exists: after
  // every run, even one that did nothing, the link was reported created and moved aside, then
  // reported removed and made again (a `link.sandspawn-held-*` left per run); and a run that made
  // `cfg/settings.json` kept it, the path the caller named, while the report said "undone".
  for (const kind of ['readOnlyPaths', 'denyRead']) {
    test(`${kind} through the host's dangling symlink: where it leads is kept absent, and a run that does nothing is not reported`, async (t) => {
      const tree = tempTree(t)
      const link = path.join(tree.ws, 'link')
      fs.symlinkSync('cfg', link)
      const policy = { mode: 'workspace-write', [kind]: [path.join(link, 'settings.json')] }
      const r0 = await sh('echo ran', { cwd: tree.ws, sandbox: policy })
      assert.equal(r0.stdout, 'ran\n', show(r0))
      assert.deepEqual(r0.hostRisks, [], 'a run that did nothing')
      assert.deepEqual(fs.readdirSync(tree.ws).filter((n) => n.startsWith('link')), ['link'])
      const r1 = await sh('mkdir -p cfg && echo PLANTED > cfg/settings.json; echo ran', { cwd: tree.ws, sandbox: policy })
      assert.match(r1.stdout, /ran\n$/, show(r1))
      assert.equal(fs.existsSync(path.join(tree.ws, 'cfg/settings.json')), false, `the path the caller named was made\n${JSON.stringify(r1.hostRisks)}`)
      assert.equal(fs.readlinkSync(link), 'cfg')
    })
  }

  // Found by an attacker's review (rfix27): the links were held per process. A run in another
  // process (a second agent session, the CLI in another terminal) repointed the link while a run
  // here started: this run's writable root was where that run pointed it (it wrote `out/extra/f`,
  // hostRisks []), and, outliving the other run, it "put back" the repointed link after the other
  // had restored the user's: the link stayed on `out`, the writable root of every later run.
  test("a writableRoots link repointed by a run in another process: a run started here meanwhile is refused, and the user's link is what stays", async (t) => {
    const { tree, link, policy } = writableRootBehindLink(t)
    const other = `const s = require(${JSON.stringify(path.resolve(__dirname, '../..'))});
      s.spawnSandboxed(['bash', '-c', 'rm link && ln -s ${tree.out} link && sleep 3'], { cwd: ${JSON.stringify(tree.ws)}, sandbox: ${JSON.stringify(policy)}, timeout: 20000 })
        .then((r) => console.log(r.exitCode), (e) => console.log(e.message))`
    const child = require('node:child_process').spawn(process.execPath, ['-e', other], { stdio: ['ignore', 'pipe', 'inherit'] })
    const exited = new Promise((resolve) => child.on('exit', resolve))
    // Between its `rm` and its `ln` there is no link.
    const target = () => { try { return fs.readlinkSync(link) } catch { return null } }
    const deadline = Date.now() + 10000
    while (target() !== tree.out && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    assert.equal(target(), tree.out, 'the other run repointed the link')
    const here = await sh(`echo EVIL > ${path.join(tree.out, 'extra/f')}; sleep 5; echo ran`, { cwd: tree.ws, sandbox: policy, timeout: 20000 }).catch((e) => e)
    await exited
    assert.ok(!fs.existsSync(path.join(tree.out, 'extra/f')), `the run here wrote where the other run pointed the link: ${JSON.stringify(here.hostRisks || here.message)}`)
    assert.equal(target(), 'cfg', `the link stayed repointed: ${JSON.stringify(here.hostRisks || here.message)}`)
  })

  // Found by an attacker's review (crossb39, left by cross39): a host process whose state directory
  // lies under the shared /tmp (HOME or XDG_STATE_HOME there, as some CI and agent harnesses run)
  // kept its held links' records there, where another process's default run (tmp 'writable') can
  // write. That run forged the record of the host's writableRoots link and held its lock: the
  // record says the link as it is (its inode and ctime read with lstat), which the host's walk
  // accepts, until the host's hold takes a lock of its own (seen with F_GETLK), then a target of
  // the forger's, which the hold takes as the link as found: after the run, the host "put back"
  // the user's link to the forger's target, every later run's writable root.
  test('a host process with its state directory under /tmp: another process\'s run cannot forge its held links\' records', { skip: !which('python3') && 'no python3' }, async (t) => {
    const home = fs.mkdtempSync('/tmp/sandspawn-xb39-home-')
    t.after(() => fs.rmSync(home, { recursive: true, force: true }))
    await forgedRecordsHold(t, { home, otherEnv: undefined, hostEnv: { HOME: home, XDG_STATE_HOME: '' } })
  })

  // Found by an attacker's review of that fix (rev40): only /tmp was taken for shared. A harness
  // that gives its processes one TMPDIR outside /tmp (CI runners' $RUNNER_TEMP, /var/tmp/build)
  // and a HOME below it had the records kept there, and every default run of any process with
  // that TMPDIR may write its TMPDIR: the same forgery put the user's link back to its target.
  test('a host process with its state directory under its TMPDIR: another process\'s run with that TMPDIR cannot forge its held links\' records', { skip: !which('python3') && 'no python3' }, async (t) => {
    const tmpdir = fs.mkdtempSync('/var/tmp/sandspawn-xb40-tmp-')
    t.after(() => fs.rmSync(tmpdir, { recursive: true, force: true }))
    const home = path.join(tmpdir, 'home')
    fs.mkdirSync(home)
    await forgedRecordsHold(t, { home, otherEnv: { ...process.env, TMPDIR: tmpdir }, hostEnv: { HOME: home, XDG_STATE_HOME: '', TMPDIR: tmpdir } })
  })

  // Found by an attacker's review (cross28): the shared records (`held-links`) were locked with
  // flock(2), which a descriptor opened for reading takes exclusive too, and the Landlock mode
  // restricts no reads. A Landlock command took a record shared while another run held the link
  // (so the holder, ending, left the file), then exclusive: the next run with that policy waited in
  // its policy's resolution, on the host's main thread and holding the process's lock on the held
  // links, for as long as the command lived: the host's event loop stood still (a 2 s timeout did
  // nothing), every run of the process with it.
  // Each step waits for the one before to be reported, not for a time: the first run holds the link
  // until the Landlock command says it took the record shared, the next run starts once it says it
  // tried the exclusive lock (a fixed 3 s hold and 1 s waits raced a loaded machine's starts). The
  // command holds its locks until the test ends, up to 120 s: the next run may take 60 s at most
  // (a hang bound: held up, it waits for the command's end), its timeout 30 s below that.
  test('a Landlock command that locks a held link\'s shared record cannot hold up the next run through that link, nor the host\'s event loop', { skip: !which('python3') && 'no python3', timeout: 300000 }, async (t) => {
    const tree = tempTree(t)
    fs.mkdirSync(path.join(tree.ws, 'cfg'))
    fs.writeFileSync(path.join(tree.ws, 'cfg/settings.json'), 'USER\n')
    const link = path.join(tree.ws, 'link')
    fs.symlinkSync('cfg', link)
    const policy = { mode: 'workspace-write', readOnlyPaths: [path.join(link, 'settings.json')] }
    const state = path.join(process.env.XDG_STATE_HOME || path.join(require('node:os').homedir(), '.local/state'), 'sandspawn/held-links')
    // Each record's lock file (NAME.lock, mode 0200) is no reader's: an ordinary user cannot read
    // it (root can), so it is passed over, not taken for the end of the listing (CI's pass as an
    // ordinary user failed here: every record was missed).
    const holds = (n) => { try { return fs.readFileSync(path.join(state, n)).includes(link) } catch { return false } }
    const records = () => { try { return fs.readdirSync(state).filter(holds) } catch { return [] } }
    const mayEnd = path.join(tree.ws, 'first-may-end')
    const first = sh(`while [ ! -e ${mayEnd} ]; do sleep 0.05; done`, { cwd: tree.ws, sandbox: policy, timeout: 120000 })
    assert.ok(await waitFor(() => records().length > 0, 60000), 'the first run holds the link')
    const done = path.join(tree.out, 'first-done')
    const finish = path.join(tree.out, 'test-done')
    // Every lock a read-only descriptor can take: flock shared, then exclusive once the holder is
    // gone; a POSIX read lock too (the kind that meets open file description locks).
    const attack = `
import fcntl, os, sys, time
d, link, done, finish = sys.argv[1:5]
held = []
for n in os.listdir(d):
    try: f = open(os.path.join(d, n), 'rb')
    except OSError: continue
    if link.encode() in f.read():
        fcntl.flock(f, fcntl.LOCK_SH)
        try: fcntl.lockf(f, fcntl.LOCK_SH)
        except OSError as e: print('lockf', e, flush=True)
        held.append(f)
print('shared', len(held), flush=True)
while not os.path.exists(done): time.sleep(0.05)
for f in held:
    try: fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB); print('exclusive', flush=True)
    except OSError as e: print('flock -x', e, flush=True)
print('tried', flush=True)
deadline = time.time() + 120
while not os.path.exists(finish) and time.time() < deadline: time.sleep(0.05)
`
    // Resolved once the command's output has a line starting with the word.
    let said = ''
    const waiting = {}
    const heard = (word) => new Promise((res) => { waiting[word] = res })
    const shared = heard('shared')
    const tried = heard('tried')
    const landlock = run(['python3', '-c', attack, state, link, done, finish], {
      cwd: tree.out, linux: { allow: ['landlock'] }, timeout: 150000,
      onOutput: ({ data }) => {
        said += data.toString()
        for (const [word, res] of Object.entries(waiting)) if (new RegExp(`^${word}`, 'm').test(said)) res()
      },
    })
    await Promise.race([shared, landlock])
    fs.writeFileSync(mayEnd, '')
    const r1 = await first
    assert.equal(r1.exitCode, 0, show(r1))
    fs.writeFileSync(done, '')
    await Promise.race([tried, landlock])
    let ticks = 0
    const ticker = setInterval(() => ticks++, 100)
    const t0 = Date.now()
    const next = await sh('cat link/settings.json', { cwd: tree.ws, sandbox: policy, timeout: 30000 }).catch((e) => e)
    const took = Date.now() - t0
    clearInterval(ticker)
    fs.writeFileSync(finish, '')
    const l = await landlock
    assert.match(l.stdout, /shared 1/, show(l))
    assert.ok(took < 60000, `the next run through the link took ${took} ms (the host's loop ticked ${ticks} times in it; the Landlock command said ${JSON.stringify(l.stdout)})`)
    assert.equal(next.stdout, 'USER\n', show(next))
  })
})

/**
 * The host process (`hostEnv` over this one's: its state directory in `home`) runs through a held
 * writableRoots link while another process's default run (`otherEnv`) forges that link's record in
 * `home`'s held-links and holds its lock: the link must stay the user's, every run pass, no risk.
 */
async function forgedRecordsHold(t, { home, otherEnv, hostEnv }) {
  const { tree, link, policy } = writableRootBehindLink(t)
  const records = path.join(home, '.local/state/sandspawn/held-links')
  const done = path.join(tree.root, 'done')
  // Another process's default run (this one's): the record of `link` (FNV-1a of its path), its
  // lock file held (a POSIX write lock meets the holders' OFD locks), rewritten in place again
  // and again, the two versions of one length.
  const forge = `
import fcntl, os, struct, sys
d, link, target, done = sys.argv[1:5]
h = 0xcbf29ce484222325
for b in link.encode(): h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
name = '%016x' % h
os.makedirs(d, mode=0o700, exist_ok=True)
st = os.lstat(link)
now = lambda t: link.encode() + b'\\0' + t + b'\\0' + ('%d %d %d ' % (st.st_dev, st.st_ino, st.st_ctime_ns // 10**9)).encode()
ns = str(st.st_ctime_ns % 10**9).encode()
width = max(len(now(b'cfg')), len(now(target.encode()))) + len(ns) + 1
as_is, theirs = [now(t) + ns.rjust(width - len(now(t)), b'0') for t in (b'cfg', target.encode())]
fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT, 0o600)
os.pwrite(fd, as_is, 0)
lock = os.open(os.path.join(d, name + '.lock'), os.O_WRONLY | os.O_CREAT, 0o600)
fcntl.lockf(lock, fcntl.LOCK_EX, 1, 1)
print('forged', flush=True)
# The host's walk reads the link as it is; its hold (a lock of its own, seen with F_GETLK) the other.
held = lambda: struct.unpack('hh4xqqi4x', fcntl.fcntl(lock, fcntl.F_GETLK, struct.pack('hh4xqqi4x', fcntl.F_WRLCK, 0, 0, 0, 0)))[0] != fcntl.F_UNLCK
n = 0
while n % 1000 or not os.path.exists(done):
  os.pwrite(fd, theirs if held() else as_is, 0)
  n += 1
`
  const other = run(['python3', '-c', forge, records, link, tree.out, done], { cwd: tree.out, sandbox: { mode: 'workspace-write' }, timeout: 60000, ...(otherEnv ? { env: otherEnv } : {}) })
  const forged = () => { try { return fs.readdirSync(records).some((n) => n.endsWith('.lock')) } catch { return false } }
  assert.ok(await waitFor(forged, 10000), 'the other run wrote the records\' directory')
  // The host process (HOME under /tmp): runs through the link until one is refused or the link moved.
  const env = { ...process.env, ...hostEnv }
  const script = `const s = require(${JSON.stringify(path.resolve(__dirname, '../..'))}); const fs = require('node:fs');
    (async () => { const out = []
      for (let i = 0; i < 12 && fs.readlinkSync(${JSON.stringify(link)}) === 'cfg'; i++) {
        out.push(await s.spawnSandboxed(['true'], { cwd: ${JSON.stringify(tree.ws)}, sandbox: ${JSON.stringify(policy)}, timeout: 20000 })
          .then((r) => ({ exitCode: r.exitCode, notEnforced: r.sandboxDetails.notEnforced, hostRisks: r.hostRisks }), (e) => ({ error: e.code, message: e.message })))
      }
      console.log(JSON.stringify(out)) })()`
  const host = JSON.parse(spawnSync(process.execPath, ['-e', script], { env, encoding: 'utf8', timeout: 120000 }).stdout)
  fs.writeFileSync(done, '')
  const o = await other
  assert.match(o.stdout, /forged/, show(o))
  const target = () => { try { return fs.readlinkSync(link) } catch { return null } }
  assert.equal(target(), 'cfg', `the host "put back" the link to the forged record's target: ${JSON.stringify(host)}`)
  assert.deepEqual(host.map((r) => r.exitCode), Array(12).fill(0), `a run through the link was refused: ${JSON.stringify(host)}`)
  assert.deepEqual(host.flatMap((r) => r.hostRisks), [], JSON.stringify(host))
}
