'use strict'
// Issue 32: the reviewable workspace (`workspace: 'review'`), run for real under bwrap: nothing a
// run writes reaches the workspace until the change set is applied; apply lands exactly what the
// command saw; host edits meanwhile are conflicts; planted configuration is held back; a task of
// several runs is one change set; git works inside a task.

const { describe, test, before } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { sandspawn, tempTree, changeSetStore, show } = require('./security/helpers')

const { spawnSandboxed, applyChangeSet, discardChangeSet, readChange, listChangeSets, diffChange } = sandspawn

// Change sets of this file's runs live apart from the user's (and outside every writable root).
const STORE = changeSetStore('sandspawn-review-store-')

const REVIEW = { mode: 'workspace-write', workspace: 'review' }

/** What the workspace holds, as content: type, permission bits, bytes or target, entries. */
function contentTree(dir) {
  const out = {}
  const walk = (rel) => {
    const abs = path.join(dir, rel)
    const st = fs.lstatSync(abs)
    const mode = (st.mode & 0o7777).toString(8)
    if (st.isSymbolicLink()) out[rel] = `link ${fs.readlinkSync(abs)}`
    else if (st.isFile()) out[rel] = `file ${mode} ${fs.readFileSync(abs, 'latin1')}`
    else if (st.isDirectory()) {
      out[rel || '.'] = `dir ${mode}`
      for (const e of fs.readdirSync(abs).sort()) walk(path.join(rel, e))
    } else out[rel] = 'other'
  }
  walk('')
  return out
}

function write(ws, files) {
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true })
    fs.writeFileSync(path.join(ws, rel), text)
  }
}

async function review(script, ws, extra = {}) {
  const r = await spawnSandboxed(['bash', '-c', script], { cwd: ws, timeout: 30000, sandbox: { ...REVIEW, ...extra } })
  assert.equal(r.exitCode, 0, show(r))
  assert.ok(r.changeSet && /^cs-[0-9a-f]{16}$/.test(r.changeSet.id), JSON.stringify(r.changeSet))
  return r
}

const git = (cwd, ...args) => execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd, encoding: 'utf8' })

before(() => {
  assert.ok(fs.existsSync(STORE))
})

