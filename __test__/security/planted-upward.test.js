'use strict'
// Found by an attacker's review (rfix26): the directories between the writable /tmp and a
// workspace nested below it (`/tmp/<x>/outer/proj`), and /tmp's top, kept only the protected names.
// But tools search upward from their cwd for more than those: npm puts every ancestor's
// `node_modules/.bin` on PATH (a planted `../node_modules/.bin/sh` ran on the host's `npm test` in
// the workspace; `/tmp/node_modules/.bin/sh`, planted from one workspace, on `npm test` in another)
// and takes an ancestor's `package.json` listing the workspace in `workspaces` as its project root
// (its postinstall ran on the host's `npm install`); ESLint, pytest, cargo, go, gradle, bazel do the
// same with their own files. All landed with `hostRisks: []`. Now those "upward-searched" names get,
// in the directories above the workspace, what protected names get there; at the workspace's own
// top they stay the project's.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { changeSetStore, sandspawn, show, sh, q, removeTmpLeftovers } = require('./helpers')
const { MODES, nested, plant, riskFor, options, assertKeptOff } = require('./above-tmp')

/**
 * One describe of names planted above a workspace nested below /tmp, in every mode: `planted` kept
 * absent and reported, the workspace's `own` files (written `own`) not reported, and after review's
 * apply `kept` (one of them) still the workspace's own content.
 */
function keptAboveWithOwn(title, planted, own, kept) {
  describe(title, () => {
    for (const [mode, extra] of Object.entries(MODES)) {
      test(`${mode}: kept absent and reported; the workspace's own are its own`, async (t) => {
        const { ws } = nested(t, 'sandspawn-upward-')
        const r = await sh(`${plant(planted)}; ${own.map((n) => `echo own > ${n}`).join('; ')}`, options(ws, extra))
        assert.equal(r.exitCode, 0, show(r))
        const risks = r.hostRisks || []
        assertKeptOff(risks, ws, planted, extra)
        assert.ok(!risks.some((h) => own.some((n) => h.path === path.join(ws, n))), JSON.stringify(risks))
        if (r.changeSet) await sandspawn.applyChangeSet(r.changeSet.id)
        assert.equal(fs.readFileSync(path.join(ws, kept), 'utf8'), 'own\n')
      })
    }
  })
}

const STORE = changeSetStore('sandspawn-upward-')

/** Relative to the workspace: in the directories between /tmp and it. */
const PLANTED = ['../node_modules/.bin/sh', '../package.json', '../../eslint.config.js', '../Cargo.toml', '../../go.work', '../conftest.py', '../pytest.ini', '../settings.gradle.kts']

