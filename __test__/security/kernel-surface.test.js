'use strict'
// Issue 27: nothing inside the sandbox is more capable than the command, and every bwrap plan has
// the filter's baseline. Each attack is compiled from `attacks/` at test time and run for real in
// every bwrap mode (the suite runs again on the bundled bwrap and as an unprivileged user).
//
// - borrow-init.c: the host escape found in the default mode. The command ptrace-attaches bwrap's
//   pid 1 (which runs without the command's filter), makes it call socket(AF_UNIX), copies the
//   descriptor out with pidfd_getfd and connects it to a host socket. Also each primitive alone
//   (/proc/1/mem, process_vm_readv, /proc/1/fd, pidfd_getfd), and tracing its own child (debuggers
//   keep working).
// - keyring.c: the caller's session keyring, read and updated from inside.
// - surface.c: one call per baseline rule, with arguments that give another errno without it.
// - host-ipc.c: a host process's SysV shared memory, message queue and semaphores and its POSIX
//   message queue, reached by key, name and id; and a segment left behind to outlive the run.
// - unix-dgram.c: a host Unix datagram socket reached through socketpair(AF_UNIX, SOCK_DGRAM) with
//   Unix sockets blocked.
// - families.c: socket families outside the Internet ones, netlink and Unix (AF_VSOCK reaches a VM
//   host's hypervisor whatever the network namespace).
// - protocols.c: protocols of the allowed families beyond what programs ask for (a protocol not yet
//   registered makes a host that autoloads modules load its module for good: SCTP, DCCP...).
// - host-futex.c: a host process's waiters on a shared futex in a file the command can only read,
//   requeued onto a word of the command's, where nobody wakes them.
// - hugetlb.c: the host's huge page pool (MAP_HUGETLB, MFD_HUGETLB, SHM_HUGETLB), one budget for
//   the whole machine that no per-run bound, memory cgroup included, counts.
// - multicast.c: multicast group joins (IPv4 and IPv6, any-source and source-specific), whose lists
//   the kernel walks under the machine's one networking lock (RTNL) when a socket closes.
// - page-cache.c: the host's page cache of a file the command can only read, dropped from inside
//   (posix_fadvise DONTNEED, madvise and process_madvise MADV_PAGEOUT).
// - rw-hint.c: a host file's write-lifetime hint (fcntl F_SET_RW_HINT), set on its inode through a
//   descriptor opened for reading, past the read-only mount, and kept after the run.
// - pipe-size.c: a host FIFO's buffer size (fcntl F_SETPIPE_SZ), shrunk through a descriptor opened
//   for reading, and kept after the run while the host holds the FIFO.

const { describe, test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const crypto = require('node:crypto')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const { execFileSync, spawn, spawnSync } = require('node:child_process')
const { run, show, tempTree, token, which, BASE, START_BOUND } = require('./helpers')
const { withHost } = require('../fixtures/host-attack')
const machineSetting = require('../fixtures/machine-setting')

const HAS_CC = which('cc') !== null
const ROOT = path.resolve(__dirname, '../..')

const MODES = {
  'read-only': 'read-only',
  'read-only with a NetworkPolicy': { mode: 'read-only', network: { allowedDomains: [] } },
  'read-only with network: true': { mode: 'read-only', network: true },
  'read-only with allowUnixSockets': { mode: 'read-only', allowUnixSockets: true },
  'workspace-write without helper mounts': { mode: 'workspace-write', protectGit: false, protectedNames: [], toolCaches: 'none' },
  'workspace-write (defaults)': 'workspace-write',
  'workspace-write with a private /tmp and network: true': { mode: 'workspace-write', tmp: 'private', network: true },
}

let bin // directory of the compiled attacks, readable inside every sandbox
before(() => {
  if (!HAS_CC) return
  bin = fs.mkdtempSync(path.join(BASE, 'sandspawn-attacks-'))
  fs.chmodSync(bin, 0o755)
  for (const name of ['borrow-init', 'keyring', 'surface', 'host-ipc', 'unix-dgram', 'families', 'protocols', 'host-futex', 'multicast', 'hugetlb', 'page-cache', 'rw-hint', 'pipe-size']) {
    execFileSync('cc', ['-O1', '-o', path.join(bin, name), path.join(__dirname, 'attacks', `${name}.c`), '-lrt', '-lpthread'], { stdio: 'pipe' })
  }
})
after(() => bin && fs.rmSync(bin, { recursive: true, force: true }))

/** The "<name> <result>" lines of an attack program. */
function results(stdout) {
  return Object.fromEntries(stdout.split('\n').filter(Boolean).map((l) => l.split(' ')).map(([k, ...v]) => [k, v.join(' ')]))
}

const skip = !HAS_CC && 'no C compiler to build the attacks'

describe('nothing inside is more capable than the command (issue 27)', { concurrency: 2 }, () => {
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: bwrap's pid 1 cannot be traced, read or borrowed from; the command still traces its own child`, { skip }, async (t) => {
      const tree = tempTree(t)
      const sock = path.join(tree.out, 'host.sock')
      const received = []
      const server = net.createServer((c) => c.on('data', (d) => received.push(String(d))))
      await new Promise((resolve) => server.listen(sock, resolve))
      t.after(() => server.close())
      const r = await run([path.join(bin, 'borrow-init'), sock], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      const got = results(r.stdout)
      assert.equal(got['own-child-attach'], 'ok', `debuggers of the own tree must keep working\n${show(r)}`)
      assert.equal(got['ptrace-attach'], 'EPERM', show(r))
      // The sandbox's proc is read-only (host-oom.test.js): a write open is refused by the mount;
      // a read open shows the kernel's check across the user namespaces.
      assert.match(got['proc-mem-open'], /^(EACCES|EPERM|EROFS)$/, show(r))
      assert.match(got['proc-mem-read-open'], /^(EACCES|EPERM)$/, show(r))
      assert.match(got['proc-fd-readlink'], /^(EACCES|EPERM)$/, show(r))
      assert.equal(got['process-vm-readv'], 'EPERM', show(r))
      assert.equal(got['pidfd-getfd'], 'EPERM', show(r))
      assert.ok(!r.stdout.includes('ESCAPED'), show(r))
      await new Promise((resolve) => setTimeout(resolve, 50))
      assert.deepEqual(received, [], 'the host socket was reached')
    })
  }
})