describe('review mode: the host sees nothing until apply', () => {
  test('rm -rf src leaves src until apply, and apply removes it', async (t) => {
    const { ws } = tempTree(t)
    write(ws, { 'src/a.txt': 'a', 'src/sub/b.txt': 'b', 'keep.txt': 'k' })
    const before = contentTree(ws)
    const r = await review('rm -rf src && test ! -e src && echo gone', ws)
    assert.match(r.stdout, /gone/)
    assert.deepEqual(contentTree(ws), before, 'the host tree is untouched')
    assert.deepEqual(r.changeSet.counts, { added: 0, modified: 0, deleted: 1 })
    assert.deepEqual(r.changeSet.changes, [{ path: path.join(ws, 'src'), kind: 'deleted', type: 'directory', mode: 0o755 }])
    assert.equal(r.changeSet.truncated, false)
    assert.deepEqual(r.changeSet.hostRisks, [])
    const out = await applyChangeSet(r.changeSet.id)
    assert.deepEqual(out, { applied: [path.join(ws, 'src')], conflicts: [], heldBack: [], revision: null }, 'applied whole: nothing is left')
    assert.ok(!fs.existsSync(path.join(ws, 'src')))
    assert.equal(fs.readFileSync(path.join(ws, 'keep.txt'), 'utf8'), 'k')
    await assert.rejects(applyChangeSet(r.changeSet.id), { code: 'ERR_SANDBOX_INVALID_OPTIONS' }, 'a set applied whole is gone')
  })

  test('a modify/add/delete/rename/symlink/mode mix applies exactly what the command saw', async (t) => {
    const { root, ws } = tempTree(t)
    write(ws, { 'keep.txt': 'old\n', 'src/a.txt': 'a', 'src/sub/c.txt': 'c', 'tool.sh': '#!/bin/sh\n', 'dir/x': 'x', 'same.txt': 's' })
    fs.symlinkSync('keep.txt', path.join(ws, 'link'))
    const script = [
      'echo changed > keep.txt', 'echo new > new.txt', 'chmod 755 new.txt', 'rm -rf src/sub', 'mv src/a.txt src/a2.txt',
      'mkdir d && mv dir d/', 'ln -sfn new.txt link', 'chmod 700 tool.sh', 'mkdir -p deep/er && echo z > deep/er/z',
      'rm -rf src && mkdir src && echo fresh > src/only.txt', 'touch same.txt', 'ln -s /etc/passwd abs-link',
    ].join(' && ')
    const mirror = path.join(root, 'mirror')
    fs.cpSync(ws, mirror, { recursive: true, verbatimSymlinks: true })
    execFileSync('bash', ['-c', script], { cwd: mirror })
    const r = await review(`${script} && find . | sort`, ws)
    const counts = r.changeSet.counts
    assert.ok(counts.added > 0 && counts.modified > 0 && counts.deleted > 0, JSON.stringify(r.changeSet))
    assert.ok(!r.changeSet.changes.some((c) => c.path.endsWith('same.txt')), 'touch alone is no change')
    const link = r.changeSet.changes.find((c) => c.path === path.join(ws, 'link'))
    assert.deepEqual(link, { path: path.join(ws, 'link'), kind: 'modified', type: 'symlink', mode: 0o777, target: 'new.txt' })
    const added = r.changeSet.changes.find((c) => c.path === path.join(ws, 'new.txt'))
    assert.deepEqual(added, { path: path.join(ws, 'new.txt'), kind: 'added', type: 'file', mode: 0o755, size: 4 })
    assert.notDeepEqual(contentTree(ws), contentTree(mirror))
    assert.deepEqual(await readChange(r.changeSet.id, path.join(ws, 'keep.txt')), Buffer.from('changed\n'))
    assert.equal(await readChange(r.changeSet.id, path.join(ws, 'src/sub/c.txt')), null, 'deleted: null')
    assert.match(await diffChange(r.changeSet.id, path.join(ws, 'keep.txt')), /-old\n\+changed/)
    const out = await applyChangeSet(r.changeSet.id)
    assert.deepEqual(out.conflicts, [])
    assert.deepEqual(out.heldBack, [])
    assert.deepEqual(contentTree(ws), contentTree(mirror))
  })

  test('a host edit during the task is a conflict: left alone, the rest lands, force lands it', async (t) => {
    const { ws, out: outside } = tempTree(t)
    write(ws, { 'a.txt': 'base\n', 'b.txt': 'base\n', 'gone.txt': 'g' })
    // Outside the workspace: an overlay need not show what changes in its lower layer meanwhile.
    const marker = path.join(outside, 'edited-by-host')
    let wrote
    const written = new Promise((resolve) => (wrote = resolve))
    const run = spawnSandboxed(['bash', '-c', `echo task > a.txt; echo task > b.txt; rm gone.txt; echo written; while [ ! -e ${marker} ]; do sleep 0.05; done`], {
      cwd: ws, timeout: 30000, sandbox: REVIEW, onOutput: (c) => String(c.data).includes('written') && wrote(),
    })
    // Once the command has written its side: the host edits a.txt and gone.txt, then says so.
    await written
    fs.writeFileSync(path.join(ws, 'a.txt'), 'host\n')
    fs.appendFileSync(path.join(ws, 'gone.txt'), 'more')
    fs.writeFileSync(marker, '')
    const r = await run
    assert.equal(r.exitCode, 0, show(r))
    const out = await applyChangeSet(r.changeSet.id)
    assert.deepEqual(out.applied, [path.join(ws, 'b.txt')])
    assert.deepEqual(out.conflicts.map((c) => c.path).sort(), [path.join(ws, 'a.txt'), path.join(ws, 'gone.txt')])
    assert.match(out.conflicts[0].reason, /changed on the host/)
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'host\n', 'a conflict is left as the host has it')
    assert.ok(fs.existsSync(path.join(ws, 'gone.txt')))
    assert.equal(fs.readFileSync(path.join(ws, 'b.txt'), 'utf8'), 'task\n')
    const listed = await listChangeSets({ cwd: ws })
    assert.deepEqual(listed.map((s) => s.id), [r.changeSet.id], 'the set stays with its conflicts')
    const forced = await applyChangeSet(r.changeSet.id, { force: true })
    assert.deepEqual(forced.conflicts, [])
    assert.equal(fs.readFileSync(path.join(ws, 'a.txt'), 'utf8'), 'task\n')
    assert.ok(!fs.existsSync(path.join(ws, 'gone.txt')))
    assert.deepEqual(await listChangeSets({ cwd: ws }), [])
  })

  // Found by an attacker's review: the set showed one `M src`, and apply removed the directory with
  // the host's edits made inside it after the set began, with no conflict.
  test('a directory replaced by a file is shown deleted, and host edits inside it are a conflict', async (t) => {
    const { ws } = tempTree(t)
    write(ws, { 'src/deep/important.c': 'int main(){}\n' })
    const r = await review('rm -rf src && echo "not a dir any more" > src', ws)
    assert.deepEqual(r.changeSet.counts, { added: 1, modified: 0, deleted: 1 })
    assert.deepEqual(r.changeSet.changes.map((c) => [c.kind, c.type]), [['deleted', 'directory'], ['added', 'file']])
    write(ws, { 'src/deep/important.c': 'int main(){ return 42; }\n', 'src/deep/new-work.c': 'more\n' })
    const out = await applyChangeSet(r.changeSet.id)
    assert.deepEqual(out.applied, [])
    assert.deepEqual(out.conflicts.map((c) => c.path), [path.join(ws, 'src')])
    assert.equal(fs.readFileSync(path.join(ws, 'src/deep/important.c'), 'utf8'), 'int main(){ return 42; }\n')
    assert.ok(fs.existsSync(path.join(ws, 'src/deep/new-work.c')))
    await discardChangeSet(r.changeSet.id)
  })

  test('two runs continue one change set; the second sees the first one\'s writes', async (t) => {
    const { ws } = tempTree(t)
    write(ws, { 'a.txt': 'a' })
    const first = await review('echo one > one.txt && rm a.txt', ws)
    const second = await review('cat one.txt && test ! -e a.txt && echo two > two.txt', ws, { changeSet: first.changeSet.id })
    assert.equal(second.stdout, 'one\n')
    assert.equal(second.changeSet.id, first.changeSet.id)
    assert.deepEqual(second.changeSet.counts, { added: 2, modified: 0, deleted: 1 })
    assert.ok(fs.existsSync(path.join(ws, 'a.txt')) && !fs.existsSync(path.join(ws, 'one.txt')))
    const out = await applyChangeSet(first.changeSet.id, { paths: [path.join(ws, 'two.txt')] })
    assert.deepEqual(out.applied, [path.join(ws, 'two.txt')])
    const rest = await listChangeSets({ cwd: ws })
    assert.deepEqual(rest.map((s) => [s.id, s.counts]), [[first.changeSet.id, { added: 1, modified: 0, deleted: 1 }]])
    await discardChangeSet(first.changeSet.id)
    assert.ok(!fs.existsSync(path.join(ws, 'one.txt')) && fs.existsSync(path.join(ws, 'a.txt')))
    await assert.rejects(
      spawnSandboxed(['true'], { cwd: ws, sandbox: { ...REVIEW, changeSet: first.changeSet.id } }),
      { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /no change set/ },
    )
  })

  test('git commit inside a task works, and lands with apply', async (t) => {
    const { ws } = tempTree(t, { git: true })
    write(ws, { 'f.txt': 'one\n' })
    git(ws, 'add', '.')
    git(ws, 'commit', '-qm', 'first')
    const r = await review("echo two >> f.txt && git -c user.name=t -c user.email=t@t commit -qam second && git log --format=%s", ws)
    assert.equal(r.stdout, 'second\nfirst\n')
    assert.equal(git(ws, 'log', '--format=%s'), 'first\n', 'the host repository has not moved')
    assert.deepEqual(r.changeSet.hostRisks, [])
    const out = await applyChangeSet(r.changeSet.id)
    assert.deepEqual(out.conflicts, [])
    assert.deepEqual(out.heldBack, [])
    assert.equal(git(ws, 'log', '--format=%s'), 'second\nfirst\n')
    assert.equal(git(ws, 'status', '--porcelain'), '')
    git(ws, 'fsck', '--no-progress')
  })
})