describe('upward-searched names above a workspace nested below /tmp', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported, or read-only where they exist; the workspace's own are its own`, async (t) => {
      const { base, ws } = nested(t, 'sandspawn-upward-')
      // There before the run (the user's own monorepo root): read-only for it.
      const parentPkg = JSON.stringify({ name: 'root', private: true })
      fs.writeFileSync(path.join(base, 'package.json'), parentPkg)
      const evil = JSON.stringify({ name: 'root', workspaces: ['outer/proj'], scripts: { postinstall: 'touch PWNED' } })
      const own = 'mkdir -p node_modules/.bin && echo x > node_modules/.bin/tool && echo {} > package.json && echo x > eslint.config.js'
      const r = await sh(`${plant(PLANTED)}; printf '%s' ${q(evil)} > ../../package.json; ${own}`, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      assertKeptOff(risks, ws, PLANTED, extra)
      assert.equal(fs.readFileSync(path.join(base, 'package.json'), 'utf8'), parentPkg)
      // The workspace's own top is the project's: nothing of it is reported.
      for (const rel of ['node_modules', 'package.json', 'eslint.config.js']) {
        assert.ok(!risks.some((h) => h.path.startsWith(path.join(ws, rel))), `${rel} at the workspace's top reported: ${JSON.stringify(risks)}`)
      }
      if (r.changeSet) {
        const applied = await sandspawn.applyChangeSet(r.changeSet.id)
        assert.ok(fs.existsSync(path.join(ws, 'node_modules/.bin/tool')), JSON.stringify(applied))
      } else {
        assert.ok(fs.existsSync(path.join(ws, 'node_modules/.bin/tool')))
      }
    })
  }

  // Another workspace below /tmp runs what one run leaves at /tmp's top (`npm test` there puts
  // /tmp/node_modules/.bin on PATH). Only where /tmp/node_modules does not exist already.
  test('bwrap: /tmp/node_modules planted from a nested workspace is kept absent and reported', { skip: fs.existsSync('/tmp/node_modules') && '/tmp/node_modules exists' }, async (t) => {
    const { ws } = nested(t, 'sandspawn-upward-')
    t.after(() => {
      removeTmpLeftovers(['node_modules'])
    })
    const r = await sh('mkdir -p /tmp/node_modules/.bin && echo planted > /tmp/node_modules/.bin/sh; true', options(ws, {}))
    assert.equal(r.exitCode, 0, show(r))
    assert.ok(riskFor(r.hostRisks || [], '/tmp/node_modules/.bin/sh'), `unreported: ${JSON.stringify(r.hostRisks)}`)
    assert.equal(fs.existsSync('/tmp/node_modules'), false, 'it stayed')
  })

  // Found by an attacker's review (rfix27): more tools search every parent of their cwd for a file
  // they run or load code from, and those names landed above the workspace with hostRisks []:
  // mocha's rc files (find-up; `require` loads modules), Vitest's and Vite's configs (find-up; they
  // run as JavaScript), Bundler's Gemfile and rake's Rakefile (Ruby), docker compose's files (it
  // walks up; a service can mount the host), MSBuild's Directory.Build.props (imported into every
  // project below; `Exec` runs), RuboCop's `require`, flake8's local plugins, golangci-lint's
  // plugins, dune's outermost project, stack's and cabal's projects (their packages' Setup runs).
  const MORE = ['../.mocharc.yml', '../../vitest.config.mjs', '../vite.config.ts', '../Gemfile', '../../Rakefile', '../compose.yaml', '../Directory.Build.props', '../.rubocop.yml', '../.flake8', '../.golangci.yml', '../../dune-project', '../stack.yaml', '../cabal.project', '../justfile', '../Taskfile.yml', '../nuget.config']
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: more upward-searched names (mocha, vitest, bundler, compose, MSBuild, ...) are kept off above the workspace`, async (t) => {
      const { ws } = nested(t, 'sandspawn-upward-')
      const r = await sh(plant(MORE), options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      assertKeptOff(r.hostRisks || [], ws, MORE, extra)
    })
  }
})

// Found by an attacker's review (host27): the upward list named npm's, cargo's, go's, pytest's,
// gradle's and bazel's files but not those of other tools that search every parent of their cwd
// and run what they find there: MSBuild imports the nearest ancestor's `Directory.Build.props` and
// `.targets` (and reads `Directory.Build.rsp`: `-logger` loads an assembly) on every `dotnet build`
// and an IDE's design-time build when the folder opens; mypy's `plugins`, flake8's local plugins
// and pylint's `init-hook` load code from the nearest ancestor's config; invoke's `tasks.py`,
// rake's `Rakefile`, just's `justfile`, go-task's `Taskfile.yml`, grunt's and gulp's files,
// Bundler's `Gemfile`, SwiftPM's `Package.swift`, pixi's, cabal's and stack's project files run
// from an ancestor too; golangci-lint loads the plugins its nearest config names; asdf takes each
// tool's version from the nearest `.tool-versions` that names it (`path:` runs that directory's
// programs). Each landed above the workspace with `hostRisks: []`.
const BUILD_TOOLS = ['../Directory.Build.props', '../../Directory.Build.targets', '../Directory.Build.rsp', '../Directory.Packages.props', '../nuget.config', '../mypy.ini', '../../.mypy.ini', '../.flake8', '../.pylintrc', '../tasks.py', '../../fabfile.py', '../Rakefile', '../justfile', '../../Taskfile.yml', '../Gruntfile.js', '../gulpfile.js', '../Gemfile', '../gems.rb', '../.golangci.yml', '../Package.swift', '../pixi.toml', '../cabal.project', '../stack.yaml', '../.tool-versions', '../nx.json', '../pyrightconfig.json']

describe("other build and task tools' upward-searched files above a workspace nested below /tmp", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported; the workspace's own are its own`, async (t) => {
      const { ws } = nested(t, 'sandspawn-upward-')
      const own = 'echo x > Directory.Build.props && echo x > Rakefile && echo x > mypy.ini'
      const r = await sh(`${plant(BUILD_TOOLS)}; ${own}`, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      assertKeptOff(risks, ws, BUILD_TOOLS, extra)
      for (const rel of ['Directory.Build.props', 'Rakefile', 'mypy.ini']) {
        assert.ok(!risks.some((h) => h.path === path.join(ws, rel)), `${rel} at the workspace's top reported: ${JSON.stringify(risks)}`)
      }
      if (r.changeSet) await sandspawn.applyChangeSet(r.changeSet.id)
      assert.ok(fs.existsSync(path.join(ws, 'Directory.Build.props')))
    })
  }
})

