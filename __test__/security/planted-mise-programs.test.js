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
const { tempTree, changeSetStore, sh, show } = require('./helpers')
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

// Found by an attacker's review (revc37): what mise's hooks run beyond a word holding a '/' in a
// command's place. A hook may name a task (`enter = { task = "setup" }`, mise's docs/hooks.md
// "Task hooks"; mise runs `mise --cd <root> run setup`, with its `depends`, at the prompt), a
// current-shell hook's script is printed into the user's own shell (`shell = "bash"`, `script =
// "source completions.sh"`, the docs' own example), hooks spell the project's directory
// `$MISE_PROJECT_ROOT` and `$MISE_CONFIG_ROOT` (set for them), and `[[watch_files]]` runs its
// command or task at the prompt after a watched file changed (which the run itself can do). Each
// was left writable: a default run rewrote them with hostRisks []. So were a [vars] _.source
// (vars take [env]'s directives) and [settings] env_file (a dotenv mise loads at the prompt).
function miseHooksProject(dir) {
  for (const d of ['scripts', 'mise-tasks', 'target/release', 'src']) fs.mkdirSync(path.join(dir, d), { recursive: true })
  fs.writeFileSync(path.join(dir, 'mise.toml'), [
    '[tasks.setup]',
    'run = "./scripts/setup.sh"',
    'depends = ["deps"]',
    '[tasks.deps]',
    'file = "scripts/deps.sh"',
    '[tasks.release]',
    'run = "./target/release/app"',
    '[hooks]',
    'enter = [{ task = "setup" }, { task = "gen" }, { shell = "bash", script = "source completions.sh" }]',
    'cd = "\\"$MISE_PROJECT_ROOT\\"/scripts/cd.sh"',
    'leave = "${MISE_CONFIG_ROOT}/scripts/leave.sh"',
    '[[watch_files]]',
    'patterns = ["src/**/*.rs"]',
    'run = "./scripts/fmt.sh"',
    // [vars] takes [env]'s directives (mise's docs/configuration/vars.md): its _.source runs with
    // bash whenever the configuration loads; [settings] env_file is a dotenv mise loads too.
    '[vars]',
    '_.source = "scripts/vars.sh"',
    '[settings]',
    'env_file = "config/dev.env"',
    '',
  ].join('\n'))
  fs.mkdirSync(path.join(dir, 'config'))
  const files = ['scripts/setup.sh', 'scripts/deps.sh', 'mise-tasks/gen', 'completions.sh', 'scripts/cd.sh', 'scripts/leave.sh', 'scripts/fmt.sh', 'scripts/vars.sh', 'config/dev.env'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'export X=1\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: what a mise hook runs through a task, a current-shell script, $MISE_PROJECT_ROOT or watch_files cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, miseHooksProject(tree.ws), 'export X=1\n', 'echo ok > target/release/app; true')
    assert.equal(fs.readFileSync(path.join(tree.ws, 'target/release/app'), 'utf8'), 'ok\n', 'a task no hook runs stays writable (a build writes there)')
  })
}

// Found by an attacker's review (rev38): mise's exec takes cache_key and cache_duration beside
// command (docs/templates.md, "Exec Options"; src/tera.rs, tera_exec), in any order, and Tera
// allows blanks before a call's '(': exec(cache_key='v', command='./scripts/a.sh') and
// exec (command='scripts/b.sh') ran their scripts at each prompt, and a default run rewrote both
// with hostRisks []. A command Tera builds (a variable, '~' joining strings) cannot be read: the
// configuration is named in notEnforced, as one not read whole.
/** Writes `texts` (relative name to text) and each of `scripts` (export X=1) below `dir`; returns the scripts' paths. */
function writeProject(dir, texts, scripts) {
  for (const [name, text] of Object.entries(texts).concat(scripts.map((f) => [f, 'export X=1\n']))) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), text)
  }
  return scripts.map((p) => path.join(dir, p))
}

function miseExecProject(dir) {
  const config = "[env]\nA = \"{{ exec(cache_key='a', cache_duration='1h', command='./scripts/a.sh') }}\"\nB = \"{{ exec (command='scripts/b.sh') }}\"\n"
  const toolVersions = "node {{ exec(cache_key=\"n\", command='scripts/node.sh') }}\n"
  return writeProject(dir, { 'mise.toml': config, '.tool-versions': toolVersions }, ['scripts/a.sh', 'scripts/b.sh', 'scripts/node.sh'])
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: what a mise template's exec runs, its command after other arguments or a blank, cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, miseExecProject(tree.ws), 'export X=1\n')
  })
}

