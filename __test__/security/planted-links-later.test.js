'use strict'

// Found by an attacker's review (quiet22, nm_link.js): a symlink into `node_modules` (which the
// walk never enters) was judged only by the run that made it, when it led to nothing yet. A later
// run planted a repository where it leads (core.fsmonitor), a third one wrote its configuration
// again, and the host's `cd src/lib && git status` ran the fsmonitor: no run said a word. Each
// later run now judges such links again after it, a host-made one too.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { tempTree, show, sh, which } = require('./helpers')

const NO_GIT = which('git') === null && 'git is not installed'
const WW = { mode: 'workspace-write' }
const PLANT = [
  'set -e',
  'mkdir -p node_modules/x/.git/objects node_modules/x/.git/refs',
  "echo 'ref: refs/heads/main' > node_modules/x/.git/HEAD",
  "printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' > node_modules/x/.git/config",
  'echo planted',
].join('\n')
const REWRITE = "printf '[core]\\n\\tfsmonitor = \"touch PWNED; false\"\\n' >> node_modules/x/.git/config 2>/dev/null && echo wrote || echo refused"

function workspace(t) {
  const tree = tempTree(t)
  execFileSync('git', ['init', '-q', tree.ws])
  fs.mkdirSync(path.join(tree.ws, 'src'))
  fs.mkdirSync(path.join(tree.ws, 'node_modules/x'), { recursive: true })
  return tree
}

function linkRisk(r, ws) {
  return r.hostRisks.find((h) => h.path === path.join(ws, 'src/lib'))
}

describe('a symlink into node_modules judged again by later runs', { skip: NO_GIT }, () => {
  for (const mode of ['bwrap', 'landlock']) {
    const options = (ws) => ({ cwd: ws, sandbox: WW, ...(mode === 'landlock' ? { linux: { allow: ['landlock'] } } : {}) })

    test(`${mode}: a link made by one run, a repository planted where it leads by the next: the next run reports it, a third cannot write its configuration`, async (t) => {
      const { ws } = workspace(t)
      const r1 = await sh('ln -s ../node_modules/x src/lib && echo linked', options(ws))
      assert.equal(r1.stdout, 'linked\n', show(r1))
      // Nothing there yet, but the names inside node_modules are not protected: the link is said
      // (host25, nm_dirlink.js), not as a repository.
      assert.deepEqual(r1.hostRisks.map((h) => [h.kind, path.relative(ws, h.path)]), [['scan-incomplete', 'src/lib']], JSON.stringify(r1.hostRisks))
      assert.match(r1.hostRisks[0].detail, /not protected/)
      const r2 = await sh(PLANT, options(ws))
      assert.equal(r2.stdout, 'planted\n', show(r2))
      const risk = linkRisk(r2, ws)
      assert.ok(risk, `the link is reported by the run that planted: ${JSON.stringify(r2.hostRisks, null, 1)}`)
      assert.equal(risk.kind, 'git-directory-created')
      assert.match(risk.detail, /node_modules\/x\/\.git/)
      assert.match(risk.detail, /core\.fsmonitor/)
      const r3 = await sh(REWRITE, options(ws))
      assert.equal(r3.stdout, 'refused\n', `the repository the link leads to is kept read-only: ${show(r3)}`)
    })

    test(`${mode}: a link the host made before any run, a repository planted where it leads: the run reports it`, async (t) => {
      const { ws } = workspace(t)
      fs.symlinkSync('../node_modules/x', path.join(ws, 'src/lib'))
      const r = await sh(PLANT, options(ws))
      assert.equal(r.stdout, 'planted\n', show(r))
      const risk = linkRisk(r, ws)
      assert.ok(risk, `the link is reported: ${JSON.stringify(r.hostRisks, null, 1)}`)
      assert.equal(risk.kind, 'git-directory-created')
      assert.match(risk.detail, /core\.fsmonitor/)
      const r2 = await sh(REWRITE, options(ws))
      assert.equal(r2.stdout, 'refused\n', `the repository the link leads to is kept read-only now: ${show(r2)}`)
    })
  }
})