// Found by an attacker's review (host27): coding agents read their instruction files from every
// ancestor of the cwd (Claude Code's `CLAUDE.md` and `CLAUDE.local.md` up to `/`, Gemini CLI's
// `GEMINI.md` up to the project's top, opencode's `AGENTS.md`), as the user's own standing
// instructions: `/tmp/CLAUDE.md`, planted from one run, steers the host's agent in every workspace
// below /tmp (it then runs what it was told, with the user's approval or its own). They landed
// above a nested workspace with `hostRisks: []`; the workspace's own are its own.
const INSTRUCTIONS = ['../CLAUDE.md', '../../CLAUDE.local.md', '../GEMINI.md', '../AGENTS.md']

keptAboveWithOwn("coding agents' instruction files above a workspace nested below /tmp", INSTRUCTIONS, ['CLAUDE.md', 'AGENTS.md'], 'CLAUDE.md')

// The same review (host27): more tools that take the nearest ancestor's file as their project:
// `docker compose` (a compose file's bind of `/` into a privileged container), Vagrant's
// `Vagrantfile` (Ruby), `zig build`'s `build.zig`, uv's `.venv` (its `bin/python` is what `uv run`
// runs), pipenv's `Pipfile`, Rush's `rush.json` (its event hooks), devbox's `devbox.json` (its
// init hook), a Nix `flake.nix` (`nix develop`'s shell hook), Mocha's and nyc's configurations
// (`require` loads modules; `.mocharc.js` runs as JavaScript).
const MORE_TOOLS = ['../compose.yaml', '../../docker-compose.yml', '../Vagrantfile', '../build.zig', '../.venv/bin/python', '../Pipfile', '../rush.json', '../devbox.json', '../flake.nix', '../.mocharc.js', '../../.mocharc.yml', '../.nycrc', '../nyc.config.js']

