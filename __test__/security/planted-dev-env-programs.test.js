'use strict'
// Found by an attacker's review (host41; left open by host40, which made devbox.json and
// devenv.yaml reported names): what they pull in from the workspace was left writable and
// unreported. devbox's `.envrc` (`devbox generate direnv`) runs `devbox shellenv --init-hook` at
// each cd, which runs the `shell.init_hook` of every local plugin a devbox.json `include`s
// (`path:./plugins/p/plugin.json`, or a directory's plugin.json); devenv's `use devenv` evaluates
// each local path of a devenv.yaml's `imports` with devenv.nix, its `enterShell` included, at the
// next prompt. A default workspace-write run rewrote each with hostRisks [] (bwrap and the Landlock
// mode), and review's apply landed them.

const { test } = require('node:test')
const fs = require('node:fs')
const path = require('node:path')
const { tempTree, changeSetStore } = require('./helpers')
const { appendsKeptOrSaid, reviewHoldsBack } = require('./kept-or-said')

changeSetStore('sandspawn-dev-env-programs-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }
const WAS = '{ "shell": { "init_hook": ["echo plugin"] } }\n'

/** A project at `dir` whose devbox.json includes two local plugins and whose devenv.yaml imports a file. */
function project(dir) {
  const files = ['plugins/p/plugin.json', 'plugins/dir/plugin.json', 'nix/mod.nix', 'sub/nix/local.nix']
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(dir, f)), { recursive: true })
    fs.writeFileSync(path.join(dir, f), WAS)
  }
  fs.writeFileSync(path.join(dir, 'devbox.json'), JSON.stringify({ include: ['path:./plugins/p/plugin.json', 'path:plugins/dir', 'plugin:nginx'], packages: [] }, null, 2))
  fs.writeFileSync(path.join(dir, 'devenv.yaml'), 'inputs:\n  nixpkgs:\n    url: github:cachix/devenv-nixpkgs/rolling\nimports:\n  - ./nix/mod.nix\n')
  // Below the top too: a package of a monorepo with its own environment.
  fs.writeFileSync(path.join(dir, 'sub/devenv.yaml'), 'imports: [ ./nix/local.nix ]\n')
  return files.map((f) => path.join(dir, f))
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: what a devbox.json includes and a devenv.yaml imports cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, project(tree.ws), WAS)
  })
}

test('review: a change set that rewrites what a devbox.json includes or a devenv.yaml imports is a risk, held back by apply', async (t) => {
  const tree = tempTree(t, { git: true })
  // Review reads the configurations at the tops (as for the other tools): the top's three files.
  await reviewHoldsBack(tree.ws, project(tree.ws).slice(0, 3), 'x')
})
