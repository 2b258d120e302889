'use strict'
// Found by an attacker's review (host37): mise's configuration files (mise.toml, .mise.toml,
// .config/mise/config.toml, ...) are report-only names, so a run that changes one is reported;
// but the files a project's committed one has mise run were left writable and unreported, as an
// .envrc's sourced files were before host34. With the shell hook (`eval "$(mise activate bash)"`,
// mise's usual setup) mise resolves a trusted directory's environment at each prompt there:
// `[env] _.source = "scripts/env.sh"` runs that file with bash and exports what it sets
// (mise's src/config/env_directive/source.rs: EnvDiff::from_bash_script, relative to the
// config_root), `_.file` loads a dotenv file into the shell's environment (PROMPT_COMMAND,
// BASH_ENV and NODE_OPTIONS run code from there), and `[hooks] enter = "./scripts/enter.sh"` runs
// its command when the shell enters the directory; a template's exec(command="...") (in any string,
// and in a .tool-versions, which mise renders whole) runs its command from the configuration's
// directory (mise's src/tera.rs, tera_exec). mise's trust covers the configuration file,
// not what it names. A default workspace-write run rewrote each with hostRisks [] (bwrap and the
// Landlock mode), and review's apply landed them.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { tempTree, changeSetStore } = require('./helpers')
const { appendsKeptOrSaid, reviewHoldsBack } = require('./kept-or-said')

changeSetStore('sandspawn-mise-programs-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** A project at `dir` whose mise.toml (and a package's .config/mise/config.toml) name files mise runs; returns them. */
function miseProject(dir) {
  for (const d of ['scripts', 'config', 'bin', 'tools', 'pkg/.config/mise', 'pkg/tools']) fs.mkdirSync(path.join(dir, d), { recursive: true })
  fs.writeFileSync(path.join(dir, 'mise.toml'), [
    '[env]',
    'NODE_ENV = "development"',
    '_.source = "scripts/env.sh"',
    "_.file = ['.env.shared.json', { path = \"config/dev.env\", redact = false }]",
    '_.path = ["./bin"]',
    "VERSION = \"{{ exec(command='./scripts/version.sh --short') }}\"",
    '[hooks]',
    'enter = "./scripts/enter.sh --quiet"',
    '',
  ].join('\n'))
  // mise renders a .tool-versions whole as a template (Tera's exec runs its command).
  fs.writeFileSync(path.join(dir, '.tool-versions'), 'node {{exec(command="tools/node-version.sh")}}\n')
  // mise's config_root of pkg/.config/mise/config.toml is pkg.
  fs.writeFileSync(path.join(dir, 'pkg/.config/mise/config.toml'), '[env]\n_.source = { path = "{{config_root}}/tools/env.sh" }\n')
  const files = ['scripts/env.sh', '.env.shared.json', 'config/dev.env', 'scripts/enter.sh', 'scripts/version.sh', 'tools/node-version.sh', 'pkg/tools/env.sh'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'export X=1\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the files a project's mise configuration has mise run (_.source, _.file, hooks) cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    // (bin exists: in the Landlock mode a repository's top takes no new entries anyway.)
    await appendsKeptOrSaid(tree.ws, extra, miseProject(tree.ws), 'export X=1\n', 'echo ok > bin/tool; true')
    assert.equal(fs.readFileSync(path.join(tree.ws, 'bin/tool'), 'utf8'), 'ok\n', "a _.path directory stays writable (a build writes there, as PATH_add's)")
  })
}

test("review: a change set that rewrites a file a mise configuration has mise run is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  // Review reads the configurations at a top (pkg's below it is the direct runs' case).
  await reviewHoldsBack(tree.ws, miseProject(tree.ws).filter((p) => !p.includes('/pkg/')), 'touch /tmp/pwned')
})
