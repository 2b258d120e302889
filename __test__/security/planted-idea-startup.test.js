'use strict'
// Found by an attacker's review (hostb37): the run configurations a JetBrains project's startup
// tasks run. A committed `.idea/startup.xml` (Settings | Tools | Startup Tasks, shared) lists run
// configurations the IDE starts as soon as the trusted project opens (ProjectStartupRunner), with
// no prompt; a shared run configuration lives in `.idea/runConfigurations/*.xml` or in
// `.run/*.run.xml`, and a Shell Script one names its script by path (`SCRIPT_PATH`
// `$PROJECT_DIR$/tools/setup.sh`) or holds it inline (`SCRIPT_TEXT`). A default run rewrote the
// scripts, and `.run/setup.run.xml` itself (`.run` is no protected name), with hostRisks [].
// No JetBrains IDE is installed here: the test runs what the configurations run.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { tempTree } = require('./helpers')
const { appendsKeptOrSaid } = require('./kept-or-said')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** A Shell Script run configuration as the IDE stores it. */
function shConfiguration(name, script) {
  return `<component name="ProjectRunConfigurationManager">
  <configuration default="false" name="${name}" type="ShConfigurationType">
    <option name="SCRIPT_TEXT" value="" />
    <option name="INDEPENDENT_SCRIPT_PATH" value="true" />
    <option name="SCRIPT_PATH" value="${script}" />
    <option name="SCRIPT_OPTIONS" value="" />
    <option name="INDEPENDENT_SCRIPT_WORKING_DIRECTORY" value="true" />
    <option name="SCRIPT_WORKING_DIRECTORY" value="$PROJECT_DIR$" />
    <option name="INDEPENDENT_INTERPRETER_PATH" value="true" />
    <option name="INTERPRETER_PATH" value="/bin/bash" />
    <option name="INTERPRETER_OPTIONS" value="" />
    <option name="EXECUTE_IN_TERMINAL" value="false" />
    <option name="EXECUTE_SCRIPT_FILE" value="true" />
    <envs />
    <method v="2" />
  </configuration>
</component>
`
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