// Found by an attacker's review (rfix23c, nm_alias.js): `src/lib -> ../alias/x`, `alias ->
// node_modules`. Only `alias`, whose own text names node_modules, was kept; a repository the next
// run planted at node_modules/x was not reported at `src/lib`, and the host's `cd src/lib && git
// status` ran its fsmonitor. A link is now judged by where its way leads.
test('a link into node_modules through another link: a repository planted where it leads is reported, then kept read-only', { skip: NO_GIT }, async (t) => {
  const { ws } = workspace(t)
  const options = { cwd: ws, sandbox: WW }
  const r1 = await sh('ln -s node_modules alias && ln -s ../alias/x src/lib && echo linked', options)
  assert.equal(r1.stdout, 'linked\n', show(r1))
  const r2 = await sh(PLANT, options)
  assert.equal(r2.stdout, 'planted\n', show(r2))
  const risk = linkRisk(r2, ws)
  assert.ok(risk, `the link is reported by the run that planted: ${JSON.stringify(r2.hostRisks, null, 1)}`)
  assert.equal(risk.kind, 'git-directory-created')
  assert.match(risk.detail, /core\.fsmonitor/)
  const r3 = await sh(REWRITE, options)
  assert.equal(r3.stdout, 'refused\n', `the repository the link leads to is kept read-only: ${show(r3)}`)
})

// Found by an attacker's review (rfix22, nm_dangling_git.js): git passes over a `.git` that is no
// repository (a dangling symlink, an empty directory) and takes the directory itself for a git
// directory; sandspawn kept `x/.git` and left `x/config` writable, and the host's `git status` in
// `src/lib` ran the fsmonitor a run appended there.
describe('a link into node_modules to a directory that is a git directory itself, beside a .git that is none', { skip: NO_GIT }, () => {
  for (const variant of ['dangling', 'empty']) {
    for (const mode of ['bwrap', 'landlock']) {
      test(`${mode}, ${variant} .git: a run cannot write the git directory's configuration`, async (t) => {
        const { ws } = workspace(t)
        const x = path.join(ws, 'node_modules/x')
        if (variant === 'dangling') fs.symlinkSync('/nonexistent-sandspawn-test', path.join(x, '.git'))
        else fs.mkdirSync(path.join(x, '.git'))
        fs.mkdirSync(path.join(x, 'objects'))
        fs.mkdirSync(path.join(x, 'refs'))
        fs.writeFileSync(path.join(x, 'HEAD'), 'ref: refs/heads/main\n')
        fs.writeFileSync(path.join(x, 'config'), `[core]\n\tworktree = ${path.join(ws, 'src/lib')}\n`)
        fs.symlinkSync('../node_modules/x', path.join(ws, 'src/lib'))
        const o = { cwd: ws, sandbox: WW, ...(mode === 'landlock' ? { linux: { allow: ['landlock'] } } : {}) }
        const r = await sh("printf '\\tfsmonitor = \"touch PWNED; false\"\\n' >> node_modules/x/config 2>/dev/null && echo wrote || echo refused", o)
        assert.equal(r.stdout, 'refused\n', `the git directory git uses is kept read-only: ${show(r)}`)
        try { execFileSync('git', ['status'], { cwd: path.join(ws, 'src/lib'), stdio: 'ignore' }) } catch {}
        assert.equal(fs.existsSync(path.join(ws, 'src/lib/PWNED')) || fs.existsSync(path.join(ws, 'PWNED')), false)
      })
    }
  }
})

