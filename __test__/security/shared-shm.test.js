'use strict'
// The helper's scratch entries (the file covers' empty file, the stores' cover's directory) are made
// in the sandbox's own /dev/shm only, never in the host's one a writable root at /dev/shm brings.
//
// Found by an attacker's review (kern36): with `writableRoots: ['/dev/shm']` the helper made its
// scratch at the top of the host's /dev/shm, which every process of the machine shares (1777):
// - the file covers' empty file has a fixed name, created O_EXCL: any local process (another
//   user's too, or a run with /dev/shm writable) that made /dev/shm/.sandspawn-cover made every
//   such plan with a file placeholder fail setup ('creating the empty file for the placeholders
//   (/dev/shm/.sandspawn-cover) failed: File exists', exit 125), and two such plans at once
//   collided; its binds took it by name, so a file put there meanwhile was what the placeholders
//   showed;
// - the stores' cover's scratch directory (since the thirty-fifth session it also holds the
//   writable bind of the tool caches' store on its way out) was mounted on, filled and detached by
//   its name, which another process of the host could replace while the sandbox was set up.
//
// Runs in a mount namespace of its own with a tmpfs of its own at /dev/shm (the "host's" here), so
// nothing on the host changes; watches it for the helper's entries while the runs go.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree } = require('./helpers')

const SKIP = process.getuid() !== 0 ? 'mounting a tmpfs in a mount namespace of its own needs root here'
  : spawnSync('unshare', ['--mount', '--propagation', 'private', 'true']).status !== 0 && 'unshare --mount is not available'

const PACKAGE = path.resolve(__dirname, '../..')

const SCRIPT = `
  const s = require(${JSON.stringify(PACKAGE)})
  const fs = require('node:fs')
  const { spawnSync } = require('node:child_process')
  const ws = process.env.WS
  const sandbox = { mode: 'workspace-write', tmp: 'private', writableRoots: ['/dev/shm'] }
  const seen = new Set()
  const watcher = fs.watch('/dev/shm', (ev, name) => { if (name) seen.add(name) })
  ;(async () => {
    const out = {}
    // A run of the runner: the stores' cover goes on a scratch directory when there is one.
    const r = await s.spawnSandboxed(['true'], { cwd: ws, sandbox })
    out.run = r.exitCode
    // A plan with file placeholders, while another process holds the scratch file's name.
    fs.writeFileSync('/dev/shm/.sandspawn-cover', 'NOT-EMPTY\\n')
    const p = s.buildSandboxCommand(['sh', '-c', 'echo "[$(cat .envrc 2>/dev/null)]"; echo x 2>/dev/null > .envrc || echo REFUSED'], { cwd: ws, sandbox })
    out.fileCovers = p.args.filter((a) => a.startsWith('--cover-file=')).length
    const q = spawnSync(p.program, p.args, { cwd: ws, env: p.env, encoding: 'utf8' })
    out.plan = q.status
    out.planOut = q.stdout + q.stderr
    // Every event before the marker's has been delivered once the marker's is.
    fs.writeFileSync('/dev/shm/zz-marker', '')
    while (!seen.has('zz-marker')) await new Promise((resolve) => setTimeout(resolve, 20))
    watcher.close()
    out.seen = [...seen].filter((n) => n.startsWith('.sandspawn-cover') && n !== '.sandspawn-cover')
    // The plan's placeholders (in the workspace and the tmpfs) go with a run of the runner.
    await s.spawnSandboxed(['true'], { cwd: ws, sandbox })
    process.stdout.write(JSON.stringify(out))
  })().catch((e) => {
    watcher.close()
    process.stdout.write(JSON.stringify({ error: e.code + ' ' + e.message }))
  })
`

test('a writable /dev/shm: the helper makes nothing in the host\'s, and what another process made there fails no run', { skip: SKIP, timeout: 120_000 }, (t) => {
  const { ws } = tempTree(t)
  const shell = 'mount -t tmpfs -o mode=1777 tmpfs /dev/shm && exec "$NODE" -e "$SCRIPT"'
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', shell], {
    encoding: 'utf8', env: { ...process.env, NODE: process.execPath, SCRIPT, WS: ws }, timeout: 110_000,
  })
  assert.equal(r.status, 0, r.stderr)
  const out = JSON.parse(r.stdout)
  assert.equal(out.error, undefined, out.error)
  assert.equal(out.run, 0)
  assert.ok(out.fileCovers > 0, 'the plan has file placeholders to cover')
  assert.equal(out.plan, 0, out.planOut)
  assert.equal(out.planOut, '[]\nREFUSED\n', 'the placeholder shows nothing (not the file another process put in /dev/shm: a placeholder symlink bound over itself, plan36) and is covered read-only')
  assert.deepEqual(out.seen, [], 'no scratch entry of the helper appeared in the host\'s /dev/shm')
})