describe('review mode: planted configuration is held back', () => {
  test('a core.fsmonitor planted in a nested repository, hooks and a new repository are held back', async (t) => {
    const { ws, out: outside } = tempTree(t, { git: true })
    execFileSync('git', ['init', '-q', path.join(ws, 'vendor/lib')])
    const evil = path.join(outside, 'evil.sh')
    const script = [
      `git -C vendor/lib config core.fsmonitor ${evil}`, 'printf "#!/bin/sh\\n" > .git/hooks/pre-commit', 'chmod +x .git/hooks/pre-commit',
      `git init -q fresh && git -C fresh config core.fsmonitor ${evil}`, 'mkdir -p .vscode && echo {} > .vscode/tasks.json', 'echo fine > ok.txt',
    ].join(' && ')
    const r = await review(script, ws)
    const risks = r.changeSet.hostRisks.map((h) => [h.path, h.kind])
    assert.deepEqual(risks.sort(), [
      [path.join(ws, '.git/hooks/pre-commit'), 'hooks-written'],
      [path.join(ws, '.vscode'), 'protected-name-created'],
      [path.join(ws, 'fresh/.git'), 'repository-created'],
      [path.join(ws, 'vendor/lib/.git/config'), 'hooks-written'],
    ])
    assert.match(r.changeSet.hostRisks.find((h) => h.path.endsWith('lib/.git/config')).detail, /core\.fsmonitor/)
    const out = await applyChangeSet(r.changeSet.id)
    assert.deepEqual(out.applied.filter((p) => p.endsWith('ok.txt')), [path.join(ws, 'ok.txt')])
    assert.deepEqual(out.heldBack.map((h) => h.path).sort(), [
      path.join(ws, '.git/hooks/pre-commit'), path.join(ws, '.vscode'), path.join(ws, 'fresh/.git'), path.join(ws, 'vendor/lib/.git/config'),
    ])
    assert.doesNotMatch(fs.readFileSync(path.join(ws, 'vendor/lib/.git/config'), 'utf8'), /fsmonitor/)
    assert.ok(!fs.existsSync(path.join(ws, '.git/hooks/pre-commit')))
    assert.ok(!fs.existsSync(path.join(ws, 'fresh/.git')) && fs.existsSync(path.join(ws, 'fresh')))
    assert.ok(!fs.existsSync(path.join(ws, '.vscode')))
    // force alone is not enough: the risky entry itself must be named.
    const forced = await applyChangeSet(r.changeSet.id, { force: true })
    assert.equal(forced.heldBack.length, 4)
    const named = await applyChangeSet(r.changeSet.id, { paths: [path.join(ws, '.vscode')], force: true })
    assert.deepEqual(named.applied, [path.join(ws, '.vscode'), path.join(ws, '.vscode/tasks.json')])
    await discardChangeSet(r.changeSet.id)
  })

  // Found by an attacker's review: below a name that is not UTF-8 the judge looked at the lossy
  // path, saw nothing there, and the host's later `git status` ran the planted fsmonitor.
  test('a git directory made below a name that is not UTF-8 is held back', async (t) => {
    const { ws, out: outside } = tempTree(t)
    const marker = path.join(outside, 'fsmonitor-ran')
    const script = `d=$(printf 'x\\377'); git init -q --bare "$d" && mkdir "$d/sub" && git -C "$d" config core.bare false && git -C "$d" config core.worktree .. && git -C "$d" config core.fsmonitor 'touch ${marker}; false'`
    const r = await review(script, ws)
    assert.deepEqual(r.changeSet.hostRisks.map((h) => [h.path, h.kind]), [[path.join(ws, 'x\\xff'), 'git-directory-created']])
    const out = await applyChangeSet(r.changeSet.id)
    assert.ok(out.heldBack.length > 0, JSON.stringify(out))
    const raw = Buffer.concat([Buffer.from(ws + '/x'), Buffer.from([0xff])])
    assert.ok(!fs.existsSync(Buffer.concat([raw, Buffer.from('/config')])), 'the planted configuration stays in the set')
    await discardChangeSet(r.changeSet.id)
  })
})

