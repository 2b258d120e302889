'use strict'
// What the paths a configuration names cost every later run by their depth (attacker review,
// cross35). A repository's git configuration may include 256 files, a .cargo name 256 programs,
// and each path kept is looked up on every later run (a stat per repository per include, then a
// walk of each kept path, component by component, to keep it read-only or absent). Bounds on how
// many such paths there are (cross34) left how deep each is to the command: a run that makes one
// directory chain 1,500 levels deep (one mkdir -p) and names files at its bottom makes each
// look-up cost some 1,500.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const { tempTree, sandspawn, show } = require('./helpers')

const { spawnSandboxed } = sandspawn

async function hostCpu(work) {
  const before = process.cpuUsage()
  const value = await work()
  const used = process.cpuUsage(before)
  return { value, ms: (used.user + used.system) / 1000 }
}

const opts = (ws) => ({ cwd: ws, timeout: 600000, sandbox: { mode: 'workspace-write' } })

// 20 repositories whose config is one file's names (hard links) including 255 missing files at the
// bottom of a chain 1,500 directories deep, and 4 .cargo naming 256 runners there each: every
// later 'true' cost the host 7 s of CPU (22 s late on a loaded machine; 300 such repositories: 27
// s of CPU, 80 s late) for the 0.6 s of the command's CPU it took to make them.
test('configurations naming files 1,500 directories deep: a later run costs the host well under a second, and what was not kept is said', { timeout: 600000 }, async (t) => {
  const { ws } = tempTree(t)
  const py = `import os
deep = os.getcwd()
for _ in range(1500):
  deep += "/a"; os.mkdir(deep)
open("cfg", "w").write("".join("[include]\\n\\tpath = %s/x%d\\n" % (deep, n) for n in range(255)))
for i in range(20):
  for d in ("objects", "refs"): os.makedirs("r%d/.git/%s" % (i, d))
  open("r%d/.git/HEAD" % i, "w").write("ref: refs/heads/main\\n")
  os.link("cfg", "r%d/.git/config" % i)
for m in range(4):
  os.makedirs("c%d/.cargo" % m)
  open("c%d/.cargo/config.toml" % m, "w").write("".join('[target.t%d]\\nrunner = "%s/r%d-%d"\\n' % (n, deep, m, n) for n in range(256)))
`
  const made = await spawnSandboxed(['python3', '-c', py], opts(ws))
  assert.equal(made.exitCode, 0, show(made))
  await spawnSandboxed(['true'], opts(ws))
  const later = await hostCpu(() => spawnSandboxed(['true'], opts(ws)))
  assert.equal(later.value.exitCode, 0, show(later.value))
  const said = JSON.stringify(later.value.sandboxDetails.notEnforced).slice(0, 3000)
  assert.ok(later.ms < 1000, `a later 'true' cost the host ${Math.round(later.ms)} ms of CPU`)
  assert.ok(later.value.sandboxDetails.notEnforced.some((l) => /git configuration of .*r\d+\/\.git.* deeper than \d+ components/.test(l)), said)
  assert.ok(later.value.sandboxDetails.notEnforced.some((l) => /c\d\/\.cargo names .* deeper than \d+ components/.test(l)), said)
})
