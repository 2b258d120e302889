'use strict'
// Checked by an attacker's review (hostb37), holding: version managers whose shell hook obeys a
// version file on cd and take a name with `/` as a directory. fnm (`--use-on-cd`) reads a
// non-semver `.nvmrc` or `.node-version` as an alias and joins it to its aliases directory (an
// absolute name replaces it, `..` climbs), then links the shell's multishell to it: the shell's
// next `node` or `npm` runs `<dir>/bin/node`. SDKMAN! (`sdkman_auto_env`) takes
// `java=../../../ws/jdk` from `.sdkmanrc` when the directory exists and puts its `bin` on PATH.
// pyenv, rbenv and goenv refuse such names (CVE-2022-35861). A run that writes one of these files,
// naming a directory of the workspace it fills, must be said: they are report-only names, at the
// top and in a package below it.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sh, show, tempTree } = require('./helpers')

test('a run that points .node-version, .nvmrc or .sdkmanrc at a directory of the workspace holding a node or a JDK is said', async (t) => {
  const tree = tempTree(t, { git: true })
  fs.mkdirSync(path.join(tree.ws, 'pkg'))
  const files = ['.node-version', 'pkg/.nvmrc', '.sdkmanrc'].map((f) => path.join(tree.ws, f))
  const dir = path.join(tree.ws, '.cache/n')
  const script = [
    `mkdir -p ${dir}/bin ${tree.ws}/.cache/jdk/bin`,
    `printf '#!/bin/sh\\ntouch /tmp/pwned\\n' > ${dir}/bin/node`,
    `chmod +x ${dir}/bin/node`,
    `echo ${dir} > ${files[0]}`,
    `echo ../../../../../../../../..${dir} > ${files[1]}`,
    `echo java=../../../../../../../../..${tree.ws}/.cache/jdk > ${files[2]}`,
  ].join(' && ')
  const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' } })
  assert.equal(r.exitCode, 0, show(r))
  for (const f of files) assert.ok(r.hostRisks.some((h) => h.path === f), `${f} written unsaid: ${JSON.stringify(r.hostRisks)}`)
})
