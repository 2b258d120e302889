'use strict'
// Found by an attacker's review (host38): the programs a project's dev container configuration has
// run on the host. `.devcontainer` and `.devcontainer.json` are protected names because
// `initializeCommand` "runs on the host machine during initialization, including during container
// creation and on subsequent starts" (containers.dev's reference; the Dev Containers extension, the
// devcontainer CLI's `up`, DevPod and Codespaces' local clients run it from the local workspace
// folder each time the folder opens in its container, with no prompt), but the script it named by
// path was left writable: `${localWorkspaceFolder}/tools/init.sh`, a `["bash", "scripts/prep.sh"]`
// of another configuration in a subfolder of `.devcontainer`, the commands of an object (run in
// parallel) of a package's `.devcontainer.json`. A default workspace-write run rewrote each with
// hostRisks [] (bwrap and the Landlock mode), and review's apply landed them. The other lifecycle
// commands (`postCreateCommand`, ...) run inside the container: the project's code, left writable.
// No container tool is installed here: the test runs what the host runs, the commands in the folder.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { sh, show, tempTree, changeSetStore } = require('./helpers')
const { appendsKeptOrSaid, reviewHoldsBack } = require('./kept-or-said')

changeSetStore('sandspawn-devcontainer-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/**
 * A project whose dev container configurations run programs on the host. Returns the programs
 * `initializeCommand` runs, what the host runs ([argv, cwd]: a string through sh -c, an array as
 * its argv, an object's each) and a program run in the container only.
 */
function devcontainerProject(dir) {
  for (const d of ['.devcontainer/py', 'tools', 'scripts', 'pkg/tools']) fs.mkdirSync(path.join(dir, d), { recursive: true })
  fs.writeFileSync(path.join(dir, '.devcontainer/devcontainer.json'), `// For format details, see https://aka.ms/devcontainer.json
{
  "name": "app",
  "image": "mcr.microsoft.com/devcontainers/base:bookworm",
  "initializeCommand": "\${localWorkspaceFolder}/tools/init.sh --quiet",
  "postCreateCommand": "./scripts/post.sh",
}
`)
  fs.writeFileSync(path.join(dir, '.devcontainer/py/devcontainer.json'), JSON.stringify({ name: 'py', image: 'python:3', initializeCommand: ['bash', 'scripts/prep.sh'] }))
  fs.writeFileSync(path.join(dir, 'pkg/.devcontainer.json'), JSON.stringify({ image: 'node:22', initializeCommand: { a: './tools/a.sh', b: ['sh', 'tools/b.sh'] } }))
  const onHost = ['tools/init.sh', 'scripts/prep.sh', 'pkg/tools/a.sh', 'pkg/tools/b.sh'].map((p) => path.join(dir, p))
  const inContainer = path.join(dir, 'scripts/post.sh')
  for (const p of [...onHost, inContainer]) fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  const runs = [[['sh', '-c', `${onHost[0]} --quiet`], dir], [['bash', 'scripts/prep.sh'], dir], [['sh', '-c', './tools/a.sh'], path.join(dir, 'pkg')], [['sh', 'tools/b.sh'], path.join(dir, 'pkg')]]
  return [onHost, runs, inContainer]
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs a dev container's initializeCommand runs on the host cannot be rewritten unsaid; the container's own commands stay the project's`, async (t) => {
    const tree = tempTree(t, { git: true })
    const marker = path.join(tree.out, 'RAN')
    const [onHost, runs, inContainer] = devcontainerProject(tree.ws)
    const before = onHost.map((p) => fs.readFileSync(p, 'utf8'))
    const evil = `#!/bin/sh\necho "$0" >> ${marker}\n`
    const script = onHost.map((p) => `printf '%s' '${evil}' > ${p} 2>/dev/null`).join('; ') + `; echo 'exit 3' >> ${inContainer}`
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, `a command run in the container is the project's own code, which stays writable: ${show(r)}`)
    assert.match(fs.readFileSync(inContainer, 'utf8'), /exit 3/)
    onHost.forEach((p, i) => {
      const kept = fs.readFileSync(p, 'utf8') === before[i]
      assert.ok(kept || r.hostRisks.some((h) => h.path === p), `${p} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
    })
    // What the host runs when the folder opens in its container.
    for (const [[cmd, ...args], cwd] of runs) spawnSync(cmd, args, { cwd })
    const ran = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''
    assert.ok(ran === '' || r.hostRisks.length > 0, `opening the folder in its container ran the run's code on the host with nothing said:\n${ran}`)
  })
}

test('review: a change set that rewrites a program a dev container runs on the host is a risk, held back by apply', async (t) => {
  const tree = tempTree(t, { git: true })
  const [onHost] = devcontainerProject(tree.ws)
  // Review judges the configurations at a root's top (the package's below it is not read there).
  const risks = await reviewHoldsBack(tree.ws, onHost.slice(0, 2), 'id')
  assert.ok(risks.some((h) => /editor/.test(h.detail)), JSON.stringify(risks))
})

// Found by an attacker's review (host39): an initializeCommand that hands a script of the
// workspace's top to an interpreter by its bare name (`bash init.sh`, ["sh", "-e", "prep.sh"],
// `python3 setup_host.py`) runs it on the host from the local workspace folder as one with a `/`
// does, but only words holding a `/` were kept: a default run rewrote each with hostRisks []
// (bwrap and the Landlock mode), and review's apply landed them.
function bareScriptProject(dir) {
  fs.mkdirSync(path.join(dir, '.devcontainer/py'), { recursive: true })
  fs.writeFileSync(path.join(dir, '.devcontainer/devcontainer.json'), '{ "image": "debian", "initializeCommand": "bash init.sh && python3 -u setup_host.py" }\n')
  fs.writeFileSync(path.join(dir, '.devcontainer/py/devcontainer.json'), JSON.stringify({ image: 'python:3', initializeCommand: { a: ['sh', '-e', 'prep.sh'] } }))
  const files = ['init.sh', 'setup_host.py', 'prep.sh'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'true\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the scripts a dev container's initializeCommand hands an interpreter by a bare name cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, bareScriptProject(tree.ws), 'true\n')
  })
}

