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
const { tempTree, changeSetStore } = require('./helpers')
const { appendsKeptOrSaid, reviewHoldsBack } = require('./kept-or-said')

changeSetStore('sandspawn-proto-programs-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** A project at `dir` whose .prototools loads plugins from the workspace (each [plugins] table's form); returns them. */
function protoProject(dir) {
  fs.mkdirSync(path.join(dir, 'plugins'), { recursive: true })
  fs.writeFileSync(path.join(dir, '.prototools'), [
    'mytool = "1.2.0"',
    'other = "3"',
    '[plugins]',
    'mytool = "file://./plugins/mytool.wasm"',
    '[plugins.tools]',
    "other = 'file://plugins/other.wasm'",
    '',
  ].join('\n'))
  const files = ['plugins/mytool.wasm', 'plugins/other.wasm'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'wasm\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the WASM plugins a project's .prototools loads cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, protoProject(tree.ws), 'wasm\n')
  })
}

test('review: a change set that rewrites a plugin a .prototools loads is a risk, held back by apply', async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, protoProject(tree.ws), 'planted')
})

// Found by an attacker's review (host39): proto also loads the dotenv file `[env] file` names (and
// each `[tools.<id>.env]`'s and `[backends.<id>.env]`'s), taken from the file's directory as its
// plugins are (crates/core/src/config.rs, push_env_file, make_absolute), and the shell activation
// exports its variables at every cd (exec_workflow.rs, get_env_vars with include_shared): a
// `PS1='$(./x.sh)'` or `PROMPT_COMMAND` written there runs at the next prompt. Its name is the
// project's choice (`config/proto.env`), no reported name; a default run rewrote each with
// hostRisks [] (bwrap and the Landlock mode), and review's apply landed them.

/** A project at `dir` whose .prototools loads dotenv files (the shared [env]'s, a tool's, a backend's); returns them. */
function protoEnvProject(dir) {
  fs.mkdirSync(path.join(dir, 'config'), { recursive: true })
  fs.writeFileSync(path.join(dir, '.prototools'), [
    'node = "20"',
    '[env]',
    'file = "config/proto.env"',
    'APP_MODE = "dev"',
    '[tools.node.env]',
    "file = './config/node.env'",
    '[backends.asdf]',
    'env = { file = "config/asdf.env" }',
    '',
  ].join('\n'))
  const files = ['config/proto.env', 'config/node.env', 'config/asdf.env'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'A=1\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the dotenv files a project's .prototools loads cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, protoEnvProject(tree.ws), 'A=1\n')
  })
}

test('review: a change set that rewrites a dotenv file a .prototools loads is a risk, held back by apply', async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, protoEnvProject(tree.ws), 'PS1=x')
})
