'use strict'
// Found by an attacker's review (host33): the programs a protected tool configuration names by
// path. `.cargo` is a protected name (its config.toml's `rustc-wrapper`, `runner` and linkers run
// programs), and git's `core.fsmonitor = tools/fsmon` is kept read-only as the program a
// repository's configuration names; but a project's committed `.cargo/config.toml` naming
// `rustc-wrapper = "tools/wrap.sh"` (sccache-style wrappers, a `runner` for an embedded target, a
// linker script) left `tools/wrap.sh` writable and unreported: a default workspace-write run
// rewrote it with hostRisks [], and the host's next `cargo metadata` (what rust-analyzer runs when
// an editor opens the folder; no build script, no project code) ran it (cargo 1.9x). The same in
// a package's own `.cargo` below the top (cargo reads every ancestor's of its cwd).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { sh, show, tempTree, which, sandspawn, changeSetStore } = require('./helpers')
const { appendsKeptOrSaid, reviewHoldsBack } = require('./kept-or-said')

changeSetStore('sandspawn-tool-programs-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** A cargo project at `dir` whose `.cargo/config.toml` names `tools/*` programs; returns them. */
function project(dir) {
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true })
  fs.mkdirSync(path.join(dir, '.cargo'))
  fs.mkdirSync(path.join(dir, 'tools'))
  fs.writeFileSync(path.join(dir, 'Cargo.toml'), `[package]\nname = "p${path.basename(dir).replace(/\W/g, '')}"\nversion = "0.1.0"\nedition = "2021"\n`)
  fs.writeFileSync(path.join(dir, 'src/main.rs'), 'fn main() {}\n')
  fs.writeFileSync(path.join(dir, '.cargo/config.toml'), [
    '[build]',
    'rustc-wrapper = "tools/wrap.sh"',
    '[target.x86_64-unknown-linux-gnu]',
    "runner = 'tools/run.sh --flag'",
    'linker = "tools/ld"',
    '',
  ].join('\n'))
  const wrap = `#!/bin/sh\nexec "$@"\n`
  for (const n of ['wrap.sh', 'run.sh', 'ld']) fs.writeFileSync(path.join(dir, 'tools', n), wrap, { mode: 0o755 })
  return ['tools/wrap.sh', 'tools/run.sh', 'tools/ld'].map((p) => path.join(dir, p))
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs a project's .cargo/config.toml names by path cannot be rewritten unsaid; the host's cargo metadata runs none of the run's`, async (t) => {
    const tree = tempTree(t, { git: true })
    const marker = path.join(tree.out, 'RAN')
    const programs = [...project(tree.ws), ...project(path.join(tree.ws, 'crates/sub'))]
    const before = programs.map((p) => fs.readFileSync(p, 'utf8'))
    const evil = `#!/bin/sh\necho "$0" >> ${marker}\nexec "$@"\n`
    const script = programs.map((p) => `printf '%s' '${evil}' > ${p} 2>/dev/null`).join('; ') + '; true'
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, show(r))
    programs.forEach((p, i) => {
      const kept = fs.readFileSync(p, 'utf8') === before[i]
      const said = r.hostRisks.some((h) => h.path === p)
      assert.ok(kept || said, `${p} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
    })
    if (which('cargo')) {
      for (const dir of [tree.ws, path.join(tree.ws, 'crates/sub')]) {
        const c = spawnSync('cargo', ['metadata', '--format-version', '1', '--offline'], { cwd: dir, encoding: 'utf8' })
        assert.equal(c.status, 0, c.stderr)
      }
      const ran = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''
      assert.equal(ran, '', `the host's cargo metadata ran the run's programs:\n${ran}\nhostRisks: ${JSON.stringify(r.hostRisks)}`)
    }
  })
}

test("review: a change set that rewrites a program a project's .cargo/config.toml names is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  const programs = project(tree.ws)
  const before = programs.map((p) => fs.readFileSync(p, 'utf8'))
  const script = programs.map((p) => `echo 'echo planted' >> ${p}`).join('; ') + '; echo ok > src/lib.rs'
  const r = await sandspawn.spawnSandboxed(['sh', '-c', script], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.ok(r.changeSet, show(r))
  for (const p of programs) assert.ok(r.changeSet.hostRisks.some((h) => h.path === p), `${p}: ${JSON.stringify(r.changeSet.hostRisks)}`)
  await sandspawn.applyChangeSet(r.changeSet.id, {})
  programs.forEach((p, i) => assert.equal(fs.readFileSync(p, 'utf8'), before[i], `${p} landed`))
  assert.equal(fs.readFileSync(path.join(tree.ws, 'src/lib.rs'), 'utf8'), 'ok\n', 'the rest of the set landed')
})

// Found by an attacker's review (rfix33), over-blocking: every word with a `/` in a `rustflags`
// value was kept as a program, so `rustflags = ["-L", "vendor/lib"]` (a native library directory)
// made vendor/lib read-only and a run could not put the library it built there. Only what a
// `linker=` (or a `link-arg=-fuse-ld=`) names is a program in rustflags.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: a rustflags -L directory stays writable; its linker= program is kept`, async (t) => {
    const tree = tempTree(t, { git: true })
    fs.mkdirSync(path.join(tree.ws, '.cargo'))
    fs.mkdirSync(path.join(tree.ws, 'vendor/lib'), { recursive: true })
    fs.mkdirSync(path.join(tree.ws, 'tools'))
    fs.writeFileSync(path.join(tree.ws, 'tools/ld'), '#!/bin/sh\nexec cc "$@"\n', { mode: 0o755 })
    fs.writeFileSync(path.join(tree.ws, '.cargo/config.toml'), '[build]\nrustflags = ["-L", "vendor/lib", "-C", "linker=tools/ld"]\n')
    const r = await sh('echo lib > vendor/lib/libfoo.a && echo built; echo evil > tools/ld 2>/dev/null; true', { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(r.stdout, 'built\n', show(r))
    const ld = path.join(tree.ws, 'tools/ld')
    assert.ok(fs.readFileSync(ld, 'utf8') !== 'evil\n' || r.hostRisks.some((h) => h.path === ld), show(r))
  })
}

// Found by an attacker's review (left36): rustflags' link arguments also name programs the C
// compiler driver runs: gcc's `-B<prefix>` (it looks for collect2, ld, as there first) and
// `-wrapper <prog>,<args>` (it runs every subprogram under it). Checked on the host with cargo
// 1.95 and gcc 12: `rustflags = ["-C", "link-arg=-Btools/"]` had `cargo build` of a crate with no
// build script run the workspace's tools/collect2, and `link-arg=-wrapper` then
// `link-arg=tools/w,--x` ran tools/w; a default run rewrote both with hostRisks [].
/** A workspace whose .cargo's rustflags array holds `rustflags` and whose `files` (in `dirs`) it
 * names as programs: a default run cannot rewrite them unsaid. */
function linkArgPrograms(label, dirs, rustflags, files) {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: the programs rustflags' link arguments name (${label}) cannot be rewritten unsaid`, async (t) => {
      const tree = tempTree(t, { git: true })
      for (const d of ['.cargo', ...dirs]) fs.mkdirSync(path.join(tree.ws, d))
      fs.writeFileSync(path.join(tree.ws, '.cargo/config.toml'), `[build]\nrustflags = [${rustflags}]\n`)
      const paths = files.map((p) => path.join(tree.ws, p))
      for (const f of paths) fs.writeFileSync(f, 'true\n', { mode: 0o755 })
      await appendsKeptOrSaid(tree.ws, extra, paths, 'true\n')
    })
  }
}
linkArgPrograms('-B prefix, -wrapper', ['tools', 'wrap'], '"-C", "link-arg=-Btools/", "-C", "link-arg=-wrapper", "-C", "link-arg=wrap/w,--x"', ['tools/collect2', 'wrap/w'])

