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

// Found by an attacker's review (rev39): the dotenv files a committed .prototools loads, `[env]
// file = "..."` and a tool's `[tools.<id>.env] file = "..."` (crates/core/src/config.rs: the
// ENV_FILE_KEY, taken from the file's directory by make_absolute, loaded by get_env_vars, which
// the shell activation exports at every cd as it does [env]'s own variables), were left writable
// and unreported: a PROMPT_COMMAND or BASH_ENV written there runs at the host's next prompt.
function protoEnvProject(dir) {
  fs.mkdirSync(path.join(dir, 'config'), { recursive: true })
  fs.writeFileSync(path.join(dir, '.prototools'), ['node = "20"', '[env]', 'file = "config/proto.env"', '[tools.node.env]', "file = 'config/node.env'", ''].join('\n'))
  const files = ['config/proto.env', 'config/node.env'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'A=1\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the env files a project's .prototools loads cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, protoEnvProject(tree.ws), 'A=1\n')
  })
}

test('review: a change set that rewrites an env file a .prototools loads is a risk, held back by apply', async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, protoEnvProject(tree.ws), 'planted')
})