describe('the caller\'s keyrings stay out of reach (issue 27)', { concurrency: 2 }, () => {
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: the session keyring's key cannot be found, read, updated, nor a key added`, { skip }, async (t) => {
      const tree = tempTree(t)
      const key = token('key')
      const secret = token('secret')
      // A host process with a session keyring of its own holding the key, which starts the sandbox.
      const inner = `require(${JSON.stringify(ROOT)}).spawnSandboxed([${JSON.stringify(path.join(bin, 'keyring'))}, 'probe', ${JSON.stringify(key)}], { cwd: ${JSON.stringify(tree.ws)}, timeout: 15000, sandbox: ${JSON.stringify(sandbox)} })
        .then((r) => { process.stdout.write(r.stdout + r.stderr); process.exitCode = r.exitCode }, (e) => { console.log('rejected', e.code, e.message); process.exitCode = 3 })`
      const out = execFileSync(path.join(bin, 'keyring'), ['session', key, secret, '--', process.execPath, '-e', inner], { encoding: 'utf8', timeout: 30000 })
      const got = results(out)
      assert.equal(got['session-id'], 'EPERM', out)
      assert.equal(got['request-key'], 'EPERM', out)
      assert.equal(got.search, 'EPERM', out)
      assert.equal(got['add-key'], 'EPERM', out)
      assert.equal(got.read, undefined, out)
      assert.equal(got['host-after'], secret, `the host's key changed\n${out}`)
    })
  }

  test('the host half of the round trip works (the probe finds the key without a sandbox)', { skip }, () => {
    const key = token('key')
    const secret = token('secret')
    const out = execFileSync(path.join(bin, 'keyring'), ['session', key, secret, '--', path.join(bin, 'keyring'), 'probe', key], { encoding: 'utf8' })
    assert.match(out, new RegExp(`^read ${secret}$`, 'm'), out)
    assert.match(out, /^host-after evil$/m, 'unsandboxed, the update goes through')
  })
})

describe('every bwrap plan has the filter\'s baseline (issue 27)', { concurrency: 2 }, () => {
  const EXPECT = {
    keyctl: 'EPERM', add_key: 'EPERM', request_key: 'EPERM', bpf: 'EPERM', perf_event_open: 'EPERM', userfaultfd: 'EPERM',
    io_uring_setup: 'EPERM', name_to_handle_at: 'EPERM', open_by_handle_at: 'EPERM', 'unshare-user': 'EPERM', 'unshare-ns': 'EPERM',
    'clone-newuser': 'EPERM', clone3: 'ENOSYS', setns: 'EPERM', mount: 'EPERM', open_tree: 'EPERM', fsopen: 'EPERM',
    kexec_load: 'EPERM', init_module: 'EPERM', memfd_secret: 'EPERM', 'ioctl-tiocsti': 'EPERM', 'ioctl-tioclinux': 'EPERM', 'ioctl-tiocexcl': 'EPERM', 'fcntl-setlease': 'EPERM',
    // A read delegation (F_SETDELEG, Linux 6.19) is a lease by another door (found by an attacker's
    // review, kern43); before 6.19 the kernel answers EINVAL without the filter.
    'fcntl-setdeleg': 'EPERM',
    // Socket filters (found by an attacker's review: ~8,000 of them used up the machine's BPF JIT
    // budget, and every later run's seccomp filter failed).
    'so-attach-filter': 'EPERM', 'so-attach-reuseport-cbpf': 'EPERM', 'so-attach-bpf': 'EPERM', 'so-attach-reuseport-ebpf': 'EPERM',
    // Native AIO (found by an attacker's review, kern24: one io_setup(65536) took the machine's
    // whole fs.aio-max-nr, and every process of every user, root's too, got EAGAIN while it lived).
    io_setup: 'ENOSYS',
    // The bridge's and 802.1Q's socket ioctls, which load their modules when absent (found while
    // closing kern27's protocols).
    'ioctl-siocgifbr': 'EPERM', 'ioctl-siocgifvlan': 'EPERM',
    // btrfs's whole-filesystem syncs (found by an attacker's review, kern38: one BTRFS_IOC_SYNC wrote
    // back a host file's 64 MiB of dirty pages the syncfs rule keeps, on a btrfs it only read).
    'ioctl-btrfs-sync': 'EPERM', 'ioctl-btrfs-start-sync': 'EPERM',
    // btrfs's snapshots (found by an attacker's review, kern40: a snapshot of a subvolume the user
    // owns, made in the workspace, showed the files denyRead hid in it).
    'ioctl-btrfs-snap-create': 'EPERM', 'ioctl-btrfs-snap-create-v2': 'EPERM',
    // Quota syncs (found by an attacker's review, kern39: quotactl_fd(Q_SYNC) on a descriptor opened
    // for reading ran ext4's sync_fs and wrote back its block device, past the syncfs rule).
    'quotactl_fd-sync': 'EPERM', 'quotactl-sync': 'EPERM',
    // The filesystem's allocation map (kern39: ext4's reads every block group's bitmap, the free
    // space and metadata of the host's whole filesystem, from a descriptor opened for reading).
    'ioctl-getfsmap': 'EPERM',
    // The extent cache of an inode the user owns (left40: a read-only run cleared a host file's, and
    // the host's next walk of its 100,000 extents took 0.47 s instead of 0.08 to 0.15 s).
    'ioctl-ext4-clear-es-cache': 'EPERM',
    // Installing a seccomp filter (found by an attacker's review, kern30: the JIT's packs split the
    // host's direct map for good, and draw on the machine's bpf_jit_limit).
    'seccomp-filter': 'EPERM', 'prctl-seccomp-filter': 'EPERM',
    // A notification pipe (found by an attacker's review, kern45b: the watch queue's code had a
    // privilege escalation, CVE-2022-0995), answered as a kernel without CONFIG_WATCH_QUEUE does; a
    // kernel without it gives ENOPKG unfiltered too, so it is not among the calls the probe tells
    // apart below (seccomp::tests::notification_pipes_refused_in_every_filter judges the filter).
    'pipe2-notification-pipe': 'ENOPKG',
    // Not rules: ordinary calls keep their own results.
    'pipe2-cloexec-nonblock': 'ok', 'ioctl-tcgets': 'ENOTTY', 'ipv6-v6only': 'ok', 'seccomp-action-avail': 'ok', fork: 'ok',
  }
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: each baseline rule refuses, ordinary calls do not`, { skip }, async (t) => {
      const tree = tempTree(t)
      const r = await run([path.join(bin, 'surface')], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      assert.deepEqual(results(r.stdout), EXPECT, show(r))
    })
  }

  test('without a sandbox the same calls give other results (the probe can tell)', { skip }, () => {
    const got = results(execFileSync(path.join(bin, 'surface'), { encoding: 'utf8' }))
    // (bpf and userfaultfd may give EPERM to a user other than root without any filter.)
    for (const name of ['perf_event_open', 'io_uring_setup', 'name_to_handle_at', 'setns', 'memfd_secret', 'ioctl-tiocsti', 'ioctl-tiocexcl', 'clone3', 'fcntl-setlease', 'fcntl-setdeleg', 'so-attach-filter', 'so-attach-reuseport-cbpf', 'so-attach-bpf', 'so-attach-reuseport-ebpf', 'io_setup', 'ioctl-siocgifbr', 'ioctl-siocgifvlan', 'ioctl-btrfs-sync', 'ioctl-btrfs-start-sync', 'ioctl-btrfs-snap-create', 'ioctl-btrfs-snap-create-v2', 'quotactl_fd-sync', 'quotactl-sync', 'ioctl-getfsmap', 'seccomp-filter', 'prctl-seccomp-filter', 'ioctl-ext4-clear-es-cache']) {
      assert.notEqual(got[name], EXPECT[name], `${name}: ${got[name]}`)
    }
  })
})

/** Whether the policy lets the command use Unix sockets (the network on, or allowUnixSockets). */
const unixAllowed = (sandbox) => typeof sandbox === 'object' && (sandbox.network === true || sandbox.allowUnixSockets === true)

/** Runs `attempt(probe argv)` beside a host process holding SysV and POSIX IPC objects with
 * `secret` (see attacks/host-ipc.c): `[its value, what the host saw after]`. */
function withHostIpc(secret, attempt) {
  const key = String(0x5a000000 + crypto.randomInt(0x100000) * 4)
  const mq = `/${token('sandspawn-mq')}`
  const program = path.join(bin, 'host-ipc')
  return withHost(program, ['host', key, mq, secret], (ids) => attempt([program, 'probe', key, mq, ...ids]))
}

// Found by an attacker's review: every bwrap plan shared the host's IPC namespace. The command
// read, overwrote and removed a host process's SysV segments, queues and semaphores and its POSIX
// message queues, and left segments behind that no limit of the run counted and that outlived it.
describe("the host's IPC objects stay out of reach", { concurrency: 2 }, () => {
  // In its own IPC namespace the command finds none of the host's (and its own work as usual).
  const EXPECT = {
    'shmget-key': 'ENOENT', 'shmat-id': 'EINVAL', 'shm-info': 'ok', 'shm-used-ids': '0', 'msgget-key': 'ENOENT', 'msgrcv-id': 'EINVAL',
    'semget-key': 'ENOENT', 'semctl-id': 'EINVAL', mq_open: 'ENOENT', 'shm-create': 'ok', 'mq-create': 'ok',
  }
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: a host process's SysV shm, message queue, semaphore and POSIX queue are not found; what the command makes ends with it`, { skip }, async (t) => {
      const tree = tempTree(t)
      const secret = token('secret')
      const [r, after] = await withHostIpc(secret, (probe) => run(probe, { cwd: tree.ws, sandbox }))
      assert.equal(r.exitCode, 0, show(r))
      assert.ok(!r.stdout.includes(secret), show(r))
      assert.deepEqual(results(r.stdout), EXPECT, show(r))
      assert.deepEqual(after, { got: [], 'host-shm': secret, 'host-msgs': '1', 'host-sem': '7', 'host-mq': '1', 'host-left-shm': 'ENOENT', 'host-left-mq': 'ENOENT' })
    })
  }

  test('without a sandbox the probe reaches them (the test can tell)', { skip }, async () => {
    const secret = token('secret')
    const [out, after] = await withHostIpc(secret, ([program, ...args]) => execFileSync(program, args, { encoding: 'utf8' }))
    const got = results(out)
    for (const name of ['stole-shm', 'stole-msg', 'stole-mq']) assert.equal(got[name], secret, name)
    assert.equal(after['host-left-shm'], 'ok')
    assert.equal(after['host-left-mq'], 'ok')
  })
})