// Found by an attacker's review (rev37, attacking left36's -B): gcc takes `--prefix=<dir>` and
// `--prefix <dir>` for `-B<dir>` (checked on the host with gcc 12: `gcc --prefix=$d/ -c m.c` ran
// $d/as). A default run rewrote pfx/collect2 and pfx2/collect2 with hostRisks [].
linkArgPrograms("gcc's --prefix", ['pfx', 'pfx2'], '"-C", "link-arg=--prefix=pfx/", "-Clink-arg=--prefix", "-Clink-arg=pfx2/"', ['pfx/collect2', 'pfx2/collect2'])

// Found by an attacker's review (rfix33): rust-toolchain.toml is a protected name because its
// `path` runs the programs of a directory (rustup runs <path>/bin/cargo, rustc, ... for every
// cargo and rustc below it), but the directory it names was not kept: with `path` naming a
// toolchain inside the workspace (rustup takes an absolute path only), a default run rewrote
// tc/bin/cargo with hostRisks [], and the host's next `cargo --version` there ran it.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the toolchain directory a rust-toolchain.toml's path names cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const bin = path.join(tree.ws, 'tc/bin')
    fs.mkdirSync(bin, { recursive: true })
    fs.mkdirSync(path.join(tree.ws, 'tc/lib'))
    fs.writeFileSync(path.join(bin, 'cargo'), '#!/bin/sh\necho cargo 0.0.0\n', { mode: 0o755 })
    fs.writeFileSync(path.join(bin, 'rustc'), '#!/bin/sh\necho rustc 0.0.0\n', { mode: 0o755 })
    fs.writeFileSync(path.join(tree.ws, 'rust-toolchain.toml'), `[toolchain]\npath = "${path.join(tree.ws, 'tc')}"\n`)
    const cargo = path.join(bin, 'cargo')
    const r = await sh(`printf '#!/bin/sh\\necho RAN-RUNS-CARGO\\n' > ${cargo} 2>/dev/null; echo x > ${bin}/cargo-evil 2>/dev/null; true`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, show(r))
    const kept = fs.readFileSync(cargo, 'utf8') === '#!/bin/sh\necho cargo 0.0.0\n' && !fs.existsSync(path.join(bin, 'cargo-evil'))
    const said = r.hostRisks.some((h) => h.path.startsWith(path.join(tree.ws, 'tc')))
    assert.ok(kept || said, `the toolchain rewritten with nothing said: ${JSON.stringify(r.hostRisks)}\n${show(r)}`)
  })
}

// The same in review mode (rfix33): a change set that rewrites the toolchain a rust-toolchain.toml
// at the top names by path landed with apply, no risk.
test("review: a change set that rewrites the toolchain a rust-toolchain.toml's path names is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  const bin = path.join(tree.ws, 'tc/bin')
  fs.mkdirSync(bin, { recursive: true })
  const cargo = path.join(bin, 'cargo')
  fs.writeFileSync(cargo, '#!/bin/sh\necho cargo 0.0.0\n', { mode: 0o755 })
  fs.writeFileSync(path.join(tree.ws, 'rust-toolchain.toml'), `[toolchain]\npath = "${path.join(tree.ws, 'tc')}"\n`)
  const r = await sandspawn.spawnSandboxed(['sh', '-c', `echo 'echo planted' >> ${cargo}; echo ok > lib.txt`], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.ok(r.changeSet, show(r))
  assert.ok(r.changeSet.hostRisks.some((h) => h.path === cargo || cargo.startsWith(h.path + '/')), JSON.stringify(r.changeSet.hostRisks))
  await sandspawn.applyChangeSet(r.changeSet.id, {})
  assert.equal(fs.readFileSync(cargo, 'utf8'), '#!/bin/sh\necho cargo 0.0.0\n', 'the toolchain\'s cargo landed')
  assert.equal(fs.readFileSync(path.join(tree.ws, 'lib.txt'), 'utf8'), 'ok\n', 'the rest of the set landed')
})

