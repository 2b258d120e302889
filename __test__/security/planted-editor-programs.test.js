'use strict'
// Found by an attacker's review (host35): the programs an editor's project settings name by path.
// `.vscode`, `.zed`, coc.nvim's `.vim`, `rust-analyzer.toml` and `.neoconf.json` are protected
// names because the language servers and tools they configure start when the folder (or a file)
// opens, but the programs they name by path were left writable: a project's committed
// `.vscode/settings.json` with `"clangd.path": "${workspaceFolder}/tools/clangd"`,
// `"rust-analyzer.cargo.buildScripts.overrideCommand": ["tools/ra-check.sh", "--json"]` (run by
// rust-analyzer when the folder opens, no build of the project's code asked for),
// `"python.defaultInterpreterPath": "./tools/py"` or a terminal profile's `path`, and a
// `rust-analyzer.toml`'s `cargo.buildScripts.overrideCommand`, had a default workspace-write run
// rewrite each with hostRisks [] (bwrap and the Landlock mode). VS Code is not installed here: the
// test runs what the extensions run, the program at that path (vscode-clangd substitutes
// ${workspaceFolder} and spawns `clangd.path`; rust-analyzer spawns the command's first word in the
// workspace folder).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { sh, show, tempTree, sandspawn, changeSetStore } = require('./helpers')

changeSetStore('sandspawn-editor-programs-')

const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

/** A project at `dir` whose editor settings name `tools/*` programs; returns them. */
function editorProject(dir) {
  fs.mkdirSync(path.join(dir, '.vscode'), { recursive: true })
  fs.mkdirSync(path.join(dir, 'tools'))
  fs.mkdirSync(path.join(dir, 'build'))
  fs.writeFileSync(path.join(dir, '.vscode/settings.json'), [
    '{',
    '  // the project\'s language servers',
    '  "clangd.path": "${workspaceFolder}/tools/clangd",',
    '  "rust-analyzer.cargo.buildScripts.overrideCommand": ["tools/ra-check.sh", "--json"],',
    '  "python.defaultInterpreterPath": "./tools/py", /* a wrapper */',
    '  "terminal.integrated.profiles.linux": { "dev": { "path": "tools/devshell" } },',
    '  "C_Cpp.default.compileCommands": "${workspaceFolder}/build/compile_commands.json",',
    '  "search.exclude": { "build/**": true },',
    '}',
    '',
  ].join('\n'))
  fs.writeFileSync(path.join(dir, 'rust-analyzer.toml'), '[cargo.buildScripts]\noverrideCommand = ["tools/ra-toml-check.sh", "--json"]\n')
  const programs = ['tools/clangd', 'tools/ra-check.sh', 'tools/py', 'tools/devshell', 'tools/ra-toml-check.sh'].map((p) => path.join(dir, p))
  for (const p of programs) fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
  fs.writeFileSync(path.join(dir, 'build/compile_commands.json'), '[]\n')
  return programs
}

