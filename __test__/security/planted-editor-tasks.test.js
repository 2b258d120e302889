'use strict'
// Found by an attacker's review (host36): the programs a project's `.vscode/tasks.json` has VS Code
// run when the folder opens. `.vscode` is a protected name, and since host35 the programs its
// `settings.json` names are kept, but a committed task with `"runOptions": { "runOn": "folderOpen" }`
// (VS Code starts it as soon as the trusted folder opens, with no prompt; Cursor and Windsurf read
// the same file) named its program by a path the run could rewrite: `tools/bootstrap.sh`, or the
// script an interpreter is given in `args` (`"command": "node", "args": ["scripts/watch.js"]`), or
// a task it `dependsOn`. A default workspace-write run rewrote each with hostRisks [] (bwrap and
// the Landlock mode), and the editor's next open of the folder ran it. VS Code is not installed
// here: the test runs what the task runs, the command with its arguments in the folder.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { sh, show, tempTree, sandspawn, changeSetStore } = require('./helpers')

changeSetStore('sandspawn-editor-tasks-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** A project whose tasks.json runs programs when the folder opens; returns [run on open, not]. */
function tasksProject(dir) {
  fs.mkdirSync(path.join(dir, '.vscode'), { recursive: true })
  for (const d of ['tools', 'scripts']) fs.mkdirSync(path.join(dir, d))
  fs.writeFileSync(path.join(dir, '.vscode/tasks.json'), `{
  // See https://go.microsoft.com/fwlink/?LinkId=733558
  "version": "2.0.0",
  "tasks": [
    {
      "label": "bootstrap",
      "type": "shell",
      "command": "\${workspaceFolder}/tools/bootstrap.sh --quiet",
      "dependsOn": ["watch"],
      "runOptions": { "runOn": "folderOpen" },
    },
    { "label": "watch", "type": "process", "command": "sh", "args": ["scripts/watch.sh", "--poll"], "isBackground": true },
    { "label": "env", "type": "shell", "command": "true", "linux": { "command": "./tools/env-check" }, "runOptions": { "runOn": "folderOpen" } },
    { "label": "deploy", "type": "shell", "command": "./tools/deploy.sh" },
  ],
}
`)
  const onOpen = ['tools/bootstrap.sh', 'scripts/watch.sh', 'tools/env-check'].map((p) => path.join(dir, p))
  const other = path.join(dir, 'tools/deploy.sh')
  for (const p of [...onOpen, other]) fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  return [onOpen, other]
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs a project's .vscode/tasks.json runs when the folder opens cannot be rewritten unsaid; a task run on demand stays the project's`, async (t) => {
    const tree = tempTree(t, { git: true })
    const marker = path.join(tree.out, 'RAN')
    const [onOpen, other] = tasksProject(tree.ws)
    const before = onOpen.map((p) => fs.readFileSync(p, 'utf8'))
    const evil = `#!/bin/sh\necho "$0" >> ${marker}\n`
    const script = onOpen.map((p) => `printf '%s' '${evil}' > ${p} 2>/dev/null`).join('; ') + `; echo 'exit 3' >> ${other}`
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, `a task run on demand names the project's own code, which stays writable: ${show(r)}`)
    assert.match(fs.readFileSync(other, 'utf8'), /exit 3/)
    onOpen.forEach((p, i) => {
      const kept = fs.readFileSync(p, 'utf8') === before[i]
      const said = r.hostRisks.some((h) => h.path === p)
      assert.ok(kept || said, `${p} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
    })
    // What VS Code runs when the folder opens: the folderOpen tasks and what they depend on, in
    // the folder (a shell task through sh -c, a process task as its argv).
    for (const cmd of [`${onOpen[0]} --quiet`, 'sh scripts/watch.sh --poll', './tools/env-check']) spawnSync('sh', ['-c', cmd], { cwd: tree.ws })
    const ran = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''
    assert.ok(ran === '' || r.hostRisks.length > 0, `opening the folder ran the run's code with nothing said:\n${ran}`)
  })
}

/**
 * A default workspace-write run (`extra`'s mode) in `tree` rewrites each of `programs` to append
 * its name to a marker; each must be kept or named in hostRisks, and the command lines `lines`
 * ([line, cwd], what the editor runs when the folder opens, through sh -c) must run none of the
 * run's code unsaid.
 */
async function rewriteKeptOrSaid(tree, programs, lines, extra) {
  const marker = path.join(tree.out, 'RAN')
  const before = programs.map((p) => fs.readFileSync(p, 'utf8'))
  const evil = `#!/bin/sh\necho "$0" >> ${marker}\n`
  const r = await sh(programs.map((p) => `printf '%s' '${evil}' > ${p} 2>/dev/null`).join('; ') + '; true', { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
  assert.equal(r.exitCode, 0, show(r))
  programs.forEach((p, i) => {
    const kept = fs.readFileSync(p, 'utf8') === before[i]
    assert.ok(kept || r.hostRisks.some((h) => h.path === p), `${p} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
  })
  for (const [line, cwd] of lines) spawnSync('sh', ['-c', line], { cwd })
  const ran = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''
  assert.ok(ran === '' || r.hostRisks.length > 0, `opening the folder ran the run's code with nothing said:\n${ran}`)
}

/** A project whose committed `proj.code-workspace` names programs in its settings and tasks. */
function workspaceFileProject(dir) {
  fs.mkdirSync(path.join(dir, 'tools'))
  fs.writeFileSync(path.join(dir, 'proj.code-workspace'), `{
  "folders": [{ "path": "." }],
  "settings": { "clangd.path": "tools/clangd" },
  "tasks": { "version": "2.0.0", "tasks": [{ "label": "up", "type": "shell", "command": "./tools/up.sh", "runOptions": { "runOn": "folderOpen" } }] },
}
`)
  const programs = ['tools/clangd', 'tools/up.sh'].map((p) => path.join(dir, p))
  for (const p of programs) fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  return programs
}

// The same review: VS Code's `*.code-workspace` (report-only when it changes) gives settings and
// folder-open tasks as `.vscode` does; the programs a committed one named were rewritten unsaid.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs a project's *.code-workspace names in its settings and folder-open tasks cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const programs = workspaceFileProject(tree.ws)
    await rewriteKeptOrSaid(tree, programs, programs.map((p) => [`${p} --version`, tree.ws]), extra)
  })
}

test('review: a change set that rewrites a program a folder-open task runs is a risk, held back by apply', async (t) => {
  const tree = tempTree(t, { git: true })
  const [onOpen] = tasksProject(tree.ws)
  const before = onOpen.map((p) => fs.readFileSync(p, 'utf8'))
  const script = onOpen.map((p) => `echo 'id' >> ${p}`).join('; ') + '; echo ok > lib.txt'
  const r = await sandspawn.spawnSandboxed(['sh', '-c', script], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.ok(r.changeSet, show(r))
  for (const p of onOpen) assert.ok(r.changeSet.hostRisks.some((h) => h.path === p), `${p}: ${JSON.stringify(r.changeSet.hostRisks)}`)
  await sandspawn.applyChangeSet(r.changeSet.id, {})
  onOpen.forEach((p, i) => assert.equal(fs.readFileSync(p, 'utf8'), before[i], `${p} landed`))
  assert.equal(fs.readFileSync(path.join(tree.ws, 'lib.txt'), 'utf8'), 'ok\n', 'the rest of the set landed')
})

/** A tasks.json whose folder-open tasks run programs by spellings VS Code's parser accepts (rev36):
 * a task with no command of its own takes the file's top-level `command` and `args` (VS Code's
 * CustomTask.fillGlobals, when it has no dependsOn), a `dependsOn` names a task by its
 * `identifier` (Task.matches: the label or the identifier), and a platform's own `tasks` list
 * (`linux.tasks`, parsed beside `tasks`). Returns the programs run when the folder opens. */
function spelledTasksProject(dir) {
  fs.mkdirSync(path.join(dir, '.vscode'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'tools'))
  fs.writeFileSync(path.join(dir, '.vscode/tasks.json'), `{
  "version": "2.0.0",
  "command": "./tools/global.sh",
  "args": ["--fast"],
  "linux": { "tasks": [{ "label": "l", "type": "shell", "command": "./tools/linux-only.sh", "runOptions": { "runOn": "folderOpen" } }] },
  "tasks": [
    { "label": "up", "runOptions": { "runOn": "folderOpen" } },
    { "label": "chain", "type": "shell", "command": "true", "dependsOn": "prep-id", "runOptions": { "runOn": "folderOpen" } },
    { "label": "Prepare things", "identifier": "prep-id", "type": "shell", "command": "./tools/prep.sh" },
  ],
}
`)
  const onOpen = ['tools/global.sh', 'tools/prep.sh', 'tools/linux-only.sh'].map((p) => path.join(dir, p))
  for (const p of onOpen) fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  return onOpen
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: a folder-open task's program named by the file's global command, a dependsOn by identifier or a platform's tasks list cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    // What VS Code runs when the folder opens: 'up' as the global command with its args, 'chain'
    // after 'Prepare things', and the Linux list's task.
    const lines = ['./tools/global.sh --fast', './tools/prep.sh', './tools/linux-only.sh'].map((l) => [l, tree.ws])
    await rewriteKeptOrSaid(tree, spelledTasksProject(tree.ws), lines, extra)
  })
}

/** Folder-open tasks whose programs stand where a shell, not a blank, ends the word (rev36):
 * after `;` and `&&`, inside `$(...)` and quotes; and one run from the task's `options.cwd`.
 * Returns the programs run when the folder opens and the command lines VS Code runs (in `dir`). */
function shellWordsProject(dir) {
  fs.mkdirSync(path.join(dir, '.vscode'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'tools'))
  const open = (label, rest) => ({ label, runOptions: { runOn: 'folderOpen' }, ...rest })
  fs.writeFileSync(path.join(dir, '.vscode/tasks.json'), JSON.stringify({ version: '2.0.0', tasks: [
    open('a', { type: 'shell', command: 'true;./tools/semi.sh' }),
    open('b', { type: 'shell', command: 'test -d .git&&tools/and.sh|cat' }),
    open('c', { type: 'shell', command: 'echo $(tools/sub.sh)' }),
    open('d', { type: 'shell', command: "sh -c './tools/quoted.sh'" }),
    open('e', { type: 'process', command: './in-cwd.sh', options: { cwd: '${workspaceFolder}/tools' } }),
  ] }, null, 2))
  const programs = ['semi.sh', 'and.sh', 'sub.sh', 'quoted.sh', 'in-cwd.sh'].map((p) => path.join(dir, 'tools', p))
  for (const p of programs) fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  const lines = [['true;./tools/semi.sh', dir], ['test -d .git&&tools/and.sh|cat', dir], ['echo $(tools/sub.sh)', dir], ["sh -c './tools/quoted.sh'", dir], ['./in-cwd.sh', path.join(dir, 'tools')]]
  return [programs, lines]
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: a folder-open task's program after a shell operator, in $(...) or quotes, or run from its options.cwd cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const [programs, lines] = shellWordsProject(tree.ws)
    await rewriteKeptOrSaid(tree, programs, lines, extra)
  })
}

/** Folder-open tasks whose program's path the shell glues from quoted and unquoted parts, or
 * unescapes (rev37, attacking rev36's word splitting): `./tools/'glued'.sh`, `tools/"dq".sh`,
 * `tools/bs\.sh` run tools/glued.sh, tools/dq.sh and tools/bs.sh. */
function gluedWordsProject(dir) {
  fs.mkdirSync(path.join(dir, '.vscode'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'tools'))
  const lines = ["./tools/'glued'.sh", 'tools/"dq".sh --x', 'true && tools/bs\\.sh']
  const tasks = lines.map((command, i) => ({ label: `t${i}`, type: 'shell', command, runOptions: { runOn: 'folderOpen' } }))
  fs.writeFileSync(path.join(dir, '.vscode/tasks.json'), JSON.stringify({ version: '2.0.0', tasks }, null, 2))
  const programs = ['glued.sh', 'dq.sh', 'bs.sh'].map((p) => path.join(dir, 'tools', p))
  for (const p of programs) fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  return [programs, lines.map((l) => [l, dir])]
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: a folder-open task's program the shell glues from quoted parts or unescapes cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const [programs, lines] = gluedWordsProject(tree.ws)
    await rewriteKeptOrSaid(tree, programs, lines, extra)
  })
}