// Found by an attacker's review (host34): `.yarnrc.yml` and `.yarnrc` are protected names because
// `yarnPath` (yarn 1's `yarn-path`) makes every yarn command run that file and `plugins` load code,
// but the files they name were left writable: yarn berry projects commit `yarnPath:
// .yarn/releases/yarn-4.x.cjs` and their plugins under `.yarn/plugins`, and a default
// workspace-write run rewrote both with hostRisks [] (bwrap and the Landlock mode). yarn (berry's
// lib.ts, runYarnPath: `execFileSync(process.execPath, [yarnPath, ...argv])`, before any command,
// `yarn --version` too; yarn 1 likewise for its `yarn-path`) then ran the run's code on the host's
// next yarn in that folder, through corepack's shim as well. yarn is not installed here: the test
// runs what yarn runs, `node <yarnPath> --version`.
/** A yarn berry project at `dir` (and yarn 1's rc below it); returns the files yarn runs. */
function yarnProject(dir) {
  fs.mkdirSync(path.join(dir, '.yarn/releases'), { recursive: true })
  fs.mkdirSync(path.join(dir, '.yarn/plugins/@yarnpkg'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'legacy/tools'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'package.json'), '{"name":"y","packageManager":"yarn@4.5.0"}\n')
  fs.writeFileSync(path.join(dir, '.yarnrc.yml'), [
    'nodeLinker: node-modules',
    'plugins:',
    '  - path: .yarn/plugins/@yarnpkg/plugin-workspace-tools.cjs',
    '    spec: "@yarnpkg/plugin-workspace-tools"',
    "  - '.yarn/plugins/local.cjs'",
    'yarnPath: .yarn/releases/yarn-4.5.0.cjs',
    '',
  ].join('\n'))
  fs.writeFileSync(path.join(dir, 'legacy/.yarnrc'), 'yarn-path "./tools/yarn-1.22.22.js"\n')
  const files = ['.yarn/releases/yarn-4.5.0.cjs', '.yarn/plugins/@yarnpkg/plugin-workspace-tools.cjs', '.yarn/plugins/local.cjs', 'legacy/tools/yarn-1.22.22.js'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'console.log("yarn " + process.argv.slice(2).join(" "))\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the yarn release and plugins a .yarnrc.yml (and a .yarnrc's yarn-path) names cannot be rewritten unsaid; the host's next yarn runs none of the run's`, async (t) => {
    const tree = tempTree(t, { git: true })
    const marker = path.join(tree.out, 'RAN')
    const files = yarnProject(tree.ws)
    const before = files.map((p) => fs.readFileSync(p, 'utf8'))
    const evil = `require("fs").appendFileSync(${JSON.stringify(marker)}, __filename + "\\n")\n`
    const script = files.map((p) => `printf '%s' ${JSON.stringify(evil).replace(/\$/g, '\\$')} > ${p} 2>/dev/null`).join('; ') + '; true'
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, show(r))
    files.forEach((p, i) => {
      const kept = fs.readFileSync(p, 'utf8') === before[i]
      const said = r.hostRisks.some((h) => h.path === p)
      assert.ok(kept || said, `${p} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
    })
    // What the host's next `yarn --version` there runs: node with the yarnPath (and the plugins).
    for (const f of files) spawnSync(process.execPath, [f, '--version'], { cwd: tree.ws })
    const ran = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''
    assert.ok(ran === '' || r.hostRisks.length > 0, `the host's yarn ran the run's code with nothing said:\n${ran}`)
  })
}

test("review: a change set that rewrites the yarn release or a plugin a .yarnrc.yml names is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, yarnProject(tree.ws).slice(0, 3), 'require("child_process").execSync("id")')
})

// Found by an attacker's review (host34): `.mvn` is a protected name because its jvm.config and
// extensions load code into every Maven run, but what jvm.config names was left writable: with a
// project's committed `-javaagent:tools/agent.jar`, a default run replaced tools/agent.jar with
// hostRisks [] (bwrap and the Landlock mode), and the host's next `mvn -v` there (no goal, no
// project code: the mvn script hands jvm.config's words to java before Maven starts) ran the
// run's agent (Maven 3.8.7, OpenJDK 17). The same for maven.config's -Dmaven.ext.class.path jars.
/** A Maven project at `dir` whose .mvn names an agent, a boot class path jar and an extension jar. */
function mvnProject(dir) {
  fs.mkdirSync(path.join(dir, '.mvn'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'tools'))
  fs.writeFileSync(path.join(dir, 'pom.xml'), '<project><modelVersion>4.0.0</modelVersion><groupId>x</groupId><artifactId>y</artifactId><version>1</version></project>\n')
  fs.writeFileSync(path.join(dir, '.mvn/jvm.config'), '-Xmx512m\n-javaagent:tools/agent.jar=verbose\n-Xbootclasspath/a:tools/boot.jar\n')
  fs.writeFileSync(path.join(dir, '.mvn/maven.config'), '-B\n-Dmaven.ext.class.path=tools/ext.jar\n')
  return ['tools/agent.jar', 'tools/boot.jar', 'tools/ext.jar'].map((p) => path.join(dir, p))
}

