'use strict'
// The helper's fallbacks for kernels without the new mount API, run on this kernel by taking the
// calls away (`fixtures/without-syscalls.py`: they fail with ENOSYS for the whole process tree).
// Nothing else reaches these paths here, and they guard the same things: every carve-out read-only,
// a denyRead mask inside a carve-out still in place, the workspace itself writable.
//   - before 5.2: no open_tree, move_mount (nor mount_setattr): the helper binds and remounts; the
//     reviewable workspace works, but refuses (fails closed, saying why) a workspace with a mount
//     inside, which it could not put back on top of its overlay;
//   - 5.2 to 5.11: open_tree and move_mount, but no mount_setattr: carve-outs as before 5.2, and
//     the reviewable workspace keeps a denyRead mask inside the workspace;
//   - 5.12 to 6.14: no open_tree_attr: each carve-out copied, then made read-only (two calls);
//     from 6.15 one without mounts below it is copied read-only in one call.
// Before 5.9 (no close_range) the carve-outs' descriptors are closed one by one.
// And before 5.3/5.4 (no pidfd_open, pidfd_send_signal, clone3): runs are reaped and their whole
// tree killed at a timeout without pidfds.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree, token, q, processesMatching, sleep, START_BOUND } = require('./helpers')

const WRAPPER = path.join(__dirname, '..', 'fixtures', 'without-syscalls.py')
const PKG = path.resolve(__dirname, '..', '..')

/** One sandboxed `sh -c script` in a child node process whose kernel lacks `calls`. */
function runWithout(calls, script, options, env = {}) {
  const child = `
    const s = require(${JSON.stringify(PKG)})
    s.spawnSandboxed(['sh', '-c', process.argv[1]], JSON.parse(process.argv[2]))
      .then(async (r) => {
        if (r.changeSet) await s.discardChangeSet(r.changeSet.id)
        process.stdout.write(JSON.stringify({ exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr, changeSet: r.changeSet && r.changeSet.counts }))
      })
      .catch((e) => process.stdout.write(JSON.stringify({ error: e.code + ': ' + e.message })))`
  const r = spawnSync('python3', [WRAPPER, calls.join(','), process.execPath, '-e', child, script, JSON.stringify(options)], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } })
  if (r.status === 3) return { unsupported: r.stderr.trim() }
  assert.equal(r.status, 0, `the child failed: ${r.stderr}`)
  return JSON.parse(r.stdout)
}