test('a mise template whose exec command Tera builds names the configuration in notEnforced', async (t) => {
  const tree = tempTree(t, { git: true })
  writeProject(tree.ws, { 'mise.toml': "[env]\nC = \"{% set c = 'scripts/c.sh' %}{{ exec(command=c) }}\"\n" }, ['scripts/c.sh'])
  const r = await sh("echo 'touch /tmp/pwned' >> scripts/c.sh", { cwd: tree.ws, sandbox: { mode: 'workspace-write' } })
  assert.equal(r.exitCode, 0, show(r))
  const kept = fs.readFileSync(path.join(tree.ws, 'scripts/c.sh'), 'utf8') === 'export X=1\n'
  assert.ok(kept || r.sandboxDetails.notEnforced.some((n) => n.includes('mise.toml')), JSON.stringify(r.sandboxDetails.notEnforced))
})

// Found by an attacker's review (rev38): a hook, a watch or a hooked task that runs a task through
// mise's command line (enter = "mise run setup", the way a task is run by hand; `mise r fmt`; a
// task's run = "mise run gen ::: lint", which runs both) or names a task by its alias
// (cd = { task = "b" }, [tasks.bootstrap] alias = "b": mise run resolves aliases) ran what that
// task runs at the prompt, and a default run rewrote it with hostRisks []: only { task = ... }
// by its own name was read.
function miseRunProject(dir) {
  const config = [
    '[tasks.setup]', 'run = "./scripts/setup.sh"', '[tasks.fmt]', 'run = "scripts/fmt.sh"',
    '[tasks.deps]', 'run = "mise run gen ::: lint"', '[tasks.lint]', 'run = "tools/lint.sh"',
    '[tasks.bootstrap]', 'alias = "b"', 'run = "./scripts/boot.sh"',
    '[hooks]', 'enter = "mise run setup"', 'leave = "mise run --quiet deps"', 'cd = { task = "b" }',
    '[[watch_files]]', 'patterns = ["src/**/*.rs"]', 'run = "mise r fmt --check"', '',
  ].join('\n')
  return writeProject(dir, { 'mise.toml': config }, ['scripts/setup.sh', 'scripts/fmt.sh', 'mise-tasks/gen', 'tools/lint.sh', 'scripts/boot.sh'])
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: what a mise hook runs through 'mise run' or a task's alias cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, miseRunProject(tree.ws), 'export X=1\n')
  })
}

// Found by an attacker's review (host39): mise's shorthand `mise <task>` (a task name that is no
// subcommand of mise's: `mise setup`, as mise's docs run tasks) and `mise watch <task>` (`mise w`),
// which runs the task again on each change, in a hook or a watch ran that task at the prompt, and a
// default run rewrote what it ran with hostRisks []: only `mise run` (`r`, `tasks run`) was read.
function miseShorthandProject(dir) {
  const config = [
    '[tasks.setup]', 'run = "./scripts/setup.sh"', '[tasks.dev]', 'run = "scripts/dev.sh"',
    '[hooks]', 'enter = "mise --quiet setup"', 'cd = "mise w dev"', '',
  ].join('\n')
  return writeProject(dir, { 'mise.toml': config }, ['scripts/setup.sh', 'scripts/dev.sh'])
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: what a mise hook runs through mise's shorthand 'mise <task>' or 'mise watch' cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, miseShorthandProject(tree.ws), 'export X=1\n')
  })
}

// Found by an attacker's review (rev38): [task_config] includes names the task files and
// file-task directories mise takes tasks from (docs/tasks/task-configuration.md, its own example:
// includes = ["tasks.toml", "mytasks"]): a hook's task defined there (enter = { task = "setup" }
// with tasks.toml's [setup] run = "./scripts/setup.sh", cd = { task = "gen" } as mytasks/gen)
// ran at the prompt, and a default run rewrote both with hostRisks [].
function miseIncludesProject(dir) {
  const config = '[task_config]\nincludes = ["tasks.toml", "mytasks"]\n[hooks]\nenter = { task = "setup" }\ncd = { task = "gen" }\n'
  return writeProject(dir, { 'mise.toml': config, 'tasks.toml': '[setup]\nrun = "./scripts/setup.sh"\n' }, ['scripts/setup.sh', 'mytasks/gen'])
}

test("bwrap: what a mise hook's task in a [task_config] includes file or directory runs cannot be rewritten unsaid", async (t) => {
  const tree = tempTree(t, { git: true })
  const files = miseIncludesProject(tree.ws)
  const r = await sh(files.map((p) => `echo 'touch /tmp/pwned' >> ${p} 2>/dev/null`).join('; ') + '; true', { cwd: tree.ws, sandbox: { mode: 'workspace-write' } })
  assert.equal(r.exitCode, 0, show(r))
  for (const p of files) {
    const kept = fs.readFileSync(p, 'utf8') === 'export X=1\n'
    const said = r.hostRisks.some((h) => h.path === p) || r.sandboxDetails.notEnforced.some((n) => n.includes('mise.toml'))
    assert.ok(kept || said, `${p} rewritten with nothing said: ${JSON.stringify([r.hostRisks, r.sandboxDetails.notEnforced])}`)
  }
})