// Found by an attacker's review (kern30): a process-shared futex in a mapped file is keyed by the
// file's inode, and FUTEX_CMP_REQUEUE asks only read access of it: from a read-only run the command
// moved a host thread waiting there onto a word of its own, the host's wake found no one, and the
// thread slept for good (a process-shared mutex or condition variable in a file: LMDB's lock file,
// Berkeley DB's regions). The shared requeues are refused; the private ones stay.
describe("a host process's futex waiters stay its own", { concurrency: 2 }, () => {
  const EXPECT = {
    'futex-requeue-shared': 'EPERM', 'futex-cmp-requeue-shared': 'EPERM', futex_requeue: 'ENOSYS',
    // Found by an attacker's review (rfix30): a requeue-PI waiter of the command's on the host's
    // word made every wake there fail (EINVAL) and wake no one queued past it, the host's waiter
    // asleep for good (its wake of INT_MAX too). Refused; the host's wake finds its waiter.
    'futex-wait-requeue-pi-shared': 'EPERM', 'futex-wake-host-word': 'ok',
    // Not rules: the C libraries' private requeue, and a wake (spurious wakes are every waiter's to expect).
    'futex-cmp-requeue-private': 'ok', 'futex-wake-shared': 'ok',
  }
  /** Runs `attempt(probe argv)` beside a host thread waiting on a shared futex in `file`. */
  const withHostFutex = (file, attempt) => {
    const program = path.join(bin, 'host-futex')
    return withHost(program, ['host', file], () => attempt([program, 'probe', file]))
  }
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: the host's waiter cannot be requeued from a file the command can read; its wake still finds it`, { skip }, async (t) => {
      const tree = tempTree(t)
      const [r, after] = await withHostFutex(path.join(tree.ws, 'lock.mdb'), (probe) => run(probe, { cwd: tree.ws, sandbox }))
      assert.equal(r.exitCode, 0, show(r))
      assert.deepEqual(results(r.stdout), EXPECT, show(r))
      assert.deepEqual(after, { got: [], 'host-woken': '1', 'host-waiter': 'woke' })
    })
  }

  test('without a sandbox the probe takes the waiter, and the host never wakes it (the test can tell)', { skip }, async (t) => {
    const tree = tempTree(t)
    const [out, after] = await withHostFutex(path.join(tree.ws, 'lock.mdb'), ([program, ...args]) => execFileSync(program, args, { encoding: 'utf8' }))
    assert.equal(results(out)['futex-requeued'], '1', out)
    assert.deepEqual(after, { got: [], 'host-woken': '0', 'host-waiter': 'stuck' })
  })
})

// Found by an attacker's review: with Unix sockets blocked, socketpair(AF_UNIX, SOCK_DGRAM) was
// allowed, and its sockets sendto() or connect() any datagram socket of the host by path.
describe('host Unix datagram sockets stay out of reach with Unix sockets blocked', { concurrency: 2 }, () => {
  const BLOCKED = {
    'socket-dgram': 'EPERM', 'pair-dgram': 'EPERM', 'pair-dgram-flags': 'EPERM', 'pair-raw': 'EPERM',
    // Stream and seqpacket pairs reach nobody: they keep working, and cannot be aimed elsewhere.
    'pair-stream': 'ok', 'pair-stream-connect': 'EPROTOTYPE', 'pair-seqpacket': 'ok', 'pair-seqpacket-connect': 'EPROTOTYPE',
  }
  for (const [name, sandbox] of Object.entries(MODES)) {
    const allowed = unixAllowed(sandbox)
    test(`${name}: ${allowed ? 'Unix sockets allowed: the datagram reaches the listener (the test can tell)' : 'the host listener receives nothing; stream and seqpacket pairs work'}`, { skip }, async (t) => {
      const tree = tempTree(t)
      const sock = path.join(tree.out, 'host.sock')
      const program = path.join(bin, 'unix-dgram')
      const [r, after] = await withHost(program, ['host', sock], () => run([program, 'probe', sock], { cwd: tree.ws, sandbox }))
      assert.equal(r.exitCode, 0, show(r))
      if (allowed) {
        assert.equal(results(r.stdout)['pair-dgram-sendto'], 'sent', show(r))
        assert.ok(after.got.includes('pair-dgram-sendto'), JSON.stringify(after))
        return
      }
      assert.deepEqual(results(r.stdout), BLOCKED, show(r))
      assert.deepEqual(after, { got: [], 'host-received': '0' })
    })
  }
})

