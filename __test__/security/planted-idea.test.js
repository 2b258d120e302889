'use strict'
// Found by an attacker's review (hostb37): the programs a JetBrains project's File Watchers run.
// `.idea` is a protected name, but a committed `.idea/watcherTasks.xml` names each watcher's
// program by a path (`$ProjectFileDir$/tools/fmt.sh`, or a script given to an interpreter in its
// `arguments`, a relative one from its `workingDir`) that stayed writable, as VS Code's settings'
// programs did before host35: the IDE runs the watcher whenever a matching file is saved (or
// changes on disk, with `runOnExternalChanges`), with no prompt once the project is trusted.
// No JetBrains IDE is installed here: the test runs what the watcher runs, the program with its
// arguments in its working directory.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { tempTree, changeSetStore } = require('./helpers')
const { appendsKeptOrSaid, reviewHoldsBack } = require('./kept-or-said')

changeSetStore('sandspawn-idea-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** `<option name="..." value="..." />` for each of `values` (a null one written bare), as the IDE writes them, `indent` before each. */
function options(values, indent) {
  return Object.entries(values).map(([k, v]) => `${indent}<option name="${k}"${v === null ? '' : ` value="${v}"`} />\n`).join('')
}

/** One watcher's `<TaskOptions>` as the IDE writes it. */
function watcher(name, program, args, workingDir, envs = '<envs />') {
  const before = { arguments: args, checkSyntaxErrors: 'true', description: null, exitCodeBehavior: 'ERROR', fileExtension: 'go', immediateSync: 'false', name, output: '$FilePath$' }
  const after = { outputFromStdout: 'false', program, runOnExternalChanges: 'true', scopeName: 'Project Files', trackOnlyRoot: 'false', workingDir }
  const filters = '      <option name="outputFilters">\n        <array />\n      </option>\n'
  return `    <TaskOptions isEnabled="true">\n${options(before, '      ')}${filters}${options(after, '      ')}      ${envs}\n    </TaskOptions>\n`
}

/** A project whose `.idea/watcherTasks.xml` runs programs of the workspace; returns them and the command lines the IDE runs. */
function watchersProject(dir) {
  for (const d of ['.idea', 'tools', 'scripts', 'sub/bin']) fs.mkdirSync(path.join(dir, d), { recursive: true })
  const envs = '<envs>\n        <env name="NODE_OPTIONS" value="--require=$ProjectFileDir$/scripts/hook.js" />\n      </envs>'
  fs.writeFileSync(path.join(dir, '.idea/watcherTasks.xml'), `<?xml version="1.0" encoding="UTF-8"?>
<project version="4">
  <component name="ProjectTasksOptions">
${watcher('fmt', '$ProjectFileDir$/tools/fmt.sh', '-w $FilePath$', '$ProjectFileDir$')}${watcher('lint', 'sh', 'scripts/lint.sh &quot;$FilePath$&quot;', '$ProjectFileDir$', envs)}${watcher('gen', 'bin/gen', '$FileName$', '$ProjectFileDir$/sub')}  </component>
</project>
`)
  const programs = ['tools/fmt.sh', 'scripts/lint.sh', 'scripts/hook.js', 'sub/bin/gen'].map((p) => path.join(dir, p))
  for (const p of programs) fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  const lines = [[`${programs[0]} -w x.go`, dir], ['sh scripts/lint.sh x.go', dir], ['./bin/gen x.go', path.join(dir, 'sub')]]
  return [programs, lines]
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs a project's .idea/watcherTasks.xml runs on save cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const [programs, lines] = watchersProject(tree.ws)
    const marker = path.join(tree.out, 'RAN')
    const r = await appendsKeptOrSaid(tree.ws, extra, programs, '#!/bin/sh\nexit 0\n', `echo 'echo ran >> ${marker}' >> ${programs[0]} 2>/dev/null; true`)
    // What the IDE runs when a .go file is saved: each watcher's program with its arguments.
    for (const [line, cwd] of lines) spawnSync('sh', ['-c', line], { cwd })
    const ran = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''
    assert.ok(ran === '' || r.hostRisks.length > 0, `saving a file ran the run's code with nothing said:\n${ran}`)
  })
}