test("review: a change set that rewrites a script a dev container's initializeCommand names by a bare name is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, bareScriptProject(tree.ws), 'touch /tmp/pwned')
})

// Found by an attacker's review (hostb39): the compose files a dev container's `dockerComposeFile`
// names (a string or a list, each from the configuration's own directory: `../docker-compose.yml`
// is the workspace's top) are what the Dev Containers extension, `devcontainer up` and DevPod hand
// `docker compose -f` on the host when the folder opens in its container: a service's
// `privileged: true`, `pid: host` or a volume of `/` is granted by the host's Docker daemon, the
// configuration's own `privileged`, `runArgs` and `mounts` by another name. Those are kept with
// the protected `.devcontainer`, but a compose file outside it was left writable: a default run
// appended to each with hostRisks [] (bwrap and the Landlock mode), and review's apply landed it.
function composeProject(dir) {
  for (const d of ['.devcontainer/py', 'deploy', 'pkg']) fs.mkdirSync(path.join(dir, d), { recursive: true })
  fs.writeFileSync(path.join(dir, '.devcontainer/devcontainer.json'), '{ "name": "app", "dockerComposeFile": ["../docker-compose.yml", "docker-compose.extend.yml"], "service": "app", "workspaceFolder": "/workspaces/${localWorkspaceFolderBasename}" }\n')
  fs.writeFileSync(path.join(dir, '.devcontainer/py/devcontainer.json'), JSON.stringify({ dockerComposeFile: '../../deploy/compose.yaml', service: 'py' }))
  fs.writeFileSync(path.join(dir, 'pkg/.devcontainer.json'), JSON.stringify({ dockerComposeFile: 'docker-compose.yml', service: 'pkg' }))
  const files = ['docker-compose.yml', 'deploy/compose.yaml', 'pkg/docker-compose.yml'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'services:\n  app:\n    image: debian\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the compose files a dev container's dockerComposeFile names cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    // Another compose file no configuration names stays the project's (in a directory of its
    // own: in the Landlock mode a directory holding a kept file takes no new entries).
    const other = path.join(tree.ws, 'ops/compose.prod.yaml')
    const files = composeProject(tree.ws)
    fs.mkdirSync(path.dirname(other))
    fs.writeFileSync(other, 'services: {}\n')
    await appendsKeptOrSaid(tree.ws, extra, files, 'services:\n  app:\n    image: debian\n', `echo '    privileged: true' >> ${other}`)
    assert.match(fs.readFileSync(other, 'utf8'), /privileged/, 'a compose file no dev container names stays writable')
  })
}

test("review: a change set that rewrites a compose file a dev container's dockerComposeFile names is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, composeProject(tree.ws).slice(0, 2), '    privileged: true')
})