/** Jars of an agent class whose premain does `body` (Java), or null without a JDK. */
function agentJar(dir, name, body) {
  if (!which('javac') || !which('jar')) return null
  fs.mkdirSync(dir, { recursive: true })
  fs.writeFileSync(path.join(dir, `${name}.java`), `public class ${name} { public static void premain(String a) throws Exception { ${body} } }\n`)
  fs.writeFileSync(path.join(dir, `${name}.mf`), `Premain-Class: ${name}\n`)
  spawnSync('javac', [`${name}.java`], { cwd: dir })
  spawnSync('jar', ['cfm', `${name}.jar`, `${name}.mf`, `${name}.class`], { cwd: dir })
  return path.join(dir, `${name}.jar`)
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the agent and jars a project's .mvn/jvm.config and maven.config name cannot be replaced unsaid; the host's mvn -v runs none of the run's`, async (t) => {
    const tree = tempTree(t, { git: true })
    const marker = path.join(tree.out, 'RAN')
    const files = mvnProject(tree.ws)
    const good = agentJar(path.join(tree.out, 'good'), 'Good', '')
    const evil = agentJar(path.join(tree.out, 'evil'), 'Evil', `java.nio.file.Files.writeString(java.nio.file.Path.of(${JSON.stringify(marker)}), "agent ran");`)
    for (const f of files) fs.writeFileSync(f, good ? fs.readFileSync(good) : 'jar\n')
    const before = files.map((p) => fs.readFileSync(p))
    const script = files.map((p) => (evil ? `cp ${evil} ${p}` : `echo evil > ${p}`) + ' 2>/dev/null').join('; ') + '; true'
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, show(r))
    files.forEach((p, i) => {
      const kept = fs.readFileSync(p).equals(before[i])
      const said = r.hostRisks.some((h) => h.path === p)
      assert.ok(kept || said, `${p} replaced with nothing said: ${JSON.stringify(r.hostRisks)}`)
    })
    if (good && which('mvn')) {
      spawnSync('mvn', ['-v', '-q'], { cwd: tree.ws, encoding: 'utf8' })
      assert.ok(!fs.existsSync(marker) || r.hostRisks.length > 0, `the host's mvn -v ran the run's agent with nothing said: ${JSON.stringify(r.hostRisks)}`)
    }
  })
}

test("review: a change set that replaces the agent a project's .mvn/jvm.config names is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  const files = mvnProject(tree.ws)
  for (const f of files) fs.writeFileSync(f, 'jar\n')
  const script = files.map((p) => `echo evil > ${p}`).join('; ') + '; echo ok > lib.txt'
  const r = await sandspawn.spawnSandboxed(['sh', '-c', script], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.ok(r.changeSet, show(r))
  for (const p of files) assert.ok(r.changeSet.hostRisks.some((h) => h.path === p), `${p}: ${JSON.stringify(r.changeSet.hostRisks)}`)
  await sandspawn.applyChangeSet(r.changeSet.id, {})
  for (const p of files) assert.equal(fs.readFileSync(p, 'utf8'), 'jar\n', `${p} landed`)
  assert.equal(fs.readFileSync(path.join(tree.ws, 'lib.txt'), 'utf8'), 'ok\n', 'the rest of the set landed')
})

// Found by an attacker's review (host34): `.envrc` (and `.envrc.local`) are protected names
// because direnv runs them when a shell enters the directory, but the files an `.envrc` sources
// were left writable: direnv's allow list is of the `.envrc` alone (host32 showed it for
// `.envrc.local` with direnv 2.32.1), and a project's committed `source_env scripts/dev-env.sh`,
// `source ./env/common.sh` or `dotenv .env.shared` had a default workspace-write run rewrite the
// sourced file with hostRisks [] (bwrap and the Landlock mode); the host's shell ran it at its
// next prompt there (direnv's stdlib: `source_env` sources the file in the .envrc's bash, from
// the .envrc's directory; `dotenv` exports its variables, PROMPT_COMMAND and BASH_ENV included).
/** A project at `dir` whose `.envrc` sources and loads files of its own; returns them. */
function envrcProject(dir) {
  fs.mkdirSync(path.join(dir, 'scripts'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'env'))
  // Made here: the Landlock mode's top takes no new entries where a repository's is kept.
  fs.mkdirSync(path.join(dir, 'node_modules/.bin'), { recursive: true })
  fs.writeFileSync(path.join(dir, '.envrc'), [
    '# direnv',
    'source_env scripts/dev-env.sh',
    '[[ -f env/common.sh ]] && source "./env/common.sh"',
    'source_env_if_exists env/optional.sh; dotenv .env.shared',
    'layout node',
    '',
  ].join('\n'))
  const files = ['scripts/dev-env.sh', 'env/common.sh', 'env/optional.sh', '.env.shared'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'export X=1\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the files a project's .envrc sources (source_env, source, dotenv) cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const files = envrcProject(tree.ws)
    await appendsKeptOrSaid(tree.ws, extra, files, 'export X=1\n', 'echo ok > node_modules/.bin/tool; true')
    assert.equal(fs.readFileSync(path.join(tree.ws, 'node_modules/.bin/tool'), 'utf8'), 'ok\n', 'a PATH_add directory (layout node) stays writable')
  })
}

test("review: a change set that rewrites a file the .envrc sources is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  await reviewHoldsBack(tree.ws, envrcProject(tree.ws), 'touch /tmp/pwned')
})