describe('review mode: a new set is made ahead of time', () => {
  test('a run that begins a set leaves one spare, which the next new set becomes', async (t) => {
    const { ws } = tempTree(t, { git: true })
    const spares = () => fs.readdirSync(STORE).filter((n) => n.startsWith('.spare-'))
    const first = await review('true', ws)
    const ready = spares().filter((n) => !n.endsWith('.part'))
    assert.ok(ready.length >= 1, `no spare after a run: ${fs.readdirSync(STORE)}`)
    assert.deepEqual(spares(), ready, 'a partial spare outlived its run')
    const inodes = new Set(ready.map((n) => fs.statSync(path.join(STORE, n)).ino))
    const second = await review('echo x > f', ws)
    assert.ok(inodes.has(fs.statSync(path.join(STORE, second.changeSet.id)).ino), 'the second set is not a spare made before it')
    assert.deepEqual(second.changeSet.counts, { added: 1, deleted: 0, modified: 0 })
    const listed = (await listChangeSets({ cwd: ws })).map((c) => c.id).sort()
    assert.deepEqual(listed, [first.changeSet.id, second.changeSet.id].sort(), 'spares are listed as sets')
    for (const r of [first, second]) await discardChangeSet(r.changeSet.id)
  })
})

/** Bytes this process has read through read(2) and its kin so far (Linux's `rchar`). */
const bytesRead = () => Number(fs.readFileSync('/proc/self/io', 'utf8').match(/^rchar: (\d+)$/m)[1])