describe("more tools' upward-searched files above a workspace nested below /tmp", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported`, async (t) => {
      const { ws } = nested(t, 'sandspawn-upward-')
      const r = await sh(`${plant(MORE_TOOLS)}; echo own > compose.yaml`, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      assertKeptOff(risks, ws, MORE_TOOLS, extra)
      assert.ok(!risks.some((h) => h.path === path.join(ws, 'compose.yaml')), JSON.stringify(risks))
    })
  }
})

// Found by an attacker's review (host28): more tools that search every parent of their cwd and
// run, load or trust what they find, each planted above a nested workspace with `hostRisks: []`:
// Leiningen's `lein` cds up to the nearest `project.clj` (Clojure, evaluated: `~(...)`, plugins,
// `:injections`), opam selects the nearest ancestor's local switch `_opam` (`opam env`, `opam exec`
// and its shell hook put its `bin` first on PATH), haskell-language-server (hie-bios) takes the
// nearest `hie.yaml` when the editor opens a file (its bios `program` runs), Pants takes the nearest
// `pants.toml` as its build root (`pythonpath` and `backend_packages` import Python), buck2 takes
// `.buckconfig`/`.buckroot` as its project's root, Composer offers an ancestor's `composer.json`
// (its scripts run), remark's/rehype's/retext's engine loads the nearest `.remarkrc*` (a `.js`
// one runs, plugins load), Merlin the nearest `.merlin` (its `-pp` preprocessors run when a file
// opens), and more coding agents' instruction files read from every ancestor:
// Qwen Code's `QWEN.md`, iFlow's `IFLOW.md`, Amp's `AGENT.md`, goose's `.goosehints`.
const HOST28 = ['../project.clj', '../../_opam/bin/git', '../hie.yaml', '../pants.toml', '../.buckconfig', '../../.buckroot', '../composer.json', '../.remarkrc.mjs', '../../.remarkrc.yml', '../.rehyperc.js', '../QWEN.md', '../../IFLOW.md', '../AGENT.md', '../.goosehints', '../.merlin']

describe("host28: more tools' upward-searched files above a workspace nested below /tmp", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported; the workspace's own are its own`, async (t) => {
      const { ws } = nested(t, 'sandspawn-upward-')
      const r = await sh(`${plant(HOST28)}; echo own > project.clj; echo own > pants.toml`, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      assertKeptOff(risks, ws, HOST28, extra)
      assert.ok(!risks.some((h) => h.path === path.join(ws, 'project.clj') || h.path === path.join(ws, 'pants.toml')), JSON.stringify(risks))
      if (r.changeSet) await sandspawn.applyChangeSet(r.changeSet.id)
      assert.equal(fs.readFileSync(path.join(ws, 'project.clj'), 'utf8'), 'own\n')
    })
  }
})

// The same review (host28): Nim reads `config.nims` (NimScript, whose `exec` runs commands) and
// `nim.cfg` (`gcc.exe` names the C compiler it runs) from EVERY parent directory of the project
// file, not only the nearest, on each `nim c` and in nimsuggest when an editor opens a file: the
// workspace's own configuration does not keep an ancestor's out. Both landed above a nested
// workspace with `hostRisks: []`.
const NIM = ['../config.nims', '../../nim.cfg']

describe("Nim's configuration files above a workspace nested below /tmp", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported; the workspace's own are its own`, async (t) => {
      const { ws } = nested(t, 'sandspawn-upward-')
      const r = await sh(`${plant(NIM)}; echo own > config.nims`, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      assertKeptOff(risks, ws, NIM, extra)
      assert.ok(!risks.some((h) => h.path === path.join(ws, 'config.nims')), JSON.stringify(risks))
    })
  }
})

// The same review (host28): JavaScript and C++ tools that take the nearest ancestor's file as
// their project's: Hardhat "searches for the closest hardhat.config file starting from the cwd"
// (it runs as JavaScript on every `npx hardhat`), Truffle finds `truffle-config.js` up, the Angular
// CLI takes the nearest `angular.json` as the workspace (its builders are modules it loads), the
// Svelte language server loads the nearest `svelte.config.js` when an editor opens a `.svelte`
// file, and vcpkg takes the nearest `vcpkg.json` (with `vcpkg-configuration.json`'s overlay ports,
// whose portfiles run) on `vcpkg install`. Each landed above a nested workspace unreported.
const JS_AND_CPP = ['../hardhat.config.js', '../../hardhat.config.ts', '../truffle-config.js', '../angular.json', '../../.angular.json', '../svelte.config.js', '../vcpkg.json', '../vcpkg-configuration.json']

describe('more project files (Hardhat, Truffle, Angular, Svelte, vcpkg) above a workspace nested below /tmp', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported; the workspace's own are its own`, async (t) => {
      const { ws } = nested(t, 'sandspawn-upward-')
      const r = await sh(`${plant(JS_AND_CPP)}; echo own > hardhat.config.js; echo own > angular.json`, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      assertKeptOff(risks, ws, JS_AND_CPP, extra)
      assert.ok(!risks.some((h) => h.path === path.join(ws, 'hardhat.config.js') || h.path === path.join(ws, 'angular.json')), JSON.stringify(risks))
    })
  }
})