// The same review: each such risk said git's words ("a repository's configuration includes it
// (include.path) ... git on the host reads it") whichever tool's configuration named the file.
test('review: a change set that rewrites a program a File Watcher runs is a risk, held back by apply, said as the editor\'s', async (t) => {
  const tree = tempTree(t, { git: true })
  const [programs] = watchersProject(tree.ws)
  const risks = await reviewHoldsBack(tree.ws, programs, 'touch /tmp/pwned')
  for (const p of programs) {
    const detail = risks.find((h) => h.path === p).detail
    assert.match(detail, /editor's project settings/, `${p}: ${detail}`)
    assert.doesNotMatch(detail, /include\.path/, `${p}: said with git's words`)
  }
})

// Found by an attacker's review (hostb37): the run configurations a JetBrains project's startup
// tasks run. A committed `.idea/startup.xml` (Settings | Tools | Startup Tasks, shared) lists run
// configurations the IDE starts as soon as the trusted project opens (ProjectStartupRunner), with
// no prompt; a shared run configuration lives in `.idea/runConfigurations/*.xml` or in
// `.run/*.run.xml`, and a Shell Script one names its script by path (`SCRIPT_PATH`
// `$PROJECT_DIR$/tools/setup.sh`) or holds it inline (`SCRIPT_TEXT`). A default run rewrote the
// scripts, and `.run/setup.run.xml` itself (`.run` is no protected name), with hostRisks [].
// (The IDE is not installed here: the test checks the files are kept or said.)

/** A Shell Script run configuration as the IDE stores it. */
function shConfiguration(name, script) {
  const values = {
    SCRIPT_TEXT: '', INDEPENDENT_SCRIPT_PATH: 'true', SCRIPT_PATH: script, SCRIPT_OPTIONS: '', INDEPENDENT_SCRIPT_WORKING_DIRECTORY: 'true', SCRIPT_WORKING_DIRECTORY: '$PROJECT_DIR$',
    INDEPENDENT_INTERPRETER_PATH: 'true', INTERPRETER_PATH: '/bin/bash', INTERPRETER_OPTIONS: '', EXECUTE_IN_TERMINAL: 'false', EXECUTE_SCRIPT_FILE: 'true',
  }
  return `<component name="ProjectRunConfigurationManager">\n  <configuration default="false" name="${name}" type="ShConfigurationType">\n${options(values, '    ')}    <envs />\n    <method v="2" />\n  </configuration>\n</component>\n`
}

/** A project whose startup tasks run two shared Shell Script configurations; returns what a run must not rewrite unsaid. */
function startupProject(dir) {
  for (const d of ['.idea/runConfigurations', '.run', 'tools']) fs.mkdirSync(path.join(dir, d), { recursive: true })
  fs.writeFileSync(path.join(dir, '.idea/startup.xml'), `<?xml version="1.0" encoding="UTF-8"?>
<project version="4">
  <component name="ProjectStartupSharedConfiguration">
    <configurations>
      <configuration id="Shell Script.setup" name="setup" />
      <configuration id="Shell Script.lint" name="lint" />
    </configurations>
  </component>
</project>
`)
  fs.writeFileSync(path.join(dir, '.run/setup.run.xml'), shConfiguration('setup', '$PROJECT_DIR$/tools/setup.sh'))
  fs.writeFileSync(path.join(dir, '.idea/runConfigurations/lint.xml'), shConfiguration('lint', '$PROJECT_DIR$/tools/lint.sh'))
  const scripts = ['tools/setup.sh', 'tools/lint.sh'].map((p) => path.join(dir, p))
  for (const p of scripts) fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  return scripts
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the scripts a project's startup tasks run, and its shared .run configuration, cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const scripts = startupProject(tree.ws)
    const config = path.join(tree.ws, '.run/setup.run.xml')
    const r = await appendsKeptOrSaid(tree.ws, extra, scripts, '#!/bin/sh\nexit 0\n', `sed -i 's|<option name="SCRIPT_TEXT" value="" />|<option name="SCRIPT_TEXT" value="touch /tmp/pwned" />|' ${config} 2>/dev/null; true`)
    const kept = !fs.readFileSync(config, 'utf8').includes('pwned')
    assert.ok(kept || r.hostRisks.some((h) => h.path === config), `${config} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
  })
}

// The same review: a local startup task lives in `.idea/workspace.xml` (ProjectStartupLocalConfiguration,
// the IDE's workspace file, which is not committed but is in the working tree), with the local
// run configuration it starts (RunManager); the script that one names was rewritten unsaid.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the script a local startup task of .idea/workspace.xml runs cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    for (const d of ['.idea', 'tools']) fs.mkdirSync(path.join(tree.ws, d))
    const run = shConfiguration('local', '$PROJECT_DIR$/tools/local.sh').replace('<component name="ProjectRunConfigurationManager">', '<component name="RunManager" selected="Shell Script.local">')
    fs.writeFileSync(path.join(tree.ws, '.idea/workspace.xml'), `<?xml version="1.0" encoding="UTF-8"?>
<project version="4">
  <component name="ChangeListManager">
    <list default="true" id="0b7c" name="Changes" comment="" />
  </component>
  <component name="ProjectStartupLocalConfiguration">
    <configurations>
      <configuration id="Shell Script.local" name="local" />
    </configurations>
  </component>
${run}</project>
`)
    const script = path.join(tree.ws, 'tools/local.sh')
    fs.writeFileSync(script, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    await appendsKeptOrSaid(tree.ws, extra, [script], '#!/bin/sh\nexit 0\n')
  })
}
