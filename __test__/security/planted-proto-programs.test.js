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

/** A project at `dir`: a .prototools of `lines`, and each of `rels` (in its directory) holding `text`; returns their paths. */
function writeProto(dir, lines, rels, text) {
  fs.writeFileSync(path.join(dir, '.prototools'), [...lines, ''].join('\n'))
  const files = rels.map((p) => path.join(dir, p))
  for (const f of files) {
    fs.mkdirSync(path.dirname(f), { recursive: true })
    fs.writeFileSync(f, text)
  }
  return files
}

/** A project at `dir` whose .prototools loads plugins from the workspace (each [plugins] table's form); returns them. */
function protoProject(dir) {
  const lines = ['mytool = "1.2.0"', 'other = "3"', '[plugins]', 'mytool = "file://./plugins/mytool.wasm"', '[plugins.tools]', "other = 'file://plugins/other.wasm'"]
  return writeProto(dir, lines, ['plugins/mytool.wasm', 'plugins/other.wasm'], 'wasm\n')
}

/** The tests of what `project` writes (`text` in each file): kept or said in direct runs, held back in review. */
function keptOrSaidTests(what, project, text) {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: the ${what} a project's .prototools loads cannot be rewritten unsaid`, async (t) => {
      const tree = tempTree(t, { git: true })
      await appendsKeptOrSaid(tree.ws, extra, project(tree.ws), text)
    })
  }
  test(`review: a change set that rewrites the ${what} a .prototools loads is a risk, held back by apply`, async (t) => {
    const tree = tempTree(t, { git: true })
    await reviewHoldsBack(tree.ws, project(tree.ws), 'planted')
  })
}

keptOrSaidTests('WASM plugins', protoProject, 'wasm\n')

// Found by an attacker's review (rev39): the dotenv files a committed .prototools loads, `[env]
// file = "..."` and a tool's `[tools.<id>.env] file = "..."` (crates/core/src/config.rs: the
// ENV_FILE_KEY, taken from the file's directory by make_absolute, loaded by get_env_vars, which
// the shell activation exports at every cd as it does [env]'s own variables), were left writable
// and unreported: a PROMPT_COMMAND or BASH_ENV written there runs at the host's next prompt.
function protoEnvProject(dir) {
  return writeProto(dir, ['node = "20"', '[env]', 'file = "config/proto.env"', '[tools.node.env]', "file = 'config/node.env'"], ['config/proto.env', 'config/node.env'], 'A=1\n')
}

keptOrSaidTests('env files', protoEnvProject, 'A=1\n')