for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs a project's .vscode/settings.json and rust-analyzer.toml name by path cannot be rewritten unsaid; what the editor starts runs none of the run's`, async (t) => {
    const tree = tempTree(t, { git: true })
    const marker = path.join(tree.out, 'RAN')
    const programs = editorProject(tree.ws)
    const before = programs.map((p) => fs.readFileSync(p, 'utf8'))
    const evil = `#!/bin/sh\necho "$0" >> ${marker}\n`
    const script = programs.map((p) => `printf '%s' '${evil}' > ${p} 2>/dev/null`).join('; ') +
      '; echo "[{}]" > build/compile_commands.json'
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, `a settings value that is no program (the compile database a build writes) stays writable: ${show(r)}`)
    assert.equal(fs.readFileSync(path.join(tree.ws, 'build/compile_commands.json'), 'utf8'), '[{}]\n')
    programs.forEach((p, i) => {
      const kept = fs.readFileSync(p, 'utf8') === before[i]
      const said = r.hostRisks.some((h) => h.path === p)
      assert.ok(kept || said, `${p} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
    })
    // What the editor starts when the folder opens: each program at its path, in the folder.
    for (const p of programs) spawnSync(p, ['--version'], { cwd: tree.ws })
    const ran = fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''
    assert.ok(ran === '' || r.hostRisks.length > 0, `the editor's servers ran the run's code with nothing said:\n${ran}`)
  })
}

test("review: a change set that rewrites a program .vscode/settings.json names is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  const programs = editorProject(tree.ws)
  const before = programs.map((p) => fs.readFileSync(p, 'utf8'))
  const script = programs.map((p) => `echo 'id' >> ${p}`).join('; ') + '; echo ok > lib.txt'
  const r = await sandspawn.spawnSandboxed(['sh', '-c', script], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.ok(r.changeSet, show(r))
  for (const p of programs) assert.ok(r.changeSet.hostRisks.some((h) => h.path === p), `${p}: ${JSON.stringify(r.changeSet.hostRisks)}`)
  await sandspawn.applyChangeSet(r.changeSet.id, {})
  programs.forEach((p, i) => assert.equal(fs.readFileSync(p, 'utf8'), before[i], `${p} landed`))
  assert.equal(fs.readFileSync(path.join(tree.ws, 'lib.txt'), 'utf8'), 'ok\n', 'the rest of the set landed')
})

/**
 * rfix36's cases: a project whose settings (`files`, path -> text) name `programs` (made, each
 * `exit 0`); a default workspace-write run appends to each, and none may be rewritten unsaid.
 */
function eachKeptOrSaid(files, programs, extra) {
  return async (t) => {
    const tree = tempTree(t, { git: true })
    for (const [f, text] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(tree.ws, f)), { recursive: true })
      fs.writeFileSync(path.join(tree.ws, f), text)
    }
    const paths = programs.map((p) => path.join(tree.ws, p))
    for (const p of paths) {
      fs.mkdirSync(path.dirname(p), { recursive: true })
      fs.writeFileSync(p, '#!/bin/sh\nexit 0\n', { mode: 0o755 })
    }
    const script = paths.map((p) => `echo 'echo ran >> /tmp/x' >> ${p} 2>/dev/null`).join('; ') + '; true'
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, show(r))
    const rewritten = paths.filter((p) => fs.readFileSync(p, 'utf8') !== '#!/bin/sh\nexit 0\n' && !r.hostRisks.some((h) => h.path === p))
    assert.deepEqual(rewritten, [], `rewritten with nothing said: ${JSON.stringify(r.hostRisks)}`)
  }
}

// Found by an attacker's review (rfix36): spellings the settings' readers missed while reading the
// rest of the file. VS Code and coc.nvim read settings with jsonc-parser, whose `//` comment ends at
// a carriage return as at a newline (scanner.ts: isLineBreak is LF or CR), so in a file with CR
// line ends (or one stray CR) the key after the comment is a setting; planted::jsonc ran the
// comment on to the next LF and read the rest as JSON without the key, nothing said. And
// rust-analyzer's procMacro.server ("path to proc-macro server executable", spawned when the folder
// opens and a crate uses a procedural macro; rust-lang/rust's `x setup vscode` writes it as
// ${workspaceFolder}/build/host/stage0/libexec/rust-analyzer-proc-macro-srv) ends in none of the
// program keys' suffixes.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: a program named after a comment ended by a carriage return, or as rust-analyzer's procMacro.server, cannot be rewritten unsaid`, eachKeptOrSaid({
    '.vscode/settings.json': '{\r  // the project\'s pinned clangd\r  "clangd.path": "${workspaceFolder}/tools/clangd",\r' +
      '  "rust-analyzer.procMacro.server": "tools/pm-srv",\r  "editor.tabSize": 2\r}\r',
  }, ['tools/clangd', 'tools/pm-srv'], extra))
}

// Found by an attacker's review (rfix36): an environment given to a language server under a key
// that does not end in env. Helix's languages.toml gives a server's process `environment`
// (`[language-server.ts] environment = { NODE_OPTIONS = "--require ./tools/hook.js" }`: node loads
// the file when Helix starts the server for a file it opens), vscode-go gives gopls and the go
// command it runs `go.toolsEnvVars` (`CC`, run by the cgo step of gopls' `go list -compiled`), and
// CMake Tools its configure (on open) `cmake.configureEnvironment`; none was read.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: a program in a server's environment (Helix's environment, go.toolsEnvVars, cmake.configureEnvironment) cannot be rewritten unsaid`, eachKeptOrSaid({
    '.helix/languages.toml': '[language-server.ts]\ncommand = "typescript-language-server"\nargs = ["--stdio"]\nenvironment = { NODE_OPTIONS = "--require ./tools/hook.js" }\n',
    '.vscode/settings.json': '{\n  "go.toolsEnvVars": { "CC": "${workspaceFolder}/tools/cc" },\n  "cmake.configureEnvironment": { "CXX": "tools/cxx" }\n}\n',
  }, ['tools/hook.js', 'tools/cc', 'tools/cxx'], extra))
}