// Found by an attacker's review: AF_VSOCK passed the filter with the network off and with an
// allow-list; vsock is not network-namespaced, so on a VM host the command reached the hypervisor's
// services (and the host's other guests' listeners) past the proxy. Only the Internet families,
// netlink and (by policy) Unix sockets are created; nothing here connects anywhere but loopback.
describe('socket families outside the Internet ones, netlink and Unix are refused', { concurrency: 2 }, () => {
  const REFUSED = ['vsock', 'packet', 'alg', 'can', 'bluetooth', 'tipc', 'rds', 'key', 'xdp', 'appletalk', 'x25', 'llc', 'smc', 'kcm', 'qipcrtr', 'mctp']
  for (const [name, sandbox] of Object.entries(MODES)) {
    const allowed = unixAllowed(sandbox)
    test(`${name}: ${REFUSED.length} families refused; TCP and UDP over loopback, netlink and Unix ${allowed ? 'allowed' : 'refused'} as before`, { skip }, async (t) => {
      const tree = tempTree(t)
      const r = await run([path.join(bin, 'families')], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      const expect = { unix: allowed ? 'ok' : 'EPERM', inet: 'ok', inet6: 'ok', netlink: 'ok', 'tcp-loopback': 'ok', 'udp-loopback': 'ok' }
      for (const family of REFUSED) expect[family] = 'EPERM'
      assert.deepEqual(results(r.stdout), expect, show(r))
    })
  }

  test('without a sandbox AF_VSOCK sockets are created here (the test can tell), where the kernel has vsock', { skip }, (t) => {
    const got = results(execFileSync(path.join(bin, 'families'), ['vsock'], { encoding: 'utf8' }))
    if (got.vsock === 'EAFNOSUPPORT') return t.skip('no vsock in this kernel')
    assert.equal(got.vsock, 'ok')
  })
})

// Found by an attacker's review (kern27): socket() of an allowed family took any protocol, and on a
// host that autoloads kernel modules (every distribution kernel; not this one) a protocol not yet
// registered makes the kernel load its module, with no capability check, for the host's life:
// socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP) loads sctp, (AF_INET, SOCK_DCCP, IPPROTO_DCCP) dccp
// (CVE-2017-6074), IPPROTO_L2TP l2tp_ip, (AF_NETLINK, SOCK_RAW, NETLINK_CRYPTO) crypto_user,
// NETLINK_NETFILTER nfnetlink, and NETLINK_GENERIC's family lookup by name any module with a genl
// alias (tipc, wireguard, openvswitch...). Only the protocols programs ask for are created; the rest
// get EPROTONOSUPPORT, what a kernel without them answers. The ones built into this kernel (UDP-Lite,
// netlink's audit, netfilter, generic...) are created without a sandbox, so the test can tell.
const PROTOCOLS_REFUSED = ['sctp', 'sctp-high', 'l2tp', 'smc-inet', 'udplite', 'udplite6', 'netlink-sock-diag', 'netlink-xfrm', 'netlink-audit', 'netlink-netfilter', 'netlink-generic', 'netlink-rdma', 'netlink-crypto', 'netlink-audit-high']
// Found by an attacker's review (kern28): the type was not looked at. socket(AF_INET, SOCK_PACKET, 0)
// is a packet socket to the kernel (__sock_create remaps the family to PF_PACKET: packet_create ran,
// and answered EPERM only for want of CAP_NET_RAW; af_packet, where a module, was loaded first), and
// (AF_INET or AF_INET6, SOCK_DCCP, 0) asks for dccp's alias net-pf-2-proto-0-type-6. Only stream,
// datagram and raw Internet sockets are created; other types get ESOCKTNOSUPPORT. Without a sandbox
// root creates the packet socket here, so the test can tell.
// SCTP's seqpacket socket and DCCP's are refused by their type before their protocol is looked at.
const TYPES_REFUSED = ['packet-compat', 'packet-compat-flags', 'dccp-0', 'dccp6-0', 'seqpacket-0', 'sctp6', 'dccp']
const PROTOCOLS_ALLOWED = ['tcp-0', 'tcp', 'tcp6', 'tcp-high', 'udp', 'udp6', 'mptcp', 'netlink-route', 'netlink-route-dgram', 'netlink-uevent']
/** The protocols' results expected under the filter (ping sockets are the kernel's to refuse:
 * net.ipv4.ping_group_range, EACCES by default). */
function expectedProtocols(got) {
  const expect = { ping: /^(ok|EACCES)$/.test(got.ping) ? got.ping : 'ok or EACCES', ping6: /^(ok|EACCES)$/.test(got.ping6) ? got.ping6 : 'ok or EACCES' }
  for (const name of PROTOCOLS_REFUSED) expect[name] = 'EPROTONOSUPPORT'
  for (const name of TYPES_REFUSED) expect[name] = 'ESOCKTNOSUPPORT'
  for (const name of PROTOCOLS_ALLOWED) expect[name] = 'ok'
  return expect
}
describe('socket protocols beyond what programs ask for are refused (no module autoloading)', { concurrency: 2 }, () => {
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: ${PROTOCOLS_REFUSED.length} protocols refused with EPROTONOSUPPORT, ${TYPES_REFUSED.length} types with ESOCKTNOSUPPORT; TCP, UDP, MPTCP, ping, netlink route and uevent created`, { skip }, async (t) => {
      const tree = tempTree(t)
      const r = await run([path.join(bin, 'protocols')], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      const got = results(r.stdout)
      assert.deepEqual(got, expectedProtocols(got), show(r))
    })
  }

  test('without a sandbox the protocols built into this kernel are created (the test can tell)', { skip }, () => {
    const got = results(execFileSync(path.join(bin, 'protocols'), { encoding: 'utf8' }))
    const builtIn = ['udplite', 'netlink-audit', 'netlink-netfilter', 'netlink-generic', 'netlink-sock-diag', 'netlink-audit-high'].filter((n) => got[n] === 'ok')
    assert.ok(builtIn.length > 0, `none of the refused protocols is built in here: ${JSON.stringify(got)}`)
    if (process.getuid() === 0) assert.equal(got['packet-compat'], 'ok', 'root makes a packet socket through AF_INET without a sandbox')
  })
})

// Found by an attacker's review (kern32): a multicast join adds the group to the interface's list
// (the sandbox's own loopback with the network off), and closing a socket leaves its groups with
// the machine's one networking lock (RTNL) held, each leave walking that whole list twice
// (ip_mc_drop_socket: ip_mc_del_src, __ip_mc_dec_group). 20 groups a socket, unbounded sockets:
// 3,000 sockets' 60,000 groups (2.5 s to join) held RTNL 90 to 190 ms for each socket closed, a host
// process's RTNL call (its own join) waited 154 ms; 1,000 sockets took 35 to 40 s to close, and a
// killed process's descriptors close oldest first, the worst order, so the run's end waited too. The
// joins are refused in every filter (EPERM); sending to a group, and its options, stay allowed.
describe('multicast group joins are refused', { concurrency: 2 }, () => {
  const JOINS = ['ip-add-membership', 'ip-add-membership-on-inet6', 'ip-add-source-membership', 'mcast-join-group', 'mcast-join-source-group', 'ipv6-add-membership', 'mcast6-join-group', 'mcast6-join-source-group']
  const ALLOWED = ['ip-multicast-ttl', 'ip-multicast-loop', 'ipv6-multicast-hops', 'so-reuseaddr']
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: ${JOINS.length} ways to join a group get EPERM; the sending options do not`, { skip }, async (t) => {
      const tree = tempTree(t)
      const r = await run([path.join(bin, 'multicast')], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      const expect = Object.fromEntries([...JOINS.map((j) => [j, 'EPERM']), ...ALLOWED.map((a) => [a, 'ok'])])
      assert.deepEqual(results(r.stdout), expect, show(r))
    })
  }

  test('without a sandbox every join works here (the test can tell)', { skip }, () => {
    const got = results(execFileSync(path.join(bin, 'multicast'), { encoding: 'utf8' }))
    for (const j of JOINS) assert.equal(got[j], 'ok', `${j}: ${JSON.stringify(got)}`)
  })
})