// Found by the fixer (fix34) attacking rfix33's and host33's readers: the TOML was scanned line by
// line for `path =` (and the `.cargo` keys) bare or dotted, with the string's text taken as
// written. rustup and cargo parse TOML: a quoted key ("path" = ..., "rustc-wrapper" = ...), a
// multi-line string ("""<newline>/ws/tc"""), an escape ("\u002Fws/tc", "tools\u002Fwrap.sh") name
// the same program and were not kept; and a plain `rust-toolchain` file of one line is the
// toolchain itself (rustup 1.29 runs <that line>/bin/cargo when it is an absolute path). Each: a
// default run rewrote the program with hostRisks [], and the host's next cargo ran it.
const TOOLCHAIN_SPELLINGS = {
  'a plain rust-toolchain line': (tc) => ['rust-toolchain', `${tc}\n`],
  'a quoted key': (tc) => ['rust-toolchain.toml', `[toolchain]\n"path" = "${tc}"\n`],
  'a multi-line string': (tc) => ['rust-toolchain.toml', `[toolchain]\npath = """\n${tc}"""\n`],
  'an escaped slash': (tc) => ['rust-toolchain.toml', `[toolchain]\npath = "\\u002F${tc.slice(1)}"\n`],
}
for (const [mode, extra] of Object.entries(MODES)) {
  for (const [spelling, file] of Object.entries(TOOLCHAIN_SPELLINGS)) {
    test(`${mode}: the toolchain directory ${spelling} names cannot be rewritten unsaid`, async (t) => {
      const tree = tempTree(t, { git: true })
      const tc = path.join(tree.ws, 'tc')
      fs.mkdirSync(path.join(tc, 'bin'), { recursive: true })
      fs.mkdirSync(path.join(tc, 'lib'))
      const cargo = path.join(tc, 'bin/cargo')
      fs.writeFileSync(cargo, '#!/bin/sh\necho cargo 0.0.0\n', { mode: 0o755 })
      fs.writeFileSync(path.join(tc, 'bin/rustc'), '#!/bin/sh\necho rustc 0.0.0\n', { mode: 0o755 })
      const [name, text] = file(tc)
      fs.writeFileSync(path.join(tree.ws, name), text)
      const r = await sh(`printf '#!/bin/sh\\necho RAN-RUNS-CARGO\\n' > ${cargo} 2>/dev/null; true`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      const kept = fs.readFileSync(cargo, 'utf8') === '#!/bin/sh\necho cargo 0.0.0\n'
      const said = r.hostRisks.some((h) => h.path.startsWith(tc)) || r.sandboxDetails.notEnforced.some((n) => n.includes(name))
      assert.ok(kept || said, `the toolchain rewritten with nothing said: ${JSON.stringify(r.hostRisks)}\n${show(r)}`)
    })
  }
}

const CARGO_SPELLINGS = {
  'a quoted key': '[build]\n"rustc-wrapper" = "tools/wrap.sh"\n',
  'a quoted key in an inline table': "build = { 'rustc-wrapper' = 'tools/wrap.sh' }\n",
  'a multi-line string': '[build]\nrustc-wrapper = """\ntools/wrap.sh"""\n',
  'an escaped slash': '[build]\nrustc-wrapper = "tools\\u002Fwrap.sh"\n',
  'a credential alias': '[credential-alias]\nmine = ["tools/wrap.sh", "--arg"]\n[registry]\nglobal-credential-providers = ["mine"]\n',
  // Found by an attacker's review (fix35): cargo 1.95's `cargo doc --open` runs `doc.browser` (a
  // path from the directory holding .cargo, its arguments after it), no build script needed.
  'doc.browser': '[doc]\nbrowser = "tools/wrap.sh --new-window"\n',
  'doc.browser as a list': 'doc.browser = ["tools/wrap.sh", "--new-window"]\n',
}
/**
 * Each spelling of `spellings` written as the configuration `config` (relative to a fresh
 * workspace) that names `program` (holding `was`): a default workspace-write run that rewrites the
 * program must leave it as it was, or name it in hostRisks, or name the configuration in notEnforced.
 */
function eachSpellingKeepsIt(what, config, spellings, program, was) {
  for (const [mode, extra] of Object.entries(MODES)) {
    for (const [spelling, text] of Object.entries(spellings)) {
      test(`${mode}: the ${what} a ${config} names through ${spelling} cannot be rewritten unsaid`, async (t) => {
        const tree = tempTree(t, { git: true })
        const ws = (p) => path.join(tree.ws, p)
        fs.mkdirSync(path.dirname(ws(program)), { recursive: true })
        fs.mkdirSync(path.dirname(ws(config)), { recursive: true })
        fs.writeFileSync(ws(program), was, { mode: 0o755 })
        fs.writeFileSync(ws(config), text)
        const r = await sh(`echo 'echo RAN' > ${ws(program)} 2>/dev/null; true`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
        assert.equal(r.exitCode, 0, show(r))
        const kept = fs.readFileSync(ws(program), 'utf8') === was
        const said = r.hostRisks.some((h) => h.path === ws(program)) || r.sandboxDetails.notEnforced.some((n) => n.includes(config.split('/')[0]))
        assert.ok(kept || said, `${program} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}\n${show(r)}`)
      })
    }
  }
}
eachSpellingKeepsIt('rustc-wrapper', '.cargo/config.toml', CARGO_SPELLINGS, 'tools/wrap.sh', '#!/bin/sh\nexec "$@"\n')
// Found by an attacker's review (fix35): cargo 1.95 sets `[env]` in the environment of the rustc
// it runs on `cargo build` and `cargo check` (rust-analyzer's check on save), so an LD_PRELOAD
// there (checked: ld.so named the workspace's file) loads a library of the workspace into the
// host's rustc, with no build script in the crate.
eachSpellingKeepsIt('library', '.cargo/config.toml', {
  '[env] LD_PRELOAD': '[env]\nLD_PRELOAD = { value = "tools/wrap.sh", relative = true }\n',
  '[env] LD_PRELOAD as a string': '[env]\nLD_PRELOAD = "tools/wrap.sh"\n',
}, 'tools/wrap.sh', 'x\n')
// Found by an attacker's review (rfix35, attacking fix35's LOADER_VARIABLES): a `{ value, relative =
// true }` table is joined to the directory holding .cargo by cargo, a bare name too, so LD_PRELOAD =
// { value = "wrap.so", relative = true } loads the workspace's wrap.so into the host's rustc, and
// LD_LIBRARY_PATH = { value = "lib", relative = true } has ld.so look in the workspace's lib first
// (before rustc's RUNPATH: its libgcc_s.so.1, librustc_driver); and PATH = { value = "tools",
// relative = true, force = true } had cargo 1.95's cargo build, on a crate with no build script,
// run the workspace's tools/cc as rustc's linker (checked on the host).
eachSpellingKeepsIt('library', '.cargo/config.toml', {
  '[env] LD_PRELOAD, a bare name relative': '[env]\nLD_PRELOAD = { value = "wrap.so", relative = true }\n',
}, 'wrap.so', 'x\n')
eachSpellingKeepsIt('library', '.cargo/config.toml', {
  '[env] LD_LIBRARY_PATH, a bare directory relative': '[env]\nLD_LIBRARY_PATH = { value = "lib", relative = true }\n',
}, 'lib/libgcc_s.so.1', 'x\n')
eachSpellingKeepsIt('linker', '.cargo/config.toml', {
  '[env] PATH, relative and forced': '[env]\nPATH = { value = "tools", relative = true, force = true }\n',
  '[env] PATH with a slash, forced': '[env]\nPATH = { value = "/usr/bin:./tools", force = true }\n',
}, 'tools/cc', '#!/bin/sh\nexec /usr/bin/cc "$@"\n')

// Found by the fixer (fix34): cargo (1.95) loads the files a configuration's `include` names
// (`include = ["../cfg/extra.toml"]`, or tables with `path`), relative to that file, and takes
// their keys as its own; neither the included file nor the programs it names were kept: a default
// run wrote a rustc-wrapper into cfg/extra.toml, or rewrote the tools/wrap.sh it named, with
// hostRisks [], and the host's next cargo metadata ran it.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the files a .cargo configuration includes, and the programs they name, cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const ws = (p) => path.join(tree.ws, p)
    for (const d of ['.cargo', 'cfg', 'tools']) fs.mkdirSync(ws(d))
    fs.writeFileSync(ws('.cargo/config.toml'), 'include = ["../cfg/extra.toml", { path = "../cfg/more.toml", optional = true }]\n')
    fs.writeFileSync(ws('cfg/extra.toml'), '[build]\njobs = 2\n')
    fs.writeFileSync(ws('cfg/more.toml'), '[build]\nrustc-wrapper = "tools/wrap.sh"\n')
    fs.writeFileSync(ws('tools/wrap.sh'), '#!/bin/sh\nexec "$@"\n', { mode: 0o755 })
    const before = Object.fromEntries(['cfg/extra.toml', 'cfg/more.toml', 'tools/wrap.sh'].map((p) => [p, fs.readFileSync(ws(p), 'utf8')]))
    const script = `printf '[build]\\nrustc-wrapper = "/x/evil"\\n' > cfg/extra.toml; echo 'echo evil' >> tools/wrap.sh; true`
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, show(r))
    for (const [rel, was] of Object.entries(before)) {
      const said = r.hostRisks.some((h) => h.path === ws(rel))
      assert.ok(fs.readFileSync(ws(rel), 'utf8') === was || said, `${rel} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}\n${show(r)}`)
    }
  })
}