// Found by an attacker's review (host40; left by hostb39): what a kept compose file pulls in from
// other files, its top-level `include` (each entry's `path`, a string or a list, from the
// including file's directory) and a service's `extends.file`, is merged into the project `docker
// compose -f` starts on the host when the folder opens in its container: an included service's
// `privileged: true` or a volume of `/` is granted by the host's Docker daemon as the named file's
// own is. Only the named files were kept: a default run appended to each file they pull in, through
// an include of an include too, with hostRisks [] (bwrap and the Landlock mode), review's apply
// landed them.
function composeIncludeProject(dir) {
  for (const d of ['.devcontainer', 'services/db', 'common', 'more']) fs.mkdirSync(path.join(dir, d), { recursive: true })
  fs.writeFileSync(path.join(dir, '.devcontainer/devcontainer.json'), JSON.stringify({ dockerComposeFile: '../docker-compose.yml', service: 'app' }))
  fs.writeFileSync(path.join(dir, 'docker-compose.yml'), `include:
  - services/db/compose.yaml   # the database
  - path:
      - "./more/a.yml"
    project_directory: .
  - { path: 'more/b.yml' }
services:
  app:
    extends:
      file: common/base.yml
      service: base
  web:
    extends: { file: ./common/web.yml, service: web }
    volumes:
      - ./src:/src
`)
  fs.writeFileSync(path.join(dir, 'services/db/compose.yaml'), 'include: [../../common/deep.yaml]\nservices:\n  db:\n    image: postgres\n')
  const files = ['services/db/compose.yaml', 'more/a.yml', 'more/b.yml', 'common/base.yml', 'common/web.yml', 'common/deep.yaml'].map((p) => path.join(dir, p))
  for (const f of files.slice(1)) fs.writeFileSync(f, 'services:\n  base:\n    image: debian\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the files a dev container's compose file includes or extends cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const [db, ...rest] = composeIncludeProject(tree.ws)
    const was = fs.readFileSync(db, 'utf8')
    const r = await appendsKeptOrSaid(tree.ws, extra, rest, 'services:\n  base:\n    image: debian\n', `echo '    privileged: true' >> ${db} 2>/dev/null; true`)
    assert.ok(fs.readFileSync(db, 'utf8') === was || r.hostRisks.some((h) => h.path === db), `${db} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
  })
}

test("review: a change set that rewrites a file a dev container's compose file includes is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, composeIncludeProject(tree.ws).slice(0, 2), '    privileged: true')
})

// Found by an attacker's review (host41; host40 left "a service's env_file" unread): a service's
// `env_file` is only passed into its container's environment (Compose reads it on the host, takes
// no setting of its own from it and interpolates nothing with it: it held), but an include's
// `env_file` is what the included file is interpolated with, so `volumes: - ${DATA:-./data}:/data`
// there mounts the host's `/` once the run appends `DATA=/` to it. A default run rewrote
// `config/db.env` (block form) and `config/web.env` (a flow mapping's) with hostRisks [] (bwrap
// and the Landlock mode), review's apply landed them.
function composeEnvFileProject(dir) {
  for (const d of ['.devcontainer', 'services', 'config']) fs.mkdirSync(path.join(dir, d), { recursive: true })
  fs.writeFileSync(path.join(dir, '.devcontainer/devcontainer.json'), JSON.stringify({ dockerComposeFile: '../compose.yaml', service: 'app' }))
  fs.writeFileSync(path.join(dir, 'compose.yaml'), `include:
  - path: services/db.yaml
    env_file:
      - config/db.env
  - { path: services/web.yaml, env_file: ./config/web.env }
services:
  app:
    image: debian
    env_file: config/app.env
`)
  fs.writeFileSync(path.join(dir, 'services/db.yaml'), 'services:\n  db:\n    image: postgres\n    volumes:\n      - ${DATA:-./data}:/data\n')
  fs.writeFileSync(path.join(dir, 'services/web.yaml'), 'services:\n  web:\n    image: nginx\n    privileged: ${PRIV:-false}\n')
  const files = ['config/db.env', 'config/web.env'].map((p) => path.join(dir, p))
  for (const f of [...files, path.join(dir, 'config/app.env')]) fs.writeFileSync(f, 'X=1\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the env files a dev container's compose file interpolates an include with cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    await appendsKeptOrSaid(tree.ws, extra, composeEnvFileProject(tree.ws), 'X=1\n')
  })
}

test("review: a change set that rewrites an include's env file is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, composeEnvFileProject(tree.ws), 'DATA=/')
})