// Found by an attacker's review (kern32): the host's huge page pool (vm.nr_hugepages: a database's
// or DPDK's, reserved at boot) is one budget for the whole machine, and MAP_HUGETLB, MFD_HUGETLB
// and SHM_HUGETLB (root's group is hugetlb_shm_group) take from it with no capability, no rlimit
// and, by default, no memory cgroup counting it: a default workspace-write run took the whole pool
// (2 pages here) and the host's own mmap(MAP_HUGETLB) got ENOMEM while it lived. Refused with ENOMEM,
// what a host without a pool answers (the JVM's large pages, DPDK's EAL fall back or say so).
describe("the host's huge page pool stays the host's", { concurrency: 2 }, () => {
  const EXPECT = { 'mmap-hugetlb': 'ENOMEM', 'memfd-hugetlb': 'ENOMEM', 'shmget-hugetlb': 'ENOMEM', mmap: 'ok', memfd: 'ok', shmget: 'ok' }
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: huge pages are refused with ENOMEM; ordinary mappings, memfds and segments are not`, { skip }, async (t) => {
      const tree = tempTree(t)
      const r = await run([path.join(bin, 'hugetlb')], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      assert.deepEqual(results(r.stdout), EXPECT, show(r))
    })
  }

  const POOL = '/proc/sys/vm/nr_hugepages'
  const poolSkip = skip || (process.getuid() !== 0 && 'root only (sets a pool of two huge pages for the test)')
  // The pool is the machine's: set under a lock every suite on the machine takes, and set back by
  // the lock's holder (fixtures/machine-setting.js), so that two suites at once do not take each
  // other's pool away. The timeout covers waiting for another suite's hold too.
  test('with a pool of two huge pages, a default run takes none and the host still maps one (root only)', { skip: poolSkip, timeout: 180000 }, async (t) => {
    const tree = tempTree(t)
    const before = await machineSetting.hold(t, POOL)
    if (before.trim() !== '0') return t.skip('the host has a huge page pool of its own: not touched')
    fs.writeFileSync(POOL, '2')
    if (fs.readFileSync(POOL, 'utf8').trim() !== '2') return t.skip('the kernel gave no pool')
    const hostProbe = () => results(execFileSync(path.join(bin, 'hugetlb'), { encoding: 'utf8' }))['mmap-hugetlb']
    assert.equal(hostProbe(), 'ok', 'the host maps a huge page from the pool (the test can tell)')
    let host = 'not reached'
    const r = await run([path.join(bin, 'hugetlb'), 'hold', '2'], {
      cwd: tree.ws, sandbox: 'workspace-write', timeout: START_BOUND, // the hold lasts until it fires
      onOutput: ({ data }) => { if (/^held$/m.test(data.toString()) && host === 'not reached') host = hostProbe() },
    })
    assert.match(r.stdout, /^held$/m, show(r))
    assert.match(r.stdout, /^hold ENOMEM$/m, show(r))
    assert.equal(host, 'ok', `the host's own huge page while the run held what it could\n${show(r)}`)
  })
})

// Found by an attacker's review (rfix32) of kern32's huge pages: the flags are refused, but a file
// of a hugetlbfs mounted outside /dev (DPDK's /mnt/huge, Kubernetes' /hugepages-2Mi, an admin's),
// which bwrap's read-only / carries in, is mapped with no flag at all: a MAP_PRIVATE, PROT_WRITE
// mapping of a file the command can only read reserves the whole range from the pool (its writes
// are copies from it). With a pool of two pages a read-only run's Python mmap(ACCESS_COPY) of such
// a file took both, and the host's own mmap(MAP_HUGETLB) got ENOMEM while it lived, nothing said.
// Each hugetlbfs of the sandbox's mount table is hidden, as tracefs and debugfs are. Root only: the
// hugetlbfs is mounted at /mnt in a mount namespace of the test's own (unshare -m).
describe('a hugetlbfs mounted on the host is hidden inside', () => {
  const unshareSkip = (process.getuid() !== 0 && 'root only (mounts a hugetlbfs in a mount namespace of its own)') || (which('unshare') === null && 'no unshare')
  test('read-only and workspace-write: its files are not there', { skip: unshareSkip, timeout: 120000 }, async (t) => {
    const tree = tempTree(t)
    const child = `
      const ss = require(${JSON.stringify(ROOT)}); const fs = require('node:fs'); const { execFileSync } = require('node:child_process')
      ;(async () => {
        execFileSync('mount', ['-t', 'hugetlbfs', '-o', 'mode=0755', 'none', '/mnt'])
        fs.writeFileSync('/mnt/rtemap_0', '')
        const out = {}
        for (const mode of ['read-only', 'workspace-write']) {
          const r = await ss.spawnSandboxed(['sh', '-c', 'test -e /mnt/rtemap_0 && echo shown || echo hidden'], { cwd: ${JSON.stringify(tree.ws)}, timeout: 30000, sandbox: { mode } })
          out[mode] = r.stdout.toString().trim() || r.stderr.toString()
        }
        out.host = fs.existsSync('/mnt/rtemap_0') ? 'shown' : 'hidden'
        console.log(JSON.stringify(out))
      })()`
    const got = JSON.parse(execFileSync('unshare', ['-m', '--propagation', 'private', process.execPath, '-e', child], { encoding: 'utf8', env: process.env }).trim().split('\n').pop())
    assert.deepEqual(got, { 'read-only': 'hidden', 'workspace-write': 'hidden', host: 'shown' })
  })
})