// Found by an attacker's review (rfix34): an .envrc also runs programs of the project (not
// sourced: run), as direnv evaluates it in bash at the host shell's next prompt there:
// `eval "$(./scripts/env.sh)"`, `./scripts/check-tools`, `bash tools/setup.sh`, a backquoted
// `tools/ver.sh`. host34's reading kept only what source_env, source, . and dotenv name: a run
// rewrote each, hostRisks []. What watch_file names and what PATH_add puts on PATH stay writable.
function envrcRunsProject(dir) {
  fs.mkdirSync(path.join(dir, 'scripts'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'tools'))
  fs.mkdirSync(path.join(dir, 'bin'))
  fs.writeFileSync(path.join(dir, '.envrc'), [
    'eval "$(./scripts/env.sh)"',
    'if true; then ./scripts/check-tools --quiet; fi',
    'bash -e tools/setup.sh && export V=`tools/ver.sh`',
    'watch_file package-lock.json data/list.txt',
    'PATH_add bin',
    '',
  ].join('\n'))
  const files = ['scripts/env.sh', 'scripts/check-tools', 'tools/setup.sh', 'tools/ver.sh'].map((p) => path.join(dir, p))
  for (const f of files) fs.writeFileSync(f, 'true\n')
  fs.writeFileSync(path.join(dir, 'package-lock.json'), '{}\n')
  return files
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs a project's .envrc runs (eval "$(./x)", ./x, bash x, \`x\`) cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const files = envrcRunsProject(tree.ws)
    await appendsKeptOrSaid(tree.ws, extra, files, 'true\n', 'echo x > package-lock.json; echo ok > bin/tool; true')
    assert.equal(fs.readFileSync(path.join(tree.ws, 'package-lock.json'), 'utf8'), 'x\n', 'a watch_file stays writable')
    assert.equal(fs.readFileSync(path.join(tree.ws, 'bin/tool'), 'utf8'), 'ok\n', 'a PATH_add directory stays writable')
  })
}

