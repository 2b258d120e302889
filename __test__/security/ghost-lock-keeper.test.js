'use strict'
// Found by an attacker's review (rev42) of flake41's fix: a POSIX lock whose owner's pid the
// kernel gives as 0 is taken for a plan's held outside this process's pid namespace, and its
// directory's entries are left alone. A command forges one: a process it clones with CLONE_FILES
// takes a read lock on the workspace's top and ends; the lock lives on with the descriptor table
// the command still holds, and its owner's pid, freed, reads 0 in every pid namespace but the
// first. With sandspawn in a pid namespace of its own (a container; CI's unshare --pid), the
// keeper then left a planted .envrc on the host for the whole run instead of moving it aside at
// once. In a mount and pid namespace of the test's own (`unshare`, as root).

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree } = require('./helpers')

const INDEX = path.join(__dirname, '..', '..', 'index.js')
const CLONE = { x64: 56, arm64: 220 }[process.arch]
const NEEDS = process.platform !== 'linux' || process.getuid() !== 0 || !CLONE
  || spawnSync('unshare', ['--pid', '--fork', '--mount-proc', 'true']).status !== 0
  || spawnSync('perl', ['-e', '1']).status !== 0
  ? 'needs root, unshare --pid --mount-proc, perl, x64 or arm64' : false

// The lock's locker ends; its descriptor table (and so the lock) lives on in the process that execs ARGV[1..].
// Since rev43 the filter refuses such a clone (CLONE_FILES without CLONE_THREAD): the command goes on
// without the lock, and says so on stderr.
const GHOST = `use POSIX (); $^F = 1000; open(my $fh, '<', $ARGV[0]) or die "open: $!";
my $pid = syscall(${CLONE}, 0x400 | 17, 0, 0, 0, 0);
if ($pid < 0) { print STDERR "clone(CLONE_FILES) refused: $!\n"; shift @ARGV; exec @ARGV or die "exec: $!" }
if ($pid == 0) { my $l = pack('s s x4 q q i x4', 0, 0, 0, 0, 0); fcntl($fh, 6, $l) or POSIX::_exit(1); POSIX::_exit(0) }
waitpid($pid, 0); die "lock: $?" if $?; shift @ARGV; exec @ARGV or die "exec: $!"`

// The command plants .envrc and waits (a generous hang bound, 20 s) for the keeper to move it.
const WATCH = 'echo "echo planted" > .envrc; i=0; while [ -e .envrc ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done; [ -e .envrc ] && echo KEPT || echo MOVED'

test('a lock whose locker ended keeps no planted name on the host during the run', { skip: NEEDS }, (t) => {
  const { root, ws } = tempTree(t)
  fs.writeFileSync(path.join(root, 'ghost.pl'), GHOST)
  const command = ['perl', path.join(root, 'ghost.pl'), '.', 'sh', '-c', WATCH]
  const probe = `const s = require(${JSON.stringify(INDEX)})
s.spawnSandboxed(${JSON.stringify(command)}, { cwd: ${JSON.stringify(ws)}, timeout: 60000, sandbox: { mode: 'workspace-write', writableRoots: [${JSON.stringify(root)}] } })
  .then((r) => console.log(JSON.stringify({ ran: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`
  const r = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, '-e', probe], { encoding: 'utf8', timeout: 120000 })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const got = JSON.parse(r.stdout.trim().split('\n').pop())
  assert.equal(got.ran, 0, JSON.stringify(got))
  t.diagnostic(got.err.trim())
  assert.equal(got.out.trim(), 'MOVED', `the planted .envrc stayed on the host while the run lasted: ${JSON.stringify(got)}`)
  assert.ok(!fs.existsSync(path.join(ws, '.envrc')), 'the planted .envrc is left after the run')
})

// Found by an attacker's review (rev43) of rev42's fix: the look for a visible holder stopped after
// 65,536 descriptors of all the processes it sees, and took the lock for an outside plan's then.
// The command's own processes hold that many (RLIMIT_NOFILE is ~20,000 a process here): four
// started before the ghost's locker, 18,000 copies of /dev/null each, and the .envrc it planted
// stayed on the host for the whole run again.
const HOG = `use POSIX (); open(my $n, '<', '/dev/null') or die "open: $!"; my @k;
for (1 .. 18000) { my $d = POSIX::dup(fileno($n)); die "dup: $!" unless defined $d; push @k, $d }
open(my $r, '>', $ARGV[0]) or die "ready: $!"; close $r; sleep 120`

test('descriptors the command holds before its forged lock do not hide it', { skip: NEEDS, timeout: 180000 }, (t) => {
  const { root, ws } = tempTree(t)
  fs.writeFileSync(path.join(root, 'ghost.pl'), GHOST)
  fs.writeFileSync(path.join(root, 'hog.pl'), HOG)
  const hogs = [1, 2, 3, 4].map((i) => `perl ${root}/hog.pl ${root}/ready${i} & p="$p $!";`).join(' ')
  const ready = `i=0; while [ "$(ls ${root} | grep -c '^ready')" -lt 4 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done`
  const script = `${hogs} ${ready}; perl ${root}/ghost.pl . sh -c '${WATCH}'; kill $p; wait`
  const probe = `const s = require(${JSON.stringify(INDEX)})
s.spawnSandboxed(['sh', '-c', ${JSON.stringify(script)}], { cwd: ${JSON.stringify(ws)}, timeout: 120000, sandbox: { mode: 'workspace-write', writableRoots: [${JSON.stringify(root)}] } })
  .then((r) => console.log(JSON.stringify({ ran: r.exitCode, out: r.stdout.toString(), err: r.stderr.toString() })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`
  const r = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, '-e', probe], { encoding: 'utf8', timeout: 170000 })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  const got = JSON.parse(r.stdout.trim().split('\n').pop())
  assert.equal(got.out.trim(), 'MOVED', `the planted .envrc stayed on the host while the run lasted: ${JSON.stringify(got)}`)
  assert.ok(!fs.existsSync(path.join(ws, '.envrc')), 'the planted .envrc is left after the run')
})

test('without the forged lock the keeper moves the planted name at once (the check above can pass)', { skip: NEEDS }, (t) => {
  const { ws } = tempTree(t)
  const probe = `const s = require(${JSON.stringify(INDEX)})
s.spawnSandboxed(['sh', '-c', ${JSON.stringify(WATCH)}], { cwd: ${JSON.stringify(ws)}, timeout: 60000, sandbox: 'workspace-write' })
  .then((r) => console.log(JSON.stringify({ ran: r.exitCode, out: r.stdout.toString() })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`
  const r = spawnSync('unshare', ['--pid', '--fork', '--mount-proc', process.execPath, '-e', probe], { encoding: 'utf8', timeout: 120000 })
  const got = JSON.parse(r.stdout.trim().split('\n').pop())
  assert.equal(got.out.trim(), 'MOVED', JSON.stringify(got))
})