// Found by an attacker's review (kern33): the page cache is the machine's, one copy of each file's
// pages for every process, and posix_fadvise(POSIX_FADV_DONTNEED) drops a file's clean, unmapped
// pages given a descriptor opened for reading (no write access, through a read-only mount), as
// MADV_PAGEOUT (madvise, or process_madvise on the command's own pidfd) drops those the command
// maps, of a file it owns or could write by its mode (every file of the user's, every root-owned
// file when the host runs as root). A default workspace-write run dropped a 256 MiB host file it
// could only read from the cache (all of it to none), and the host's next read of it took 896 ms
// instead of 141 ms: a drop_caches aimed at the host's files, from a run that may write nothing
// there. Answered 0, done, as the advice they are (a kernel may ignore advice), and dropped.
describe("the host's page cache of files the command can only read stays cached", { concurrency: 2 }, () => {
  const WAYS = ['fadvise-dontneed', 'madvise-pageout', 'process-madvise-pageout']
  const SIZE = 4 << 20
  function cachedFile(tree) {
    const file = path.join(tree.out, 'host-file.bin')
    fs.writeFileSync(file, crypto.randomBytes(SIZE))
    const fd = fs.openSync(file, 'r+')
    fs.fsyncSync(fd) // written back: clean pages, which the drops take
    fs.closeSync(fd)
    return file
  }
  const resident = (file) => {
    fs.readFileSync(file)
    return Number(execFileSync(path.join(bin, 'page-cache'), ['resident', file], { encoding: 'utf8' }).trim())
  }
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: ${WAYS.length} ways to drop a host file's cached pages answer 0 and drop none`, { skip }, async (t) => {
      const tree = tempTree(t)
      const file = cachedFile(tree)
      for (const way of WAYS) {
        const before = resident(file)
        if (before !== SIZE / 4096) return t.skip(`the host's page cache did not keep the file (${before} pages)`)
        const r = await run([path.join(bin, 'page-cache'), 'drop', way, file], { cwd: tree.ws, sandbox })
        assert.equal(r.exitCode, 0, show(r))
        assert.equal(r.stdout.trim(), `${way} ok`, show(r))
        const after = Number(execFileSync(path.join(bin, 'page-cache'), ['resident', file], { encoding: 'utf8' }).trim())
        assert.equal(after, SIZE / 4096, `${way}: the host file's pages still cached after the run\n${show(r)}`)
      }
    })
  }

  test('without a sandbox each way drops them (the test can tell)', { skip }, (t) => {
    const tree = tempTree(t)
    const file = cachedFile(tree)
    for (const way of WAYS) {
      assert.equal(resident(file), SIZE / 4096, `${way}: cached before`)
      assert.equal(execFileSync(path.join(bin, 'page-cache'), ['drop', way, file], { encoding: 'utf8' }).trim(), `${way} ok`)
      // Advice, best effort: a page still in another CPU's batch of pages on their way to the LRU
      // lists (this host read it just before) cannot be taken off them, and stays (2 of 1,024 in
      // one CI run). The sandboxed runs above must leave every page; here most must go.
      const left = Number(execFileSync(path.join(bin, 'page-cache'), ['resident', file], { encoding: 'utf8' }).trim())
      assert.ok(left < SIZE / 4096 / 8, `${way}: dropped (${left} of ${SIZE / 4096} pages left)`)
    }
  })
})

// Found by an attacker's review (kern42): fcntl(F_SET_RW_HINT) writes a write-lifetime hint on the
// inode of any file the caller owns (as root every root-owned file of the host), through a
// descriptor opened for reading and a read-only mount: the kernel asks neither write access nor the
// mount's (fcntl_rw_hint). A default read-only run set the hint of a host file outside its
// workspace, and the host read it back after the run: every later write of the host's to that
// file carries it to the block device (ext4's and XFS's bios), which a device with data placement
// (NVMe FDP, SCSI lifetime hints) places by. Refused in every filter (EPERM).
describe("a host file's write hint stays the host's", { concurrency: 2 }, () => {
  const hint = (file) => execFileSync(path.join(bin, 'rw-hint'), ['get', file], { encoding: 'utf8' }).trim()
  function hostFile(tree) {
    const file = path.join(tree.out, 'host-file.txt')
    fs.writeFileSync(file, 'the host\'s\n')
    return file
  }
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: F_SET_RW_HINT on a host file is refused and its hint stays`, { skip }, async (t) => {
      const tree = tempTree(t)
      const file = hostFile(tree)
      assert.equal(hint(file), '0')
      const r = await run([path.join(bin, 'rw-hint'), 'set', file, '5'], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(r.stdout.trim(), 'set EPERM', show(r))
      assert.equal(hint(file), '0', `the host file's hint after the run\n${show(r)}`)
    })
  }

  test('without a sandbox the hint is set through a descriptor opened for reading (the test can tell)', { skip }, (t) => {
    const tree = tempTree(t)
    const file = hostFile(tree)
    fs.chmodSync(file, 0o444)
    assert.equal(execFileSync(path.join(bin, 'rw-hint'), ['set', file, '5'], { encoding: 'utf8' }).trim(), 'set ok')
    assert.equal(hint(file), '5')
  })
})

// Found by an attacker's review (kern43): fcntl(F_SETPIPE_SZ) sets the buffer size of the pipe a
// descriptor is on, and the kernel asks nothing but a descriptor: a FIFO outside the writable roots
// opens for reading (reading is what a read-only view allows), and the size is the pipe's, shared by
// every opener. A default read-only run shrank a host FIFO's buffer from 64 KiB to one page; after
// the run the host's non-blocking writer fitted 4,096 bytes where it had fitted 65,536, and so it
// stays while the host holds the FIFO. Refused in every filter (EPERM, what the kernel answers an
// unprivileged caller past fs.pipe-max-size).
describe("a host FIFO's buffer size stays the host's", { concurrency: 2 }, () => {
  const size = (fifo) => execFileSync(path.join(bin, 'pipe-size'), ['get', fifo], { encoding: 'utf8' }).trim()
  /** A host FIFO outside the workspace, held open by the host (its size lives while one holds it). */
  function hostFifo(t, tree) {
    const fifo = path.join(tree.out, 'host.fifo')
    execFileSync('mkfifo', ['-m', '644', fifo])
    const fd = fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK)
    t.after(() => fs.closeSync(fd))
    return fifo
  }
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: F_SETPIPE_SZ on a host FIFO is refused and its size stays`, { skip }, async (t) => {
      const tree = tempTree(t)
      const fifo = hostFifo(t, tree)
      // 16 pages, or 2 when the user's pipe pages are past fs.pipe-user-pages-soft: above one either way.
      const before = size(fifo)
      assert.ok(Number(before) > 4096, before)
      const r = await run([path.join(bin, 'pipe-size'), 'set', fifo, '4096'], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(r.stdout.trim(), 'set EPERM', show(r))
      assert.equal(size(fifo), before, `the host FIFO's size after the run\n${show(r)}`)
    })
  }

  test('without a sandbox the size is set through a descriptor opened for reading (the test can tell)', { skip }, (t) => {
    const fifo = hostFifo(t, tempTree(t))
    assert.equal(execFileSync(path.join(bin, 'pipe-size'), ['set', fifo, '4096'], { encoding: 'utf8' }).trim(), 'set ok')
    assert.equal(size(fifo), '4096')
  })
})