// Found by an attacker's review (host35): yarn berry reads .yarnrc.yml with js-yaml
// (@yarnpkg/parsers' parseSyml: safeLoad, FAILSAFE_SCHEMA), which takes `yarnPath` from a block
// scalar (`>-`, `|-`), a value on the line below its key, a tag (`!!str`), an anchor's alias
// (`*r`), a double-quoted escape (`"\x2Eyarn/..."`), an explicit key (`? yarnPath`) or a flow
// mapping; host34's line reader took the value as written on the key's line, so a project's
// committed file in any of those forms left its release writable, hostRisks [].
const YAML_FORMS = {
  'block/.yarnrc.yml': 'yarnPath: >-\n  .yarn/releases/yarn.cjs\n',
  'literal/.yarnrc.yml': 'yarnPath: |-\n  .yarn/releases/yarn.cjs\n',
  'below/.yarnrc.yml': 'nodeLinker: node-modules\nyarnPath:\n  .yarn/releases/yarn.cjs\n',
  'tag/.yarnrc.yml': 'yarnPath: !!str .yarn/releases/yarn.cjs\n',
  'alias/.yarnrc.yml': 'release: &r .yarn/releases/yarn.cjs\nyarnPath: *r\n',
  'escaped/.yarnrc.yml': 'yarnPath: "\\x2Eyarn/releases/yarn.cjs"\n',
  'explicit/.yarnrc.yml': '? yarnPath\n: .yarn/releases/yarn.cjs\n',
  'flow/.yarnrc.yml': '{yarnPath: .yarn/releases/yarn.cjs, nodeLinker: pnp}\n',
  'plugin/.yarnrc.yml': 'plugins:\n  - path: >-\n      .yarn/releases/yarn.cjs\n',
  // Found by an attacker's review (left36), attacking host35's reader: a key is a YAML scalar as a
  // value is (quoted with an escape, behind a tag or an anchor), a line ends at a lone carriage
  // return as js-yaml's does, a comment after a tab, a flow mapping or list over lines, a
  // double-quoted value over lines (an escaped line break), an alias of a list of plugins.
  'escaped-key/.yarnrc.yml': '"yarn\\u0050ath": .yarn/releases/yarn.cjs\n',
  'tagged-key/.yarnrc.yml': '!!str yarnPath: .yarn/releases/yarn.cjs\n',
  'anchored-key/.yarnrc.yml': '&k yarnPath: .yarn/releases/yarn.cjs\n',
  'tab-comment/.yarnrc.yml': 'yarnPath: .yarn/releases/yarn.cjs\t# pinned\n',
  'cr-lines/.yarnrc.yml': 'nodeLinker: pnp\ryarnPath: .yarn/releases/yarn.cjs\r',
  'flow-lines/.yarnrc.yml': '{nodeLinker: pnp,\n  yarnPath: .yarn/releases/yarn.cjs}\n',
  'flow-escaped-key/.yarnrc.yml': '{"yarn\\u0050ath": .yarn/releases/yarn.cjs}\n',
  'quoted-lines/.yarnrc.yml': 'yarnPath: ".yarn/re\\\n  leases/yarn.cjs"\n',
  'plugin-lines/.yarnrc.yml': 'plugins: [\n  .yarn/releases/yarn.cjs\n  ]\n',
  'plugin-alias/.yarnrc.yml': 'mine: &p\n  - .yarn/releases/yarn.cjs\nplugins: *p\n',
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the yarn release a .yarnrc.yml names in any YAML form (block scalar, next line, tag, alias, escape, explicit key, flow; a key's escape, tag or anchor, CR lines, flow over lines) cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const marker = path.join(tree.out, 'RAN')
    let yaml = null
    try { yaml = require('js-yaml') } catch {}
    const files = []
    for (const [rc, text] of Object.entries(YAML_FORMS)) {
      const dir = path.join(tree.ws, path.dirname(rc))
      fs.mkdirSync(path.join(dir, '.yarn/releases'), { recursive: true })
      fs.writeFileSync(path.join(tree.ws, rc), text)
      const release = path.join(dir, '.yarn/releases/yarn.cjs')
      fs.writeFileSync(release, 'console.log("yarn")\n')
      files.push(release)
      // What yarn takes (where js-yaml, which it parses with, is installed).
      if (yaml) {
        const cfg = (yaml.safeLoad || yaml.load)(text, { schema: yaml.FAILSAFE_SCHEMA, json: true })
        const named = cfg.yarnPath ?? cfg.plugins?.[0]?.path ?? cfg.plugins?.[0]
        assert.equal(named, '.yarn/releases/yarn.cjs', `${rc}: js-yaml gives ${JSON.stringify(cfg)}`)
      }
    }
    const evil = `require("fs").appendFileSync(${JSON.stringify(marker)}, __filename + "\\n")\n`
    const script = files.map((p) => `printf '%s' ${JSON.stringify(evil).replace(/\$/g, '\\$')} > ${p} 2>/dev/null`).join('; ') + '; true'
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, show(r))
    const unsaid = files.filter((p) => fs.readFileSync(p, 'utf8') !== 'console.log("yarn")\n' && !r.hostRisks.some((h) => h.path === p))
    assert.deepEqual(unsaid.map((p) => path.relative(tree.ws, p)), [], `rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
    // What the host's next `yarn --version` there runs: node with the yarnPath.
    for (const f of files) spawnSync(process.execPath, [f, '--version'], { cwd: path.dirname(path.dirname(path.dirname(f))) })
    const ran = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''
    assert.ok(ran === '' || r.hostRisks.length > 0, `the host's yarn ran the run's code with nothing said:\n${ran}`)
  })
}

// Found by an attacker's review (fix35), attacking rfix34's envrc_runs: direnv evaluates the
// .envrc from the directory holding it, where `$PWD` is that directory, and envrc_sources says so
// for what is sourced (`$PWD` stands for it); but a program run by `$PWD` (`eval "$("$PWD"/x)"`,
// `${PWD}/x`, `"$PWD/x"`), or a script an interpreter reads from its input (`bash < tools/x.sh`),
// was not kept: a run rewrote each, hostRisks [], and the host shell's next prompt there ran it.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs an .envrc runs by $PWD, or feeds to an interpreter, cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const dir = tree.ws
    for (const d of ['scripts', 'tools', 'bin']) fs.mkdirSync(path.join(dir, d))
    fs.writeFileSync(path.join(dir, '.envrc'), [
      'eval "$("$PWD"/scripts/env.sh)"',
      '${PWD}/scripts/check-tools --quiet',
      'export V="$($PWD/tools/ver.sh)"',
      'bash < tools/setup.sh',
      'sh -e <bin/init.sh',
      '',
    ].join('\n'))
    const files = ['scripts/env.sh', 'scripts/check-tools', 'tools/ver.sh', 'tools/setup.sh', 'bin/init.sh'].map((p) => path.join(dir, p))
    for (const f of files) fs.writeFileSync(f, 'true\n')
    await appendsKeptOrSaid(tree.ws, extra, files, 'true\n')
  })
}
// Found by an attacker's review (rfix35, attacking fix35's $PWD): `$(pwd)` is the same directory
// (direnv evaluates the .envrc there), the spelling many .envrc files use.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs an .envrc runs by $(pwd) cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const dir = tree.ws
    for (const d of ['scripts', 'tools']) fs.mkdirSync(path.join(dir, d))
    fs.writeFileSync(path.join(dir, '.envrc'), ['eval "$("$(pwd)"/scripts/env.sh)"', '$(pwd)/scripts/check-tools --quiet', 'export V="$(`pwd`/tools/ver.sh)"', 'source "$(pwd)/tools/lib.sh"', ''].join('\n'))
    const files = ['scripts/env.sh', 'scripts/check-tools', 'tools/ver.sh', 'tools/lib.sh'].map((p) => path.join(dir, p))
    for (const f of files) fs.writeFileSync(f, 'true\n')
    await appendsKeptOrSaid(tree.ws, extra, files, 'true\n')
  })
}

// Found by an attacker's review (left36): bash joins a line ending in a backslash with the next
// (`source \` then `  tools/a.sh`), and direnv sources the .envrc as `. "./.envrc"` from its
// directory (stdlib's source_env), so `${BASH_SOURCE[0]}` is `./.envrc` and its dirname (or
// `${BASH_SOURCE%/*}`, or `$(cd "$(dirname ...)" && pwd)`) is that directory: a project's committed
// `source "$(dirname "${BASH_SOURCE[0]}")/tools/b.sh"` (checked with bash here: each form below
// sources or runs its file) was rewritten by a run, hostRisks [], and run at the next prompt; so
// was what `source -- tools/f.sh` sources (bash's builtin takes `--`), and an unquoted
// `source $(pwd)/tools/g.sh` (its parentheses split the word). The continued lines held.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: what an .envrc sources or runs over a continued line, after --, or by its own directory (BASH_SOURCE) cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const dir = tree.ws
    for (const d of ['scripts', 'tools']) fs.mkdirSync(path.join(dir, d))
    fs.writeFileSync(path.join(dir, '.envrc'), [
      'source \\',
      '  tools/a.sh',
      'source "$(dirname "${BASH_SOURCE[0]}")/tools/b.sh"',
      '. "${BASH_SOURCE%/*}/tools/d.sh"',
      'source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tools/e.sh"',
      'eval "$(\\',
      '  ./scripts/env.sh)"',
      'source -- tools/f.sh',
      'source $(pwd)/tools/g.sh',
      '',
    ].join('\n'))
    const files = ['tools/a.sh', 'tools/b.sh', 'tools/d.sh', 'tools/e.sh', 'scripts/env.sh', 'tools/f.sh', 'tools/g.sh'].map((p) => path.join(dir, p))
    for (const f of files) fs.writeFileSync(f, 'true\n')
    await appendsKeptOrSaid(tree.ws, extra, files, 'true\n')
  })
}

// Found by an attacker's review (fix35), attacking host34's yarn_programs: yarn berry reads
// .yarnrc.yml with js-yaml (FAILSAFE_SCHEMA), which takes the same yarnPath through a value on the
// next line, a folded or literal block, a tag, an escape in double quotes, a UTF-8 BOM before the
// first key, or a flow mapping (checked with js-yaml 4 here: each gives `.yarn/releases/yarn.cjs`).
// host34's line reader took none of them: a run rewrote the release with hostRisks [], and yarn runs
// it with node before any command. Kept now, or (the flow mapping) named in notEnforced.
const YARN_SPELLINGS = {
  'a value on the next line': 'yarnPath:\n  .yarn/releases/yarn.cjs\n',
  'a folded block': 'yarnPath: >-\n  .yarn/releases/yarn.cjs\n',
  'a tag': 'yarnPath: !!str .yarn/releases/yarn.cjs\n',
  'an escape': 'yarnPath: "\\x2eyarn/releases/yarn.cjs"\n',
  'a byte order mark': '\ufeffyarnPath: .yarn/releases/yarn.cjs\n',
  'a flow mapping': '{yarnPath: .yarn/releases/yarn.cjs}\n',
}
eachSpellingKeepsIt('yarnPath', '.yarnrc.yml', YARN_SPELLINGS, '.yarn/releases/yarn.cjs', 'console.log("yarn")\n')
