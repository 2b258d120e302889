'use strict'
// Found by an attacker's review (host36): clangd reads a `.clangd` in the directory of each file
// opened and in every ancestor's, and its `CompileFlags: { Compiler: ... }` sets the driver of
// every compile command there. clangd runs that driver (`-E -v -x c++ -`, to learn its include
// paths) when the user's own `--query-driver` glob matches it, which cross-toolchain setups set to
// `**` as clangd's documentation suggests: a run-written `.clangd` naming `./tools/cc` then ran on
// the host's next file open in the editor. `.clangd` was no protected or reported name: a default
// workspace-write run wrote it with hostRisks []. Projects commit and tools write it (it is plain
// configuration), so it is reported, not kept: the risk names it.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sh, show, tempTree } = require('./helpers')

test('a .clangd a run writes (its Compiler is a driver clangd runs) is a host risk of the result', async (t) => {
  const tree = tempTree(t, { git: true })
  fs.mkdirSync(path.join(tree.ws, 'src'))
  const script = "mkdir -p tools && printf '#!/bin/sh\\nid > /tmp/x\\n' > tools/cc && chmod +x tools/cc && " +
    "printf 'CompileFlags:\\n  Compiler: ./tools/cc\\n' > .clangd && cp .clangd src/.clangd"
  const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' } })
  assert.equal(r.exitCode, 0, show(r))
  for (const p of ['.clangd', 'src/.clangd'].map((f) => path.join(tree.ws, f))) {
    assert.ok(r.hostRisks.some((h) => h.path === p), `${p} written with nothing said: ${JSON.stringify(r.hostRisks)}`)
  }
})