// Found by an attacker's review (rfix36): a toolchain directory named by settings, whose programs
// the editor runs from below it: rust-analyzer's cargo.sysroot (it runs <sysroot>/bin/rustc and
// <sysroot>/libexec/rust-analyzer-proc-macro-srv, Sysroot::tool and discover_proc_macro_srv) and
// vscode-go's go.goroot (<goroot>/bin/go). Only an existing file was kept, never what is below a
// directory.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs below a toolchain directory settings name (cargo.sysroot, go.goroot) cannot be rewritten unsaid`, eachKeptOrSaid({
    '.vscode/settings.json': '{\n  "rust-analyzer.cargo.sysroot": "${workspaceFolder}/toolchain",\n  "go.goroot": "./go/"\n}\n',
  }, ['toolchain/bin/rustc', 'toolchain/libexec/rust-analyzer-proc-macro-srv', 'go/bin/go'], extra))
}

// Found by an attacker's review (rev36): what those programs load and run from below the same
// directory. rustc's RUNPATH is $ORIGIN/../lib (readelf -d on this machine's rustc: NEEDED
// librustc_driver-<hash>.so, RUNPATH [$ORIGIN/../lib]), so with bin/rustc kept read-only a run
// rewrote lib/librustc_driver-*.so beside it, which rust-analyzer's next rustc loads; the JDK's
// bin/java loads lib/libjli.so and lib/server/libjvm.so; gopls' go list -compiled runs the go
// command's pkg/tool/<os>_<arch>/cgo.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the libraries and tools a toolchain directory's programs load from below it (rustc's lib, the JDK's lib, go's pkg/tool) cannot be rewritten unsaid`, eachKeptOrSaid({
    '.vscode/settings.json': '{\n  "rust-analyzer.cargo.sysroot": "${workspaceFolder}/toolchain",\n  "go.goroot": "./go/",\n  "java.jdt.ls.java.home": "jdk"\n}\n',
  }, ['toolchain/bin/rustc', 'toolchain/lib/librustc_driver-0123abcd.so', 'jdk/bin/java', 'jdk/lib/libjli.so', 'jdk/lib/server/libjvm.so', 'go/bin/go', 'go/pkg/tool/linux_amd64/cgo'], extra))
}

// Found by an attacker's review (rev36): VS Code's ${workspaceFolder:NAME} is the folder of that
// name (the folder's own name when one is open: the workspace's basename, `ws` here), and the
// readers skipped every word holding a `${` left after ${workspaceFolder} was put in.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: a program named through \${workspaceFolder:name} cannot be rewritten unsaid`, eachKeptOrSaid({
    '.vscode/settings.json': '{\n  "clangd.path": "${workspaceFolder:ws}/tools/clangd"\n}\n',
  }, ['tools/clangd'], extra))
}

// Found by an attacker's review (host44): nlsp-settings.nvim hands each language server Neovim
// starts the settings of the project's `.nlsp-settings/<server>.json` (lspconfig's server names),
// flat dotted keys as VS Code's settings.json has them; `.nlsp-settings` is protected (as
// `.neoconf.json`), but the programs its files name were left writable, as `.neoconf.json`'s were
// before host35: a default run appended to each with `hostRisks: []`.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: the programs a project's .nlsp-settings/<server>.json name cannot be rewritten unsaid`, eachKeptOrSaid({
    '.nlsp-settings/rust_analyzer.json': '{\n  "rust-analyzer.cargo.buildScripts.overrideCommand": ["tools/nlsp-ra.sh", "--json"]\n}\n',
    '.nlsp-settings/pyright.json': '{ "python.pythonPath": "./tools/nlsp-py" }\n',
    '.nlsp-settings/clangd.json': '{ "clangd.path": "tools/nlsp-clangd" }\n',
  }, ['tools/nlsp-ra.sh', 'tools/nlsp-py', 'tools/nlsp-clangd'], extra))
}