// Found by an attacker's review (rfix22, nm_link_other_ws.js): `A/src/lib -> B/node_modules/x`; a run
// in B planted `x/.git` (node_modules: its walk does not look), and no run in A said it, since it lies
// in none of A's roots. Every run in A says it (rfix22b: telling a change there by its git
// directory's files missed an index rewritten in place to name a planted submodule checkout).
test('a link into another workspace\'s node_modules: the next run in its own workspace reports a repository planted there', { skip: NO_GIT }, async (t) => {
  const a = workspace(t).ws
  const b = workspace(t).ws
  fs.symlinkSync(path.join(b, 'node_modules/x'), path.join(a, 'src/lib'))
  const r1 = await sh(PLANT, { cwd: b, sandbox: WW })
  assert.equal(r1.stdout, 'planted\n', show(r1))
  const r2 = await sh('true', { cwd: a, sandbox: WW })
  const risk = linkRisk(r2, a)
  assert.ok(risk, `the link is reported by the next run in A: ${JSON.stringify(r2.hostRisks, null, 1)}`)
  assert.match(risk.detail, /core\.fsmonitor/)
  assert.equal(risk.kind, 'scan-incomplete')
  assert.match(risk.detail, /outside the run's roots/)
  const r3 = await sh('true', { cwd: a, sandbox: WW })
  assert.ok(linkRisk(r3, a), 'said by every run: what changed there is not judged')
})

// Found by an attacker's review (rfix22, nm_many_dos.js): 1,000 links to 1,000 repositories in
// node_modules made every later run carve them all (1.8 s a run). Past a bound they are judged after
// the run only, and the result says so.
test('many links into node_modules to repositories: past the bound, said in notEnforced and still judged after the run', { skip: NO_GIT }, async (t) => {
  const { ws } = workspace(t)
  fs.mkdirSync(path.join(ws, 'l'))
  for (let i = 0; i < 24; i++) {
    const g = path.join(ws, `node_modules/x${i}/.git`)
    for (const d of ['objects', 'refs']) fs.mkdirSync(path.join(g, d), { recursive: true })
    fs.writeFileSync(path.join(g, 'HEAD'), 'ref: refs/heads/main\n')
    fs.symlinkSync(`../node_modules/x${i}`, path.join(ws, `l/x${i}`))
  }
  const r = await sh("printf '[core]\\n\\tfsmonitor = x\\n' > node_modules/x23/.git/config && echo wrote", { cwd: ws, sandbox: WW })
  assert.match(r.sandboxDetails.notEnforced.join('\n'), /lead to more than 16 repositories the walk does not find/, show(r))
  const risk = r.hostRisks.find((h) => h.path === path.join(ws, 'l/x23'))
  assert.ok(risk, `a change past the bound is reported: ${JSON.stringify(r.hostRisks, null, 1)}`)
  // Past the bound every link is said after every run, changed or not (rfix22b: a husky hooks
  // directory or a submodule's config changed there went unsaid).
  const past = r.hostRisks.filter((h) => h.kind === 'scan-incomplete' && /not kept read-only/.test(h.detail))
  assert.equal(past.length, 24 - 16, JSON.stringify(r.hostRisks, null, 1))
  const again = await sh('true', { cwd: ws, sandbox: WW })
  assert.equal(again.hostRisks.filter((h) => h.kind === 'scan-incomplete' && /not kept read-only/.test(h.detail)).length, 24 - 16)
})

// Found by an attacker's review (rfix23, nm_nested_workspace.js): nested workspaces, a monorepo W
// and its package W/pkg, both a run's cwd. `W/lib -> pkg/node_modules/x`: a run in W/pkg planted
// `x/.git` with core.fsmonitor (its walk skips node_modules, and it holds no link there), and W's
// next run took the repository for its baseline: no run said it, and the host's `cd W/lib && git
// status` ran the fsmonitor. Every run in W says a repository there now, whoever planted it.
test('nested workspaces: a repository a run in the package plants where the monorepo\'s link leads is said by every run in the monorepo', { skip: NO_GIT }, async (t) => {
  const { ws } = tempTree(t)
  execFileSync('git', ['init', '-q', ws])
  const pkg = path.join(ws, 'pkg')
  fs.mkdirSync(path.join(pkg, 'node_modules/x'), { recursive: true })
  fs.symlinkSync('pkg/node_modules/x', path.join(ws, 'lib'))
  const r1 = await sh('true', { cwd: ws, sandbox: WW })
  assert.deepEqual(r1.hostRisks, [], `nothing there yet: ${show(r1)}`)
  const r2 = await sh(PLANT, { cwd: pkg, sandbox: WW })
  assert.equal(r2.stdout, 'planted\n', show(r2))
  for (const run of [1, 2]) {
    const r = await sh('true', { cwd: ws, sandbox: WW })
    const risk = r.hostRisks.find((h) => h.path === path.join(ws, 'lib'))
    assert.ok(risk, `run ${run} in W says the link: ${JSON.stringify(r.hostRisks, null, 1)}`)
    // Changed since the baseline as far as ctimes tell (within their slack of it), or not: said either way.
    assert.ok(['scan-incomplete', 'git-directory-created'].includes(risk.kind), JSON.stringify(risk))
    assert.match(risk.detail, /pkg\/node_modules\/x\/\.git/)
    assert.match(risk.detail, /core\.fsmonitor/)
  }
})

// Found by an attacker's review (rfix24, chain_dos.js): a run made `a0 -> .`, `a1 -> a0` ... `a9 ->
// a8` and `l0 -> a9/a9/a9/a9/a9/a9/a9/x0`, more hops than the kernel follows (40). The look at it
// took the part past the hops as written, kept `ws/a9/a9/a9/.git` (symlinks on it) read-only, and
// every later run failed (ERR_SANDBOX_SETUP_FAILED). Such a way is not followed: later runs run,
// and say so before (notEnforced) and after (scan-incomplete) each.
for (const via of ['', 'node_modules/']) {
  test(`a link whose way takes more than 40 symlinks${via ? ' into node_modules' : ''}: later runs run and say it`, { skip: NO_GIT }, async (t) => {
    const { ws } = workspace(t)
    const plant = `ln -s . a0; for i in 1 2 3 4 5 6 7 8 9; do ln -s a$((i-1)) a$i; done; ln -s a9/a9/a9/a9/a9/a9/a9/${via}x0 l0 && echo planted`
    const r1 = await sh(plant, { cwd: ws, sandbox: WW })
    assert.equal(r1.stdout, 'planted\n', show(r1))
    for (const run of [1, 2]) {
      const r = await sh('echo hi > f && echo ok', { cwd: ws, sandbox: WW })
      assert.equal(r.stdout, 'ok\n', `run ${run} after it: ${show(r)}`)
      assert.match(r.sandboxDetails.notEnforced.join('\n'), /l0 .*more than 40 symlinks/, show(r))
      const risk = r.hostRisks.find((h) => h.path === path.join(ws, 'l0'))
      assert.equal(risk?.kind, 'scan-incomplete', JSON.stringify(r.hostRisks, null, 1))
    }
  })
}

// Found fixing the above: the part of a way past a missing name was taken as written, `..` taken
// away lexically, so `l -> missing/../sub` named `ws/sub`, a link to a repository, and the
// repository "at" `ws/sub/.git` failed every later run's setup in the same way.
test('a link through a missing name and `..` to a link to a repository: later runs run', { skip: NO_GIT }, async (t) => {
  const { ws } = workspace(t)
  const plant = [
    'mkdir -p node_modules/p/.git/objects node_modules/p/.git/refs',
    "echo 'ref: refs/heads/main' > node_modules/p/.git/HEAD",
    'ln -s node_modules/p sub && ln -s missing/../sub l && echo planted',
  ].join(' && ')
  const r1 = await sh(plant, { cwd: ws, sandbox: WW })
  assert.equal(r1.stdout, 'planted\n', show(r1))
  for (const run of [1, 2]) {
    const r = await sh('echo ok', { cwd: ws, sandbox: WW })
    assert.equal(r.stdout, 'ok\n', `run ${run} after it: ${show(r)}`)
  }
})