// Found by an attacker's review (host29), each planted above a nested workspace with
// `hostRisks: []`: Gemini CLI (and its fork Qwen Code) loads the first `.env` found from the
// workspace up to `/` into its own environment (`findEnvFile`: NODE_OPTIONS or BASH_ENV there reach
// every MCP server and shell command it starts), and `.env` was kept nowhere above a workspace;
// Codex reads `AGENTS.override.md` in place of `AGENTS.md` in each directory from the project's
// root down to the cwd (the user's `AGENTS.md` there, kept read-only, was overridden); Psalm
// takes the nearest ancestor's `psalm.xml` or `psalm.xml.dist` (`locateConfigFile`: its plugins
// and autoloader are PHP it loads); lintr (the R language server lints each file an editor opens
// with it) takes the nearest ancestor's `.lintr` (`find_config2`, up to `/`), whose values it
// evaluates as R; Pulumi takes the nearest ancestor's `Pulumi.yaml` as the project and runs its
// program on `pulumi preview`; Capistrano's `cap` (a Rake application) runs the nearest
// ancestor's `Capfile`, as rake does a `Rakefile`.
const HOST29 = ['../.env', '../../AGENTS.override.md', '../psalm.xml', '../../psalm.xml.dist', '../.lintr', '../Pulumi.yaml', '../../Pulumi.yml', '../Capfile', '../../capfile']

keptAboveWithOwn("host29: Gemini CLI's .env, Codex's AGENTS.override.md, Psalm, lintr, Pulumi and Capistrano above a workspace nested below /tmp", HOST29, ['AGENTS.override.md', 'psalm.xml'], 'psalm.xml')

// Found by an attacker's review (host29b), each planted above a nested workspace with
// `hostRisks: []`: luacheck loads `.luacheckrc` from the cwd or the nearest parent up to `/`
// ("Config is simply a Lua script executed by luacheck": `os.execute` runs); Thor's runner takes
// the nearest ancestor holding a `Thorfile` (`Thor::Runner#thorfiles`, `Pathname.pwd.ascend`) and
// loads it as Ruby on every `thor` command; Standard Ruby takes the nearest ancestor's
// `.standard.yml` (`FileFinder`, ascending) and `require`s each plugin's `require_path`.
const HOST29B = ['../.luacheckrc', '../../Thorfile', '../.standard.yml']

describe("host29b: luacheck's .luacheckrc, Thor's Thorfile and Standard Ruby's .standard.yml above a workspace nested below /tmp", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported; the workspace's own are its own`, async (t) => {
      const { ws } = nested(t, 'sandspawn-upward-')
      const r = await sh(`${plant(HOST29B)}; echo own > .luacheckrc; echo own > Thorfile; echo own > .standard.yml`, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      assertKeptOff(risks, ws, HOST29B, extra)
      for (const own of ['.luacheckrc', 'Thorfile', '.standard.yml']) {
        assert.ok(!risks.some((h) => h.path === path.join(ws, own)), `${own} at the workspace's top reported: ${JSON.stringify(risks)}`)
      }
      if (r.changeSet) await sandspawn.applyChangeSet(r.changeSet.id)
      assert.equal(fs.readFileSync(path.join(ws, 'Thorfile'), 'utf8'), 'own\n')
    })
  }
})

// The same review (host29b): commitlint (run by a commit-msg hook on the host's `git commit`)
// searches from the cwd upward for its configuration (`@commitlint/load`: cosmiconfig with
// `searchStrategy: 'global'`), and lint-staged (run by a pre-commit hook) lists the configuration
// files of the cwd and then of each parent up to `/` when git lists none (`listConfigFilesFromFs`);
// a JavaScript one runs as it is loaded, the others name plugins and commands. In a root
// lint-staged's are reported names; above a workspace they are no file of the project's.
const HOST29B_HOOKS = ['../commitlint.config.js', '../../.commitlintrc.yml', '../.commitlintrc', '../.lintstagedrc.js', '../../lint-staged.config.mjs', '../.lintstagedrc.json']