// Found by an attacker's review (kern33): where the host's kernel.core_pattern is a pipe (systemd-
// coredump's and apport's, the default of most distributions), every crash of a process is handed to
// that program, which the kernel starts as root in the host's namespaces and streams the whole
// core into, whatever RLIMIT_CORE says unless it is exactly 1 (the kernel's sign for a core
// helper's own crash; 0 stops a core file, never the pipe). A default workspace-write run's 20
// crashing shells and one Python of 256 MiB started 21 host root processes and streamed 273 MB
// into them, bounded by no per-run limit; a crash loop is as many as the command likes. Every run's
// RLIMIT_CORE is 1 (no core file either: below one page), and the command may not lower it
// (setrlimit and prlimit64 of RLIMIT_CORE are answered 0 without the call, or EPERM when the old
// value is asked for too).
describe("a crash inside starts no host core helper", { concurrency: 2 }, () => {
  const PROBE = [
    'import resource, ctypes, os',
    'print("core", *resource.getrlimit(resource.RLIMIT_CORE))',
    'resource.setrlimit(resource.RLIMIT_CORE, (0, 0))',
    'print("after setrlimit", *resource.getrlimit(resource.RLIMIT_CORE))',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'new = (ctypes.c_ulong * 2)(0, 0); old = (ctypes.c_ulong * 2)(7, 7)',
    'r = libc.prlimit(0, resource.RLIMIT_CORE, new, None); print("prlimit", r, ctypes.get_errno() if r else "")',
    'r = libc.prlimit(0, resource.RLIMIT_CORE, new, old); print("prlimit with old", r, os.strerror(ctypes.get_errno()) if r else "")',
    'print("after prlimit", *resource.getrlimit(resource.RLIMIT_CORE))',
    'r = libc.prlimit(0, resource.RLIMIT_NOFILE, None, old); print("nofile read", r)',
  ].join('\n')
  const hardCore = () => execFileSync('bash', ['-c', 'ulimit -Hc'], { encoding: 'utf8' }).trim()
  const pySkip = which('python3') === null && 'no python3'
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: RLIMIT_CORE is 1 and stays 1`, { skip: pySkip || (hardCore() === '0' && 'the host\'s hard RLIMIT_CORE is 0') }, async (t) => {
      const tree = tempTree(t)
      const r = await run(['python3', '-c', PROBE], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(r.stdout, 'core 1 1\nafter setrlimit 1 1\nprlimit 0 \nprlimit with old -1 Operation not permitted\nafter prlimit 1 1\nnofile read 0\n', show(r))
    })
  }

  // Found by an attacker's review (rfix33): prlimit64 with the command's own pid (not 0), or a
  // child's, passed the filter's pid-0 rule as "another process" (allowed under bwrap, the
  // sandbox's own pid namespace): lowered to 0 that way, the next crash was piped to the host's
  // core helper (8.7 MB of a Python's core streamed into a root process).
  const BY_PID = [
    'import resource, ctypes, os',
    'libc = ctypes.CDLL(None, use_errno=True)',
    'new = (ctypes.c_ulong * 2)(0, 0)',
    'r = libc.prlimit(os.getpid(), resource.RLIMIT_CORE, new, None); print("own pid", r, ctypes.get_errno() if r else "", *resource.getrlimit(resource.RLIMIT_CORE), flush=True)',
    'rd, wr = os.pipe(); pid = os.fork()',
    'if pid == 0:',
    '    os.read(rd, 1); print("child", *resource.getrlimit(resource.RLIMIT_CORE), flush=True); os._exit(0)',
    'r = libc.prlimit(pid, resource.RLIMIT_CORE, new, None); print("child pid", r, ctypes.get_errno() if r else "", flush=True)',
    'os.write(wr, b"x"); os.waitpid(pid, 0)',
  ].join('\n')
  for (const [name, sandbox] of Object.entries(MODES)) {
    test(`${name}: RLIMIT_CORE stays 1 through prlimit64 of the command's own pid or a child's`, { skip: pySkip || (hardCore() === '0' && 'the host\'s hard RLIMIT_CORE is 0') }, async (t) => {
      const tree = tempTree(t)
      const r = await run(['python3', '-c', BY_PID], { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(r.stdout, 'own pid -1 1 1 1\nchild pid -1 1\nchild 1 1\n', show(r))
    })
  }

  // A caller whose hard RLIMIT_CORE is 0 (a hardened host's `* hard core 0`) cannot give the
  // command 1: the run keeps 0, under which a piped core_pattern still runs, and says so.
  test('a caller with a hard RLIMIT_CORE of 0: the run says the core helper is not kept out', { skip: (which('prlimit') === null && 'no prlimit') }, (t) => {
    const tree = tempTree(t)
    const js = `require(${JSON.stringify(ROOT)}).spawnSandboxed(['true'], { cwd: ${JSON.stringify(tree.ws)}, sandbox: 'workspace-write' }).then((r) => console.log(JSON.stringify(r.sandboxDetails.notEnforced)))`
    const out = execFileSync('prlimit', ['--core=0:0', process.execPath, '-e', js], { encoding: 'utf8', timeout: 60000 })
    const notEnforced = JSON.parse(out)
    assert.ok(notEnforced.some((line) => /RLIMIT_CORE/.test(line) && /core_pattern/.test(line)), out)
    const normal = execFileSync(process.execPath, ['-e', js], { encoding: 'utf8', timeout: 60000 })
    assert.ok(!JSON.parse(normal).some((line) => /RLIMIT_CORE/.test(line)), normal)
  })

  // The same as a crash: RLIMIT_CORE lowered to 0 through prlimit64 of its own pid (rfix33).
  const BY_PID_ABORT = 'import ctypes, os\nnew = (ctypes.c_ulong * 2)(0, 0)\nctypes.CDLL(None).prlimit(os.getpid(), 4, new, None)\nos.abort()'
  const PATTERN = '/proc/sys/kernel/core_pattern'
  // core_pattern is the machine's: read and set under a lock every suite on the machine takes, and
  // set back by the lock's holder (fixtures/machine-setting.js). The timeouts cover waiting for
  // another suite's hold too.
  const patternSkip = (process.getuid() !== 0 && 'root only (sets kernel.core_pattern to a pipe for the test, and back)') ||
    (hardCore() === '0' && 'the host\'s hard RLIMIT_CORE is 0')
  test('with a piped core_pattern, crashes in a default run (RLIMIT_CORE lowered to 0 first) start no host helper (root only)', { skip: patternSkip, timeout: 180000 }, async (t) => {
    const tree = tempTree(t)
    const log = path.join(tree.out, 'helper.log')
    const helper = path.join(tree.out, 'core-helper.sh')
    fs.writeFileSync(helper, `#!/bin/sh\nn=$(/usr/bin/wc -c)\necho "pid=$1 limit=$2 bytes=$n" >> ${log}\n`, { mode: 0o755 })
    const before = await machineSetting.hold(t, PATTERN)
    if (before.startsWith('|')) return t.skip('the host has a core helper of its own: not touched')
    fs.writeFileSync(PATTERN, `|${helper} %P %c`)
    // The host's own crash reaches the helper (the test can tell).
    spawnSync('sh', ['-c', 'kill -SEGV $$'])
    const seen = () => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '')
    for (let i = 0; i < 50 && seen() === ''; i++) await new Promise((res) => setTimeout(res, 100))
    assert.match(seen(), /^pid=\d+ limit=\d+ bytes=\d+$/m, 'the host\'s own crash reached the helper')
    fs.writeFileSync(log, '')
    const r = await run(['bash', '-c', 'ulimit -c 0; for i in 1 2 3 4 5; do sh -c "kill -SEGV \\$\\$"; done; python3 -c "import os; os.abort()"; python3 -c "$0"; true', BY_PID_ABORT], { cwd: tree.ws, sandbox: 'workspace-write', timeout: 30000 })
    assert.equal(r.exitCode, 0, show(r))
    await new Promise((res) => setTimeout(res, 1000))
    assert.equal(seen(), '', `host core helper runs for the run's crashes\n${show(r)}`)
  })

  // Found by an attacker's review (rfix33): a core_pattern of `@/path` (`@@` too; kernel 6.16+, what
  // systemd's socket-activated coredump takes) hands each crash to the host process listening on
  // that AF_UNIX socket, and the kernel streams the whole core into it whatever RLIMIT_CORE says
  // (1 stops a pipe's helper only): a default run's Python at RLIMIT_CORE 1 streamed 8.7 MB into
  // the host's listener, nothing said. No filter can keep a crash from it, so the run says so.
  const socketSkip = process.getuid() !== 0 && 'root only (sets kernel.core_pattern to a socket for the test, and back)'
  test('with a socket core_pattern (@), a run says a crash\'s core reaches it (root only)', { skip: socketSkip, timeout: 180000 }, async (t) => {
    const tree = tempTree(t)
    const before = await machineSetting.hold(t, PATTERN)
    if (/^[|@]/.test(before)) return t.skip('the host has a core helper of its own: not touched')
    try {
      fs.writeFileSync(PATTERN, `@${path.join(tree.out, 'core.sock')}`)
    } catch (err) {
      // Outside the initial mount namespace (.ci/run's pass without a system bwrap runs in one of
      // its own) the kernel refuses a socket core_pattern: nothing was changed, nothing to show.
      if (err.code === 'EINVAL') return t.skip('the kernel refuses a socket core_pattern from this mount namespace (EINVAL)')
      throw err
    }
    let r
    try {
      r = await run(['true'], { cwd: tree.ws, sandbox: 'workspace-write' })
    } finally {
      fs.writeFileSync(PATTERN, before)
    }
    assert.equal(r.exitCode, 0, show(r))
    assert.ok(r.sandboxDetails.notEnforced.some((line) => /core_pattern/.test(line) && /socket/.test(line)), show(r))
    const normal = await run(['true'], { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.ok(!normal.sandboxDetails.notEnforced.some((line) => /core_pattern/.test(line)), show(normal))
  })

})

