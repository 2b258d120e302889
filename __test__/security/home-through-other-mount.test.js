'use strict'
// Found by an attacker's review (revd40): the home's protections (shell startup files, the global git
// configuration, ...) hold where a writable root holds the home by its name. With the home reached
// through another mount of its filesystem (`/home` bound from `/data/home`, or on btrfs the
// filesystem's top mounted beside the `home` subvolume) and the cwd at the other name's top
// (`/data`), a default workspace-write run appended `[core] fsmonitor = /x` to
// `/data/home/u/.config/git/config`, the host's global git configuration, unreported: the host's
// next `git status` runs `/x`. Such a root is refused now, as a root reaching `/etc` through a bind
// mount is; a root inside the home's other name (a project below it) stays allowed. The mounts are
// made in a mount namespace of the test's own (`unshare -m`, as root), never the host's.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree } = require('./helpers')

const INDEX = path.join(__dirname, '..', '..', 'index.js')
const NEEDS = process.platform !== 'linux' || process.getuid() !== 0 || spawnSync('unshare', ['-m', 'true']).status !== 0
  ? "needs root and unshare -m (a mount namespace of the test's own)" : false

/** Runs `script` (shell) in a mount namespace of its own, then node with `probe`; the last JSON line. */
function inNamespace(script, probe, home) {
  const r = spawnSync('unshare', ['-m', '--propagation', 'private', 'sh', '-c', `${script} && HOME=${home} exec "$0" -e "$1"`, process.execPath, probe], { encoding: 'utf8', timeout: 120000 })
  assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`)
  return JSON.parse(r.stdout.trim().split('\n').pop())
}

const spawnProbe = (command, cwd) => `const s = require(${JSON.stringify(INDEX)})
s.spawnSandboxed(${JSON.stringify(command)}, { cwd: ${JSON.stringify(cwd)}, timeout: 60000, sandbox: { mode: 'workspace-write' } })
  .then((r) => console.log(JSON.stringify({ ran: r.exitCode, stderr: r.stderr, risks: r.hostRisks })), (e) => console.log(JSON.stringify({ code: e.code, message: e.message })))`

test("a writable root that shows the host's home through another mount is refused; one inside the home's other name runs", { skip: NEEDS }, (t) => {
  const { root } = tempTree(t)
  const [data, homes] = [path.join(root, 'data'), path.join(root, 'home')]
  const [other, home] = [path.join(data, 'home', 'u'), path.join(homes, 'u')]
  const gitConfig = path.join(other, '.config', 'git', 'config')
  fs.mkdirSync(path.join(other, '.config', 'git'), { recursive: true })
  fs.mkdirSync(path.join(other, 'project'))
  fs.mkdirSync(homes)
  fs.writeFileSync(gitConfig, '[user]\n\tname = u\n')
  const bind = `mount --bind ${path.join(data, 'home')} ${homes}`

  const command = ['sh', '-c', `printf '[core]\\n\\tfsmonitor = /x\\n' >> ${gitConfig}`]
  const got = inNamespace(bind, spawnProbe(command, data), home)
  assert.equal(fs.readFileSync(gitConfig, 'utf8'), '[user]\n\tname = u\n', `the home's git configuration was rewritten through ${data}: ${JSON.stringify(got)}`)
  assert.equal(got.code, 'ERR_SANDBOX_INVALID_OPTIONS', JSON.stringify(got))
  assert.match(got.message, /home/, got.message)
  assert.ok(got.message.includes(data), got.message)

  // A project inside the home's other name holds none of the home's own files: it runs.
  const inside = inNamespace(bind, spawnProbe(['sh', '-c', 'echo made > made.txt'], path.join(other, 'project')), home)
  assert.equal(inside.ran, 0, JSON.stringify(inside))
  assert.equal(fs.readFileSync(path.join(other, 'project', 'made.txt'), 'utf8'), 'made\n')
})