describe('host29b: commitlint and lint-staged configurations above a workspace nested below /tmp', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent and reported`, async (t) => {
      const { ws } = nested(t, 'sandspawn-upward-')
      const r = await sh(`${plant(HOST29B_HOOKS)}; echo own > commitlint.config.js`, options(ws, extra))
      assert.equal(r.exitCode, 0, show(r))
      const risks = r.hostRisks || []
      assertKeptOff(risks, ws, HOST29B_HOOKS, extra)
      assert.ok(!risks.some((h) => h.path === path.join(ws, 'commitlint.config.js')), JSON.stringify(risks))
      if (r.changeSet) await sandspawn.applyChangeSet(r.changeSet.id)
      assert.equal(fs.readFileSync(path.join(ws, 'commitlint.config.js'), 'utf8'), 'own\n')
    })
  }
})

// Found by an attacker's review (host30), each planted above a workspace nested below /tmp with
// hostRisks []: mise reads its configuration and file tasks from the cwd and every parent
// (a `[tasks]`-only file needs no `mise trust`; in a root these are reported names, above it they
// were nothing), treefmt takes the nearest ancestor's treefmt.toml and runs each formatter's
// command, AVA imports an ancestor's ava.config.* (up to the repository's top, `/` with none), c8
// finds `.c8rc*` up from the cwd and require()s the reporters it names, and Lerna's cosmiconfig
// search (`searchStrategy: 'global'`) takes an ancestor's lerna.json, whose `extends` it require()s
// on every lerna command.
const HOST30 = ['../mise.toml', '../../.mise.toml', '../mise.local.toml', '../mise-tasks/lint', '../.mise/tasks/lint', '../treefmt.toml', '../../.treefmt.toml', '../ava.config.mjs', '../../ava.config.js', '../.c8rc.json', '../.c8rc', '../lerna.json']

keptAboveWithOwn('host30: mise, treefmt, AVA, c8 and Lerna configurations above a workspace nested below /tmp', HOST30, ['lerna.json', 'treefmt.toml'], 'lerna.json')

// The same review (host30): JavaScript bundlers' and CSS engines' configurations found from the
// cwd up to `/` and run as they are loaded: tsup (JoyCon, `stopDir` the filesystem's root; a
// package.json counts only with a `tsup` key), tsdown and UnoCSS (unconfig: each source searched
// up to `/` before the next, so a parent's config comes before the workspace's own package.json).
// And Cloudflare's wrangler, which finds wrangler.json, wrangler.jsonc or wrangler.toml (and a
// `.wrangler/deploy/config.json` redirect) from the cwd up (find-up): its `[build] command` runs in
// sh before every `wrangler dev` and `wrangler deploy`.
const HOST30_JS = ['../tsup.config.ts', '../../tsup.config.mjs', '../tsdown.config.ts', '../../tsdown.config.mjs', '../uno.config.ts', '../unocss.config.js', '../wrangler.toml', '../../wrangler.jsonc', '../wrangler.json', '../.wrangler/deploy/config.json']

keptAboveWithOwn('host30: tsup, tsdown, UnoCSS and wrangler configurations above a workspace nested below /tmp', HOST30_JS, ['tsup.config.ts'], 'tsup.config.ts')

// Found by an attacker's review (host31): coc.nvim finds the nearest `.vim` directory up from each
// file opened (`findUp('.vim', ...)`, configuration/index.ts) and starts the `command` of each
// `languageserver` its `coc-settings.json` lists; one planted above a workspace nested below /tmp
// landed with `hostRisks: []` in every mode.
keptAboveWithOwn("host31: coc.nvim's .vim above a workspace nested below /tmp", ['../.vim/coc-settings.json', '../../.vim/coc-settings.json'], ['package.json'], 'package.json')

// mise's bare `mise` directory is no upward name: `$TMPDIR/mise` is mise's own temporary
// directory, and keeping it absent at /tmp's top moved mise's files aside in every sandboxed run
// that used mise (and reported it). Only where /tmp/mise does not exist already.
test('host30: /tmp/mise (mise\'s own temporary directory) stays writable at /tmp\'s top', { skip: fs.existsSync('/tmp/mise') && '/tmp/mise exists' }, async (t) => {
  const { ws } = nested(t, 'sandspawn-upward-')
  t.after(() => {
    removeTmpLeftovers(['mise'])
  })
  const r = await sh('mkdir -p /tmp/mise && echo x > /tmp/mise/lock && sleep 0.3 && cat /tmp/mise/lock', options(ws, {}))
  assert.equal(r.exitCode, 0, show(r))
  assert.ok(!(r.hostRisks || []).some((h) => h.path.startsWith('/tmp/mise')), JSON.stringify(r.hostRisks))
  assert.ok(fs.existsSync('/tmp/mise/lock'))
})

// Found by an attacker's review (hostb38): proto's shell activation reads `.prototools` from the cwd
// and every parent (ConfigMode::Upwards) at each change of directory and evals its `[env]` and
// `[shell] aliases` in the user's shell, unasked; one planted above a workspace nested below /tmp
// landed with `hostRisks: []` in every mode. zsh-autoenv's `.autoenv.zsh` (a protected name now)
// is kept there as every protected name is. (The workspace's own `.prototools` is a reported name.)
keptAboveWithOwn("hostb38: proto's .prototools and zsh-autoenv's .autoenv.zsh above a workspace nested below /tmp", ['../.prototools', '../../.prototools', '../.autoenv.zsh'], ['package.json'], 'package.json')

// Found by an attacker's review (host42): lazygit loads the `.lazygit.yml` of every parent of a
// repository over the user's config (its pager runs on every diff it shows, at start): one planted
// in the directories between /tmp and a workspace nested below it landed with `hostRisks: []` in
// every mode. A protected name now, kept there as every protected name is.
keptAboveWithOwn("host42: lazygit's .lazygit.yml above a workspace nested below /tmp", ['../.lazygit.yml', '../../.lazygit.yml'], ['package.json'], 'package.json')

// Found by an attacker's review (host45): jEnv takes the nearest `.java-version` (`.jenv-version`)
// and `.java-options` from the cwd up to `/` (libexec/jenv-version-file, jenv-options-file) for
// every java command its shims run, the version word joined to its versions directory unchecked;
// nodenv-vars sets every ancestor's `.nodenv-vars` variables (NODE_OPTIONS) for each command
// nodenv's shims run (bin/nodenv-vars). Planted above a workspace nested below /tmp with
// `hostRisks: []` in every mode. (In a root jEnv's are reported names; `.nodenv-vars` is protected.)
keptAboveWithOwn("host45: jEnv's .java-version and .java-options, nodenv-vars' .nodenv-vars above a workspace nested below /tmp", ['../.java-version', '../../.java-options', '../.jenv-version', '../../.nodenv-vars'], ['package.json'], 'package.json')

// The same review (host45): tfenv and tofuenv take the nearest `.terraform-version` and
// `.opentofu-version` from the cwd up to `/` (lib/tfenv-version-file.sh), the word joined to their
// versions directory unchecked: planted above a nested workspace with `hostRisks: []`.
keptAboveWithOwn("host45: tfenv's .terraform-version and tofuenv's .opentofu-version above a workspace nested below /tmp", ['../.terraform-version', '../../.opentofu-version'], ['package.json'], 'package.json')

// The same review (host45b): plenv, phpenv, luaenv, swiftenv, scalaenv, exenv and crenv take the
// nearest version file from the cwd up to `/` (libexec/*-version-file), the word joined to their
// versions directory unchecked (phpenv's check is in no release), and so does rbenv before 1.2.0
// (Debian 12's rbenv is 1.1.2), and goenv before 2.2.29 with `.go-version`: planted above a
// nested workspace with `hostRisks: []`.
keptAboveWithOwn("host45b: the *env version files and rbenv's .ruby-version above a workspace nested below /tmp", ['../.go-version', '../.perl-version', '../../.plenv-version', '../.php-version', '../../.lua-version', '../.luaenv-version', '../../.swift-version', '../.scala-version', '../../.exenv-version', '../.crystal-version', '../../.crenv-version', '../.ruby-version'], ['package.json'], 'package.json')