// Found by an attacker's review: sparse files cost the host what they never cost the run.
describe('review mode: sparse files', () => {
  test('a sparse file rewritten at the same size is compared by its data, not its holes', async (t) => {
    const { ws } = tempTree(t)
    execFileSync('truncate', ['-s', '2G', path.join(ws, 'data.bin')])
    const before = bytesRead()
    const r = await review('rm data.bin && truncate -s 2G data.bin', ws)
    const read = bytesRead() - before
    assert.ok(read < 256 * 1024 * 1024, `${read} bytes read to compare two 2 GiB files without data`)
    await discardChangeSet(r.changeSet.id)
  })

  test('apply writes a sparse file sparse', async (t) => {
    const { ws } = tempTree(t)
    const r = await review('truncate -s 1G sparse.bin && printf x >> sparse.bin', ws)
    const out = await applyChangeSet(r.changeSet.id)
    assert.deepEqual(out.applied, [path.join(ws, 'sparse.bin')])
    const st = fs.statSync(path.join(ws, 'sparse.bin'))
    assert.equal(st.size, 1024 * 1024 * 1024 + 1)
    assert.ok(st.blocks * 512 < 16 * 1024 * 1024, `${st.blocks * 512} bytes allocated on the host`)
  })
})

describe('review mode: options', () => {
  test('maxChanges bounds the list, not the counts', async (t) => {
    const { ws } = tempTree(t)
    const r = await review('for i in $(seq 1 30); do echo $i > f$i; done', ws, { maxChanges: 10 })
    assert.deepEqual(r.changeSet.counts, { added: 30, modified: 0, deleted: 0 })
    assert.equal(r.changeSet.changes.length, 10)
    assert.equal(r.changeSet.truncated, true)
    await discardChangeSet(r.changeSet.id)
  })

  // A misspelt option was taken silently (showChangeSet({ maxChange: 5 }) listed 10,000; a number
  // for the options listed them too): refused as every other option bag of sandspawn refuses it.
  test('showChangeSet refuses an unknown option and options that are not an object', async () => {
    const refused = (re) => (e) => e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && re.test(e.message)
    await assert.rejects(sandspawn.showChangeSet('any', { maxChange: 5 }), refused(/options\.maxChange: unknown option \(accepted: maxChanges\)/))
    await assert.rejects(sandspawn.showChangeSet('any', 5), refused(/options/))
  })

  test('refused where it cannot be honoured, and reported by sandboxCapabilities', async (t) => {
    const { ws } = tempTree(t)
    await assert.rejects(spawnSandboxed(['true'], { cwd: ws, sandbox: { mode: 'read-only', workspace: 'review' } }), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    await assert.rejects(spawnSandboxed(['true'], { cwd: ws, sandbox: { mode: 'workspace-write', changeSet: 'cs-0123456789abcdef' } }), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    await assert.rejects(spawnSandboxed(['true'], { cwd: ws, sandbox: { ...REVIEW, workspace: 'cow' } }), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    await assert.rejects(spawnSandboxed(['true'], { cwd: ws, sandbox: 'danger-full-access', extendEnv: true }).then(() => spawnSandboxed(['true'], { cwd: ws, sandbox: { mode: 'danger-full-access', workspace: 'review' } })), { code: 'ERR_SANDBOX_INVALID_OPTIONS' })
    assert.throws(() => sandspawn.buildSandboxCommand(['true'], { cwd: ws, sandbox: REVIEW }), { code: 'ERR_SANDBOX_UNSUPPORTED' })
    assert.throws(() => sandspawn.buildSandboxCommand(['true'], { cwd: ws, sandbox: REVIEW, platform: 'darwin' }), { code: 'ERR_SANDBOX_UNSUPPORTED', message: /macOS/ })
    const caps = await sandspawn.sandboxCapabilities()
    assert.deepEqual(caps.review, { available: true })
  })
})
