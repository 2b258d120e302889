'use strict'
// Found by an attacker's review (hostb38): proto's `.prototools` is a reported name (proto's shell
// activation, `eval "$(proto activate zsh)"`, evals its [env] and [shell] aliases at every cd), but
// the WASM plugins a committed one loads from the workspace were left writable and unreported. At
// every change of directory the activation loads the plugin of each tool the cwd's and every
// parent's `.prototools` pins (moonrepo/proto crates/cli/src/commands/activate.rs,
// load_tools_with_options), a `[plugins]` entry "file://./plugins/x.wasm" is taken from the
// directory holding the file (crates/core/src/config.rs, make_absolute), and a WASM plugin runs
// programs on the host through proto's exec_command host function (warpgate-api host_funcs.rs).
// A default workspace-write run rewrote each with hostRisks [] (bwrap and the Landlock mode), and
// review's apply landed them.

const { test } = require('node:test')
const fs = require('node:fs')
const path = require('node:path')
const assert = require('node:assert/strict')
const { sh, show, sandspawn, tempTree, changeSetStore } = require('./helpers')
const { appendsKeptOrSaid, reviewHoldsBack } = require('./kept-or-said')

changeSetStore('sandspawn-proto-programs-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** A project at `dir` whose .prototools (`lines`) loads `files` (each holding `was`); returns their paths. */
function protoProject(dir, lines, files, was) {
  for (const f of files) fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true })
  fs.writeFileSync(path.join(dir, '.prototools'), [...lines, ''].join('\n'))
  const paths = files.map((p) => path.join(dir, p))
  for (const f of paths) fs.writeFileSync(f, was)
  return paths
}

/** The direct runs' (bwrap, Landlock) and review's tests of the files `project(dir)` returns, each holding `was`. */
function keptOrSaidEverywhere(what, project, was) {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: the ${what} a project's .prototools loads cannot be rewritten unsaid`, async (t) => {
      const tree = tempTree(t, { git: true })
      await appendsKeptOrSaid(tree.ws, extra, project(tree.ws), was)
    })
  }
  test(`review: a change set that rewrites the ${what} a .prototools loads is a risk, held back by apply`, async (t) => {
    const tree = tempTree(t, { git: true })
    await reviewHoldsBack(tree.ws, project(tree.ws), 'PS1=x')
  })
}

// Each [plugins] table's form.
keptOrSaidEverywhere('WASM plugins', (dir) => protoProject(dir, [
  'mytool = "1.2.0"',
  'other = "3"',
  '[plugins]',
  'mytool = "file://./plugins/mytool.wasm"',
  '[plugins.tools]',
  "other = 'file://plugins/other.wasm'",
], ['plugins/mytool.wasm', 'plugins/other.wasm'], 'wasm\n'), 'wasm\n')

// Found by an attacker's review (host39): proto also loads the dotenv file `[env] file` names (and
// each `[tools.<id>.env]`'s and `[backends.<id>.env]`'s), taken from the file's directory as its
// plugins are (crates/core/src/config.rs, push_env_file, make_absolute), and the shell activation
// exports its variables at every cd (exec_workflow.rs, get_env_vars with include_shared): a
// `PS1='$(./x.sh)'` or `PROMPT_COMMAND` written there runs at the next prompt. Its name is the
// project's choice (`config/proto.env`), no reported name; a default run rewrote each with
// hostRisks [] (bwrap and the Landlock mode), and review's apply landed them.

// The shared [env]'s, a tool's, a backend's inline table's.
keptOrSaidEverywhere('dotenv files', (dir) => protoProject(dir, [
  'node = "20"',
  '[env]',
  'file = "config/proto.env"',
  'APP_MODE = "dev"',
  '[tools.node.env]',
  "file = './config/node.env'",
  '[backends.asdf]',
  'env = { file = "config/asdf.env" }',
], ['config/proto.env', 'config/node.env', 'config/asdf.env'], 'A=1\n'), 'A=1\n')

// Found by an attacker's review (host39): with PROTO_ENV set, proto reads `.prototools.<env>`
// beside each `.prototools` (file_manager.rs) and its activation applies its [env] at every cd: a
// run that created `.prototools.dev` with `[env] PS1 = "$(./x.sh)"` had nothing said.
test('a .prototools.<env> a run creates is reported, and held back by review', async (t) => {
  const tree = tempTree(t, { git: true })
  fs.writeFileSync(path.join(tree.ws, '.prototools'), 'node = "20"\n')
  const write = `printf '[env]\\nPS1 = "x"\\n' > .prototools.dev`
  const r = await sh(write, { cwd: tree.ws, sandbox: { mode: 'workspace-write' } })
  assert.equal(r.exitCode, 0, show(r))
  assert.ok(r.hostRisks.some((h) => h.path === path.join(tree.ws, '.prototools.dev')), JSON.stringify(r.hostRisks))
  fs.rmSync(path.join(tree.ws, '.prototools.dev'))
  const review = await sandspawn.spawnSandboxed(['sh', '-c', `${write}; echo ok > lib.txt`], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.ok(review.changeSet.hostRisks.some((h) => h.path === path.join(tree.ws, '.prototools.dev')), JSON.stringify(review.changeSet.hostRisks))
  await sandspawn.applyChangeSet(review.changeSet.id, {})
  assert.ok(!fs.existsSync(path.join(tree.ws, '.prototools.dev')), 'landed')
})

// Found by an attacker's review (host40; left by host39): with PROTO_ENV set, proto reads a
// committed `.prototools.<env>` beside `.prototools` and loads its `file://` plugins and `[env]
// file` as it does `.prototools`' (the activation at every cd), but only `.prototools` was read: a
// default run rewrote the plugin and the dotenv file `.prototools.dev` named with hostRisks []
// (bwrap and the Landlock mode).
function protoEnvProject(dir) {
  const files = protoProject(dir, ['node = "20"'], ['plugins/devtool.wasm', 'config/dev.env'], 'x\n')
  fs.writeFileSync(path.join(dir, '.prototools.dev'), ['devtool = "1"', '[plugins]', 'devtool = "file://./plugins/devtool.wasm"', '[env]', 'file = "config/dev.env"', ''].join('\n'))
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the WASM plugin and dotenv file a committed .prototools.<env> loads cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, protoEnvProject(tree.ws), 'x\n')
  })
}