// Its own suite: suites run one after another, and this one sets the host's core_pattern for a
// moment, as the socket test above does (a test beside it could change it back meanwhile).
describe("a crash inside streams no memory into a socket core_pattern", () => {
  const PATTERN = '/proc/sys/kernel/core_pattern'
  const coreSocketSkip = (which('python3') === null && 'no python3') || (process.getuid() !== 0 && 'root only (sets kernel.core_pattern to a socket for the test, and back)')
  // Found by an attacker's review (kern35): what a socket core_pattern takes from a run's crash is
  // the crash's whole memory, however large (rfix33: 8.7 MB of one Python). The helper gives the
  // command a coredump_filter of 0 (no mapping dumped but the vDSO), which every process it starts
  // inherits across fork and exec and none can write back (the sandbox's proc is read-only): a core
  // still reaches the listener, a few KiB of registers and notes instead of the run's memory.
  test('with a socket core_pattern (@), a crash inside streams its notes, not its memory (root only)', { skip: coreSocketSkip, timeout: 180000 }, async (t) => {
    const tree = tempTree(t)
    const before = await machineSetting.hold(t, PATTERN) // under the lock as above
    if (/^[|@]/.test(before)) return t.skip('the host has a core helper of its own: not touched')
    const sock = path.join(tree.out, 'core.sock')
    const cores = []
    const server = net.createServer((c) => {
      let bytes = 0
      c.on('data', (d) => { bytes += d.length })
      c.on('close', () => cores.push(bytes))
    })
    await new Promise((res) => server.listen(sock, res))
    t.after(() => server.close())
    const crash = 'import os\nheld = bytearray(os.urandom(1 << 20)) * 32\nos.abort()'
    const waitFor = async (n) => { for (let i = 0; i < 100 && cores.length < n; i++) await new Promise((res) => setTimeout(res, 100)) }
    let r, landlock
    try {
      try {
        fs.writeFileSync(PATTERN, `@${sock}`)
      } catch (err) {
        if (err.code === 'EINVAL') return t.skip('the kernel refuses a socket core_pattern from this mount namespace (EINVAL)')
        throw err
      }
      // The host's own crash streams its 32 MiB (the test can tell). Not spawnSync: the kernel
      // writes the core while the crashing process waits, and this process's listener must read.
      await new Promise((res) => spawn('python3', ['-c', crash], { stdio: 'ignore' }).on('close', res))
      await waitFor(1)
      r = await run(['python3', '-c', crash], { cwd: tree.ws, sandbox: 'workspace-write', timeout: 30000 })
      await waitFor(2)
      landlock = await run(['python3', '-c', crash], { cwd: tree.ws, sandbox: 'workspace-write', linux: { allow: ['landlock'] }, timeout: 30000 })
      if (landlock.sandboxType === 'landlock') await waitFor(3)
    } finally {
      fs.writeFileSync(PATTERN, before)
    }
    assert.equal(r.signal, 'SIGABRT', show(r))
    t.diagnostic(`bytes streamed: the host's crash ${cores[0]}, the run's ${cores[1]}, the Landlock mode's ${cores[2]}`)
    assert.equal(cores.length, landlock.sandboxType === 'landlock' ? 3 : 2, `cores seen: ${cores}`)
    assert.ok(cores[0] > 32 << 20, `the host's own crash streamed ${cores[0]} bytes`)
    assert.ok(cores[1] < 256 << 10, `a run's crash streamed ${cores[1]} bytes into the host's listener\n${show(r)}`)
    if (landlock.sandboxType === 'landlock') assert.ok(cores[2] < 256 << 10, `a Landlock run's crash streamed ${cores[2]} bytes\n${show(landlock)}`)
  })

  // What the test above relies on, where no core_pattern can be set: the filter is 0 in the
  // command and its children, and no process of the run can raise it.
  const FILTER_PROBE = 'cat /proc/self/coredump_filter; sh -c "cat /proc/self/coredump_filter"; echo 33 > /proc/self/coredump_filter || echo kept; cat /proc/self/coredump_filter'
  for (const [name, options] of [['workspace-write', { sandbox: 'workspace-write' }], ['read-only', { sandbox: 'read-only' }], ['the Landlock mode', { sandbox: 'workspace-write', linux: { allow: ['landlock'] } }]]) {
    test(`${name}: the command's coredump_filter is 0, its children's too, and cannot be raised`, async (t) => {
      const tree = tempTree(t)
      const r = await run(['sh', '-c', FILTER_PROBE], { cwd: tree.ws, ...options })
      if (name === 'the Landlock mode' && r.sandboxType !== 'landlock') return t.skip(`the Landlock mode does not run here (${r.sandboxType})`)
      assert.equal(r.exitCode, 0, show(r))
      assert.equal(r.stdout, '00000000\n00000000\nkept\n00000000\n', show(r))
    })
  }
})
