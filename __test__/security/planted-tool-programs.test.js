'use strict'
// Found by an attacker's review (host33): the programs a protected tool configuration names by
// path. `.cargo` is a protected name (its config.toml's `rustc-wrapper`, `runner` and linkers run
// programs), and git's `core.fsmonitor = tools/fsmon` is kept read-only as the program a
// repository's configuration names; but a project's committed `.cargo/config.toml` naming
// `rustc-wrapper = "tools/wrap.sh"` (sccache-style wrappers, a `runner` for an embedded target, a
// linker script) left `tools/wrap.sh` writable and unreported: a default workspace-write run
// rewrote it with hostRisks [], and the host's next `cargo metadata` (what rust-analyzer runs when
// an editor opens the folder; no build script, no project code) ran it (cargo 1.9x). The same in
// a package's own `.cargo` below the top (cargo reads every ancestor's of its cwd).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { sh, show, tempTree, which, sandspawn, changeSetStore } = require('./helpers')

changeSetStore('sandspawn-tool-programs-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** A cargo project at `dir` whose `.cargo/config.toml` names `tools/*` programs; returns them. */
function project(dir) {
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true })
  fs.mkdirSync(path.join(dir, '.cargo'))
  fs.mkdirSync(path.join(dir, 'tools'))
  fs.writeFileSync(path.join(dir, 'Cargo.toml'), `[package]\nname = "p${path.basename(dir).replace(/\W/g, '')}"\nversion = "0.1.0"\nedition = "2021"\n`)
  fs.writeFileSync(path.join(dir, 'src/main.rs'), 'fn main() {}\n')
  fs.writeFileSync(path.join(dir, '.cargo/config.toml'), [
    '[build]',
    'rustc-wrapper = "tools/wrap.sh"',
    '[target.x86_64-unknown-linux-gnu]',
    "runner = 'tools/run.sh --flag'",
    'linker = "tools/ld"',
    '',
  ].join('\n'))
  const wrap = `#!/bin/sh\nexec "$@"\n`
  for (const n of ['wrap.sh', 'run.sh', 'ld']) fs.writeFileSync(path.join(dir, 'tools', n), wrap, { mode: 0o755 })
  return ['tools/wrap.sh', 'tools/run.sh', 'tools/ld'].map((p) => path.join(dir, p))
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs a project's .cargo/config.toml names by path cannot be rewritten unsaid; the host's cargo metadata runs none of the run's`, async (t) => {
    const tree = tempTree(t, { git: true })
    const marker = path.join(tree.out, 'RAN')
    const programs = [...project(tree.ws), ...project(path.join(tree.ws, 'crates/sub'))]
    const before = programs.map((p) => fs.readFileSync(p, 'utf8'))
    const evil = `#!/bin/sh\necho "$0" >> ${marker}\nexec "$@"\n`
    const script = programs.map((p) => `printf '%s' '${evil}' > ${p} 2>/dev/null`).join('; ') + '; true'
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, show(r))
    programs.forEach((p, i) => {
      const kept = fs.readFileSync(p, 'utf8') === before[i]
      const said = r.hostRisks.some((h) => h.path === p)
      assert.ok(kept || said, `${p} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
    })
    if (which('cargo')) {
      for (const dir of [tree.ws, path.join(tree.ws, 'crates/sub')]) {
        const c = spawnSync('cargo', ['metadata', '--format-version', '1', '--offline'], { cwd: dir, encoding: 'utf8' })
        assert.equal(c.status, 0, c.stderr)
      }
      const ran = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''
      assert.equal(ran, '', `the host's cargo metadata ran the run's programs:\n${ran}\nhostRisks: ${JSON.stringify(r.hostRisks)}`)
    }
  })
}

test("review: a change set that rewrites a program a project's .cargo/config.toml names is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  const programs = project(tree.ws)
  const before = programs.map((p) => fs.readFileSync(p, 'utf8'))
  const script = programs.map((p) => `echo 'echo planted' >> ${p}`).join('; ') + '; echo ok > src/lib.rs'
  const r = await sandspawn.spawnSandboxed(['sh', '-c', script], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.ok(r.changeSet, show(r))
  for (const p of programs) assert.ok(r.changeSet.hostRisks.some((h) => h.path === p), `${p}: ${JSON.stringify(r.changeSet.hostRisks)}`)
  await sandspawn.applyChangeSet(r.changeSet.id, {})
  programs.forEach((p, i) => assert.equal(fs.readFileSync(p, 'utf8'), before[i], `${p} landed`))
  assert.equal(fs.readFileSync(path.join(tree.ws, 'src/lib.rs'), 'utf8'), 'ok\n', 'the rest of the set landed')
})
