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

changeSetStore('sandspawn-idea-watchers-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** One watcher's `<TaskOptions>` as the IDE writes it. */
function watcher(name, program, args, workingDir, envs = '<envs />') {
  return `    <TaskOptions isEnabled="true">
      <option name="arguments" value="${args}" />
      <option name="checkSyntaxErrors" value="true" />
      <option name="description" />
      <option name="exitCodeBehavior" value="ERROR" />
      <option name="fileExtension" value="go" />
      <option name="immediateSync" value="false" />
      <option name="name" value="${name}" />
      <option name="output" value="$FilePath$" />
      <option name="outputFilters">
        <array />
      </option>
      <option name="outputFromStdout" value="false" />
      <option name="program" value="${program}" />
      <option name="runOnExternalChanges" value="true" />
      <option name="scopeName" value="Project Files" />
      <option name="trackOnlyRoot" value="false" />
      <option name="workingDir" value="${workingDir}" />
      ${envs}
    </TaskOptions>
`
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
