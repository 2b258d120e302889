'use strict'
// Found by an attacker's review (kern34): when memory runs out (the machine's, or the memory cgroup
// the host process runs in: a container's, a systemd unit's, a CI job's), the kernel's OOM killer
// kills the process with the most memory, scaled by its oom_score_adj. A run's processes kept the
// caller's adjustment (0) and could set their own, so a run that spread its memory over processes
// each smaller than a host process made the kernel kill the host process: a default
// workspace-write run's six 150 MiB processes, in a 700 MiB memory cgroup with a 350 MiB host
// process (the agent's Node, an editor, a database), got the host process killed first, and the
// run went on. Every bwrap plan and the Landlock mode now give the command the largest
// adjustment (1000: the first victim, before any host process of the default 0) and keep it there:
// the sandbox's /proc is read-only under bwrap, and Landlock refuses writes to the host's, so
// neither `/proc/self/oom_score_adj` nor `oom_adj` can be written back down.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { run, show, tempTree, sh } = require('./helpers')

const MODES = [
  ['read-only', 'read-only'],
  ['workspace-write', 'workspace-write'],
]

const PROBE = `
read -r adj < /proc/self/oom_score_adj; echo "adj $adj"
bash -c 'read -r c < /proc/self/oom_score_adj; echo "child $c"'
for f in oom_score_adj oom_adj; do
  if (echo 0 > /proc/self/$f) 2>/dev/null; then echo "lowered $f"; else echo "kept $f"; fi
done
read -r adj < /proc/self/oom_score_adj; echo "after $adj"
echo x > /dev/stdout && echo "stdout reopened"
`

describe('the OOM killer takes a run\'s processes before the host\'s (attacker review, kern34)', () => {
  for (const [name, sandbox] of MODES) {
    test(`${name}: the command's oom_score_adj is 1000, its children's too, and cannot be lowered`, async (t) => {
      const tree = tempTree(t)
      const r = await sh(PROBE, { cwd: tree.ws, sandbox })
      assert.equal(r.exitCode, 0, show(r))
      assert.match(r.stdout, /^adj 1000$/m, show(r))
      assert.match(r.stdout, /^child 1000$/m, show(r))
      assert.match(r.stdout, /^kept oom_score_adj$/m, show(r))
      assert.match(r.stdout, /^kept oom_adj$/m, show(r))
      assert.match(r.stdout, /^after 1000$/m, show(r))
      assert.match(r.stdout, /^stdout reopened$/m, `writing through /proc/self/fd still works\n${show(r)}`)
    })
  }

  // The Landlock mode shares the host's /proc, where Landlock refuses the command every write
  // (no writable root holds it): the supervisor's forked command sets 1000 before it is confined.
  test('the Landlock mode: the command\'s oom_score_adj is 1000, its children\'s too, and cannot be lowered', async (t) => {
    const tree = tempTree(t)
    const r = await sh(PROBE, { cwd: tree.ws, sandbox: 'workspace-write', linux: { allow: ['landlock'] } })
    if (r.sandboxType !== 'landlock') return t.skip(`the Landlock mode does not run here (${r.sandboxType})`)
    assert.equal(r.exitCode, 0, show(r))
    for (const line of ['adj 1000', 'child 1000', 'kept oom_score_adj', 'kept oom_adj', 'after 1000', 'stdout reopened']) {
      assert.match(r.stdout, new RegExp(`^${line}$`, 'm'), show(r))
    }
  })

  // The real thing, where a memory cgroup can be made (root, cgroup v1 or v2 with the memory
  // controller): a host process of 350 MiB and a run of six 150 MiB processes share a 700 MiB
  // cgroup. Before, the kernel killed the host process.
  const cgroupBase = () => {
    if (process.getuid() !== 0) return null
    const lines = fs.readFileSync('/proc/self/cgroup', 'utf8').split('\n')
    const v1 = lines.find((l) => /^\d+:memory:/.test(l))
    if (v1) {
      const dir = path.join('/sys/fs/cgroup/memory', v1.split(':')[2])
      return fs.existsSync(path.join(dir, 'memory.limit_in_bytes')) ? { dir, limit: 'memory.limit_in_bytes' } : null
    }
    const v2 = lines.find((l) => l.startsWith('0::'))
    if (!v2) return null
    const dir = path.join('/sys/fs/cgroup', v2.slice(3))
    try {
      if (!fs.readFileSync(path.join(dir, 'cgroup.subtree_control'), 'utf8').includes('memory')) return null
    } catch {
      return null
    }
    return { dir, limit: 'memory.max' }
  }
  const base = cgroupBase()
  const skip = base ? false : 'needs root and a memory cgroup this process can make a child of'

  test('a host process sharing a memory cgroup with a run survives the run\'s OOM (root only)', { skip }, async (t) => {
    const tree = tempTree(t)
    const cg = path.join(base.dir, `sandspawn-oom-${process.pid}`)
    fs.mkdirSync(cg)
    t.after(async () => {
      for (let i = 0; i < 50; i++) {
        try {
          return fs.rmdirSync(cg)
        } catch {
          await new Promise((res) => setTimeout(res, 100))
        }
      }
    })
    fs.writeFileSync(path.join(cg, base.limit), String(700 * 1024 * 1024))
    const inCgroup = (argv) => spawn('sh', ['-c', `echo $$ > ${cg}/cgroup.procs && exec "$@"`, 'sh', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] })
    const ended = (child) => new Promise((res) => {
      let out = ''
      child.stdout.on('data', (d) => (out += d))
      child.stderr.on('data', (d) => (out += d))
      child.on('close', (code, signal) => res({ code, signal, out }))
    })
    const host = inCgroup(['python3', '-c', 'b = bytearray(350 * 1024 * 1024)\nimport time\ntime.sleep(20)\nprint("host survived")'])
    const hostEnded = ended(host)
    await new Promise((res) => setTimeout(res, 1500))
    const hog = [
      'for i in 1 2 3 4 5 6; do python3 -c "',
      'import time',
      'b = []',
      'for j in range(15):',
      '    b.append(bytearray(10 * 1024 * 1024)); time.sleep(0.2)',
      'time.sleep(6)',
      '" & done; wait; echo run-ended',
    ].join('\n')
    const script = `require(${JSON.stringify(path.join(__dirname, '..', '..'))}).spawnSandboxed(['bash', '-c', ${JSON.stringify(hog)}], { cwd: ${JSON.stringify(tree.ws)}, sandbox: 'workspace-write', timeout: 30000 }).then((r) => console.log('run', r.exitCode, r.signal), (e) => console.log('run rejected', e.message))`
    const runner = await ended(inCgroup([process.execPath, '-e', script]))
    const h = await hostEnded
    assert.equal(h.signal, null, `the kernel killed the host process (${h.signal}); the run: ${runner.out}`)
    assert.match(h.out, /host survived/, `host: ${h.out}\nrun: ${runner.out}`)
  })
})