function gitDir(top) {
  fs.mkdirSync(path.join(top, '.git', 'refs'), { recursive: true })
  fs.writeFileSync(path.join(top, '.git', 'HEAD'), 'ref: refs/heads/main\n')
  fs.writeFileSync(path.join(top, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n')
}

const KERNELS = [
  { name: 'before 5.2 (no open_tree, move_mount, mount_setattr, close_range)', calls: ['open_tree', 'move_mount', 'mount_setattr', 'fsopen', 'fsmount', 'fspick', 'fsconfig', 'close_range', 'open_tree_attr'] },
  { name: '5.2 to 5.11 (no mount_setattr)', calls: ['mount_setattr', 'open_tree_attr'] },
  { name: '5.12 to 6.14 (no open_tree_attr)', calls: ['open_tree_attr'] },
]

describe('carve-outs on kernels without the new mount API', { concurrency: 2 }, () => {
  for (const kernel of KERNELS) {
    test(kernel.name, (t) => {
      const tree = tempTree(t, { git: true })
      const ws = tree.ws
      for (let i = 0; i < 5; i++) gitDir(path.join(ws, 'deps', `r${i}`))
      const secret = token('OK')
      fs.writeFileSync(path.join(ws, 'deps', 'r2', '.git', 'secret'), `${secret}\n`)
      fs.mkdirSync(path.join(ws, 'frozen'))
      fs.writeFileSync(path.join(ws, 'frozen', 'f.txt'), 'frozen\n')
      const sandbox = {
        mode: 'workspace-write',
        readOnlyPaths: [path.join(ws, 'frozen')],
        denyRead: [path.join(ws, 'deps', 'r2', '.git', 'secret')],
      }
      const tries = [
        ['write a nested .git', 'echo x > deps/r1/.git/config'],
        ['plant a hook', 'echo x > deps/r3/.git/hooks-new'],
        ['write the top .git', 'echo x > .git/config'],
        ['write the readOnlyPaths dir', 'echo x > frozen/f.txt'],
        ['read the denied file', 'cat deps/r2/.git/secret'],
      ]
      const script = [
        'echo made > made.txt && cat made.txt deps/r1/.git/HEAD frozen/f.txt',
        ...tries.map(([label, cmd]) => `if ( ${cmd} ) 2>/dev/null; then echo ${q(`SUCCEEDED ${label}`)}; else echo ${q(`failed ${label}`)}; fi`),
      ].join('\n')
      const r = runWithout(kernel.calls, script, { cwd: ws, sandbox })
      if (r.unsupported) return t.skip(r.unsupported)
      assert.ok(!r.error, `the run was refused: ${r.error}`)
      const shown = `exit ${r.exitCode}\nstdout:\n${r.stdout}\nstderr:\n${r.stderr}`
      assert.ok(r.stdout.startsWith('made\nref: refs/heads/main\nfrozen\n'), `the workspace is writable and the carve-outs readable\n${shown}`)
      for (const [label] of tries) assert.ok(r.stdout.includes(`failed ${label}\n`), `"${label}" did not fail\n${shown}`)
      assert.ok(!r.stdout.includes(secret) && !r.stderr.includes(secret), `the denied file was read\n${shown}`)
      assert.equal(fs.readFileSync(path.join(ws, 'deps', 'r1', '.git', 'config'), 'utf8'), '[core]\n\trepositoryformatversion = 0\n')
      assert.equal(fs.readFileSync(path.join(ws, 'made.txt'), 'utf8'), 'made\n')
    })
  }
})

describe('the reviewable workspace on kernels without the new mount API', { concurrency: 2 }, () => {
  for (const kernel of KERNELS) {
    test(kernel.name, (t) => {
      const tree = tempTree(t, { git: true })
      const store = fs.mkdtempSync(path.join(tree.root, 'store-'))
      const env = { SANDSPAWN_CHANGE_SET_DIR: store }
      const ws = tree.ws
      fs.mkdirSync(path.join(ws, 'sec'))
      const secret = token('RV')
      fs.writeFileSync(path.join(ws, 'sec', 'x'), `${secret}\n`)
      const script = 'echo hi > new.txt && cat new.txt; cat sec/x 2>/dev/null; true'

      const plain = runWithout(kernel.calls, script, { cwd: ws, sandbox: { mode: 'workspace-write', workspace: 'review' } }, env)
      if (plain.unsupported) return t.skip(plain.unsupported)
      assert.ok(!plain.error, `a review run without mounts inside was refused: ${plain.error}`)
      assert.equal(plain.stdout, `hi\n${secret}\n`)
      assert.deepEqual(plain.changeSet, { added: 1, deleted: 0, modified: 0 })
      assert.ok(!fs.existsSync(path.join(ws, 'new.txt')), 'the write reached the workspace')

      const masked = runWithout(kernel.calls, script, { cwd: ws, sandbox: { mode: 'workspace-write', workspace: 'review', denyRead: [path.join(ws, 'sec')] } }, env)
      if (kernel.calls.includes('open_tree')) {
        assert.match(masked.error || '', /^ERR_SANDBOX_SETUP_FAILED: .*needs open_tree and move_mount \(Linux 5\.2 or later\)/, JSON.stringify(masked))
      } else {
        assert.ok(!masked.error, `refused: ${masked.error}`)
        assert.equal(masked.stdout, 'hi\n', 'the denied directory was readable')
      }
      assert.ok(!fs.existsSync(path.join(ws, 'new.txt')), 'the write reached the workspace')
    })
  }
})

describe('processes on kernels without pidfds', () => {
  test('before 5.3 (no pidfd_open, pidfd_send_signal, pidfd_getfd, clone3): output, exit, timeout, tree kill', async (t) => {
    const marker = `${30 + Math.floor(Math.random() * 1000) / 1000}`.padEnd(6, '1')
    const script = `echo started; sleep ${marker} & sleep ${marker}`
    const r = runWithout(['pidfd_open', 'pidfd_send_signal', 'pidfd_getfd', 'clone3'], script, { timeout: START_BOUND })
    if (r.unsupported) return t.skip(r.unsupported)
    assert.ok(!r.error, `refused: ${r.error}`)
    assert.equal(r.stdout, 'started\n')
    assert.equal(r.exitCode, null, 'killed at the timeout')
    // The whole tree went with it: no sleep of ours is left (given a moment to be reaped).
    for (let i = 0; i < 200 && processesMatching(`sleep ${marker}`).length; i++) await sleep(100)
    assert.deepEqual(processesMatching(`sleep ${marker}`), [], 'a process of the run outlived it')
    const ok = runWithout(['pidfd_open', 'pidfd_send_signal', 'pidfd_getfd', 'clone3'], 'exit 7', { sandbox: 'workspace-write' })
    assert.equal(ok.exitCode, 7)
  })
})
