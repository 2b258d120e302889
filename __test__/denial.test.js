'use strict'
// Denial classification through the public API: every Codex vector, the labelled corpus of real
// bwrap outputs, policy-aware precision, and the CLI's one-line note.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')
const os = require('node:os')
const { spawnSync } = require('node:child_process')
const { isLikelySandboxDenied, classifySandboxDenial, spawnSandboxed, SandboxError } = require('..')
const { START_BOUND } = require('./fixtures/spawn-helpers')

const C = 1024 * 1024
const out = (exitCode, stderr = '', extra = {}) => ({ exitCode, stdout: '', stderr, aggregatedOutput: '', ...extra })

// codex-rs core/src/exec_tests.rs (reference codex.md §2.3, vectors 1–8).
const CODEX_EXEC = [
  ['1: linux exit 1, no output', 'bwrap', out(1), false],
  ['2: linux operation not permitted', 'bwrap', out(1, 'Operation not permitted'), true],
  ['3: linux 127 command not found', 'bwrap', out(127, 'command not found'), false],
  ['4: no sandbox never denies', 'none', out(1, 'Operation not permitted'), false],
  ['5: exit 0 with network decision', 'none', out(0, '', { aggregatedOutput: 'CODEX_NETWORK_POLICY_DECISION {"decision":"ask","reason":"not_allowed"}' }), false],
  ['6: seatbelt read-only in aggregated', 'seatbelt', out(101, '', { aggregatedOutput: 'cargo failed: Read-only file system when writing target' }), true],
  ['7: linux exit 0 is never denied', 'bwrap', out(0, '', { aggregatedOutput: 'CODEX_NETWORK_POLICY_DECISION {"decision":"ask"}' }), false],
  ['8: linux SIGSYS exit 159', 'bwrap', out(159), true],
]

for (const [name, type, output, expected] of CODEX_EXEC) {
  test(`isLikelySandboxDenied codex vector ${name}`, () => {
    assert.equal(isLikelySandboxDenied(type, output), expected)
  })
}

// codex-rs sandboxing/src/violation_tests.rs (vectors 9–16).
test('codex vectors 9a–g: each keyword alone is a denial', () => {
  for (const kw of ['operation not permitted', 'permission denied', 'read-only file system', 'seccomp', 'sandbox', 'landlock', 'failed to write file']) {
    assert.equal(isLikelySandboxDenied('bwrap', out(1, kw)), true, kw)
    assert.notEqual(classifySandboxDenial({ sandboxType: 'bwrap', ...out(1, kw) }), null, kw)
  }
})

test('codex vectors 10a–c: seccomp/sandbox/landlock are policy_denied with the keyword as snippet', () => {
  for (const kw of ['seccomp', 'sandbox', 'landlock']) {
    const d = classifySandboxDenial({ sandboxType: 'bwrap', ...out(1, kw) })
    assert.equal(d.reason, 'policy_denied')
    assert.equal(d.path, null)
    assert.equal(d.snippet, kw)
  }
})

test('codex vectors 11a–d: quick reject, keyword beats 127, exit 0, no sandbox', () => {
  assert.equal(classifySandboxDenial({ sandboxType: 'bwrap', ...out(127, 'command not found') }), null)
  assert.equal(classifySandboxDenial({ sandboxType: 'bwrap', ...out(127, 'Permission denied') }).reason, 'permission_denied')
  assert.equal(classifySandboxDenial({ sandboxType: 'bwrap', ...out(0, 'Operation not permitted') }), null)
  assert.equal(classifySandboxDenial({ sandboxType: 'none', ...out(1, 'Operation not permitted') }), null)
})

test('codex vectors 12–13: seatbelt path extraction, including İ (length changes when lowercased)', () => {
  for (const p of ['/private/tmp/denied', '/private/tmp/İ-denied']) {
    const stderr = `bash: ${p}: Operation not permitted`
    const d = classifySandboxDenial({ sandboxType: 'seatbelt', ...out(1, stderr) })
    assert.deepEqual(d, { reason: 'operation_not_permitted', kind: 'filesystem', path: p, snippet: stderr, host: null })
  }
})

test('codex vector 14: read-only file system in aggregated output', () => {
  const agg = 'cargo failed: Read-only file system when writing target'
  const d = classifySandboxDenial({ sandboxType: 'seatbelt', ...out(101, '', { aggregatedOutput: agg }) })
  assert.deepEqual(d, { reason: 'read_only_file_system', kind: 'filesystem', path: null, snippet: agg, host: null })
})

test('codex vectors 15–16: sigsys on linux; nothing without a sandbox', () => {
  assert.deepEqual(classifySandboxDenial({ sandboxType: 'bwrap', ...out(159) }), { reason: 'sigsys', kind: 'process', path: null, snippet: '', host: null })
  assert.equal(classifySandboxDenial({ sandboxType: 'bwrap', ...out(null, '', { signal: 'SIGSYS' }) }).reason, 'sigsys')
  assert.equal(isLikelySandboxDenied('seatbelt', out(159)), false)
  assert.equal(classifySandboxDenial({ sandboxType: 'none', ...out(1, 'Operation not permitted') }), null)
})

/** Detection score: precision and recall, a "positive" being a case labelled as a denial. */
function score(pairs) {
  const tp = pairs.filter(([l, s]) => l && s).length
  const fp = pairs.filter(([l, s]) => !l && s).length
  const fn = pairs.filter(([l, s]) => l && !s).length
  return { precision: tp / Math.max(1, tp + fp), recall: tp / Math.max(1, tp + fn), tp, fp, fn }
}
const pct = (x) => `${(100 * x).toFixed(1)} %`

test('the labelled corpus of real outputs: every label right, precision >= 98 % and recall >= 95 %, beside the Codex heuristic', () => {
  const corpus = JSON.parse(fs.readFileSync(path.join(__dirname, 'denial-corpus', 'corpus.json'), 'utf8'))
  assert.ok(corpus.length >= 150, `corpus has ${corpus.length} cases`)
  const ours = []
  const codex = []
  for (const c of corpus) {
    const result = { sandboxType: c.sandboxType, cwd: c.cwd, exitCode: c.exitCode, signal: c.signal, stdout: c.stdout, stderr: c.stderr, aggregatedOutput: c.aggregatedOutput }
    const d = classifySandboxDenial(result, c.policy)
    if (c.knownMiss) {
      assert.equal(d, null, `${c.id} is a known miss (${c.knownMiss}) but is now detected: update its label`)
    } else if (c.expected === null) {
      assert.equal(d, null, `${c.id}: expected no denial, got ${JSON.stringify(d)}`)
    } else {
      assert.ok(d, `${c.id}: expected ${c.expected.reason}, got null`)
      assert.deepEqual({ reason: d.reason, kind: d.kind, path: d.path }, c.expected, c.id)
    }
    ours.push([c.expected !== null, d !== null])
    codex.push([c.expected !== null, isLikelySandboxDenied(c.sandboxType, result)])
  }
  const a = score(ours)
  const b = score(codex)
  console.log(`# denial corpus: ${corpus.length} cases, ${a.tp + a.fn} denials`)
  console.log(`# classifySandboxDenial: precision ${pct(a.precision)}, recall ${pct(a.recall)} (fp ${a.fp}, fn ${a.fn})`)
  console.log(`# isLikelySandboxDenied (Codex keywords): precision ${pct(b.precision)}, recall ${pct(b.recall)} (fp ${b.fp}, fn ${b.fn})`)
  assert.ok(a.precision >= 0.98, `precision ${pct(a.precision)}`)
  assert.ok(a.recall >= 0.95, `recall ${pct(a.recall)}`)
})

test('precision: Permission denied inside a writable root is an ordinary error; with read-only it is a denial', () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-deny-'))
  const stderr = `cat: ${ws}/secret.txt: Permission denied\n`
  const result = { sandboxType: 'bwrap', exitCode: 1, stdout: '', stderr, aggregatedOutput: stderr }
  assert.equal(classifySandboxDenial(result, { mode: 'workspace-write', writableRoots: [ws] }), null)
  assert.equal(classifySandboxDenial(result).reason, 'permission_denied')
  fs.rmSync(ws, { recursive: true })
})

test('precision: "sandbox" in a file name is not a denial with a policy; network errors with the network on are not', () => {
  const grep = { sandboxType: 'bwrap', exitCode: 1, stdout: 'src/sandbox.rs:12: let x = 1;\n', stderr: '', aggregatedOutput: '' }
  assert.equal(isLikelySandboxDenied('bwrap', grep), true) // Codex's keyword rule raises a false alarm here
  assert.equal(classifySandboxDenial(grep, 'read-only'), null)
  const net = { sandboxType: 'bwrap', exitCode: 6, stdout: '', stderr: 'curl: (6) Could not resolve host: example.com\n', aggregatedOutput: '' }
  assert.equal(classifySandboxDenial(net, { mode: 'read-only', network: true }), null)
  assert.deepEqual(classifySandboxDenial(net, { mode: 'read-only', network: false }).reason, 'network_unreachable')
})

test('results of real runs carry their denial, using the run\'s own policy', async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-deny-'))
  const r = await spawnSandboxed(['sh', '-c', 'echo x > /etc/sandspawn-denial-test'], { cwd: ws, sandbox: 'workspace-write' })
  assert.equal(r.sandboxDenied, true)
  assert.deepEqual(r.denial, { reason: 'read_only_file_system', kind: 'filesystem', path: '/etc/sandspawn-denial-test', snippet: r.denial.snippet, host: null })
  assert.deepEqual(classifySandboxDenial(r), r.denial)
  const ok = await spawnSandboxed(['sh', '-c', 'echo x > inside.txt; false'], { cwd: ws, sandbox: 'workspace-write' })
  assert.equal(ok.exitCode, 1)
  assert.equal(ok.denial, null)
  assert.equal(ok.sandboxDenied, false)
  fs.rmSync(ws, { recursive: true })
})

// A run that exits 0 is classified without reading its output or building the policy's context
// (runner::result: no copy of every ruled path, no thread hop): its verdict must stay what the
// classifiers say of it, whatever it printed; a failed run's still judges by the whole policy, a
// nested repository's `.git` included.
test('exit 0 is no denial whatever it prints; a failed write to a nested repository\'s .git is one, with its path', async () => {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-deny-'))
  spawnSync('git', ['init', '-q', ws])
  spawnSync('git', ['init', '-q', path.join(ws, 'deps', 'r0')])
  const quiet = await spawnSandboxed(['sh', '-c', 'echo "x: Permission denied" >&2; echo "Read-only file system"'], { cwd: ws, sandbox: 'workspace-write' })
  assert.equal(quiet.exitCode, 0)
  assert.equal(quiet.sandboxDenied, false)
  assert.equal(quiet.denial, null)
  assert.equal(classifySandboxDenial(quiet), null)
  assert.equal(isLikelySandboxDenied(quiet.sandboxType, quiet), false)
  const config = path.join(fs.realpathSync(ws), 'deps', 'r0', '.git', 'config')
  const failed = await spawnSandboxed(['sh', '-c', 'echo x >> deps/r0/.git/config'], { cwd: ws, sandbox: 'workspace-write' })
  assert.notEqual(failed.exitCode, 0)
  assert.equal(failed.sandboxDenied, true)
  assert.equal(failed.denial.reason, 'read_only_file_system')
  assert.equal(failed.denial.path, config)
  assert.deepEqual(classifySandboxDenial(failed), failed.denial)
  fs.rmSync(ws, { recursive: true })
})

// The result carries its policy as JSON text, parsed only when asked (lib/process.js policyOf):
// what classifySandboxDenial(result) judges by must be the run's whole policy all the same, its
// held-absent names at the roots' tops included, and the same object however often it is asked.
test('classifySandboxDenial(result) judges by the run\'s whole policy, parsed once when first asked', async () => {
  const { policyOf } = require('../lib/process')
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-deny-')))
  try {
    spawnSync('git', ['init', '-q', ws])
    const r = await spawnSandboxed(['sh', '-c', 'echo x >> .git/config'], { cwd: ws, sandbox: 'workspace-write' })
    assert.notEqual(r.exitCode, 0, 'the repository\'s .git is read-only')
    const policy = policyOf(r)
    assert.equal(policy.mode, 'workspace-write')
    assert.equal(policyOf(r), policy, 'parsed once')
    const root = policy.writableRoots.find((w) => w.root === ws)
    assert.ok(root, JSON.stringify(policy.writableRoots.map((w) => w.root)))
    assert.ok(root.readOnly.includes(path.join(ws, '.git')), JSON.stringify(root.readOnly))
    assert.ok(root.missingReadOnly.some((m) => m.path === path.join(ws, '.envrc')), 'the names held absent at the top are in it')
    assert.deepEqual(r.toolCaches, policy.toolCaches, 'result.toolCaches is the policy\'s')
    assert.ok(r.denial, r.stderr)
    assert.deepEqual(classifySandboxDenial(r), r.denial)
    assert.equal(classifySandboxDenial(r).path, path.join(ws, '.git', 'config'))
  } finally {
    fs.rmSync(ws, { recursive: true, force: true })
  }
})

// The misses and the false alarm of issue 22, each with the words the real tool prints (corpus ids
// git-stash-protectgit, pyenv-rehash-ro, python-socket-refused-nonet, cargo-dep-home-ro,
// npm-view-timeout-*).
const fail = (stderr, extra = {}) => ({ sandboxType: 'bwrap', exitCode: 1, signal: null, stdout: '', stderr, aggregatedOutput: stderr, ...extra })

test('git stash: "could not write index" is a denial when the policy kept .git read-only, not when .git was writable', () => {
  const r = fail('error: could not write index\n', { cwd: '/w' })
  assert.deepEqual(classifySandboxDenial(r, { mode: 'workspace-write', writableRoots: ['/w'] }), {
    reason: 'read_only_file_system', kind: 'filesystem', path: '/w/.git/index', snippet: 'error: could not write index', host: null,
  })
  assert.equal(classifySandboxDenial(r, { mode: 'workspace-write', writableRoots: ['/w'], protectGit: false }), null)
  assert.equal(classifySandboxDenial(r, 'read-only').path, null) // the repository's top is not known
  assert.equal(isLikelySandboxDenied('bwrap', r), false) // Codex's keywords miss it
})

test('pyenv rehash: "cannot rehash: <dir> isn\'t writable" names the directory when the policy made it so', () => {
  const r = fail("pyenv: cannot rehash: /root/.pyenv/shims isn't writable\n", { cwd: '/w' })
  assert.deepEqual(classifySandboxDenial(r, 'read-only'), {
    reason: 'read_only_file_system', kind: 'filesystem', path: '/root/.pyenv/shims', snippet: "pyenv: cannot rehash: /root/.pyenv/shims isn't writable", host: null,
  })
  assert.equal(classifySandboxDenial(r, { mode: 'workspace-write', writableRoots: ['/root/.pyenv'] }), null)
})

test('loopback "Connection refused" is a denial with the network off, an ordinary failure with it on', () => {
  const r = fail('ConnectionRefusedError: [Errno 111] Connection refused\n')
  assert.equal(classifySandboxDenial(r, { mode: 'read-only', network: false }).reason, 'network_unreachable')
  assert.equal(classifySandboxDenial(r, { mode: 'read-only', network: true }), null)
  const node = fail('Error: connect ECONNREFUSED 127.0.0.1:8080\n')
  assert.equal(classifySandboxDenial(node, 'workspace-write').kind, 'network')
})

test('cargo: the path of "path: <p>, error: Read-only file system" is the whole path, never "<p>, error"', () => {
  const line = 'warning: failed to write cache, path: /h/.cargo/registry/index/corpus/.cache/oo/ra/oorandom, error: Read-only file system (os error 30)'
  const d = classifySandboxDenial(fail(line + '\n'), 'read-only')
  assert.equal(d.path, '/h/.cargo/registry/index/corpus/.cache/oo/ra/oorandom')
})

test('a timeout is judged by what was printed before the kill: silent npm retries are no denial, logged failed lookups are', async () => {
  const killed = { exitCode: null, signal: 'SIGTERM', timedOut: true }
  assert.equal(classifySandboxDenial(fail('', killed), 'read-only'), null)
  const logged = fail('npm http fetch GET http://registry.example.invalid/left-pad attempt 1 failed with EAI_AGAIN\n', killed)
  assert.equal(classifySandboxDenial(logged, 'read-only').reason, 'network_unreachable')
  const r = await spawnSandboxed(['sh', '-c', 'echo "curl: (6) Could not resolve host: x.invalid" >&2; sleep 30'], { timeout: START_BOUND })
  assert.equal(r.timedOut, true)
  assert.equal(r.denial.reason, 'network_unreachable')
  assert.deepEqual(classifySandboxDenial(r), r.denial)
})

test('paths are absolute and the same in result.denial and classifySandboxDenial(result)', async () => {
  const ws = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-deny-')))
  try {
    const r = await spawnSandboxed(['bash', '-c', 'echo hi > out.txt'], { cwd: ws, sandbox: 'read-only' })
    assert.equal(r.denial.path, path.join(ws, 'out.txt'))
    assert.deepEqual(classifySandboxDenial(r), r.denial)
    // A plain object with the same fields (no attached policy) resolves against its cwd too.
    assert.equal(classifySandboxDenial({ ...r }).path, path.join(ws, 'out.txt'))
    assert.deepEqual(classifySandboxDenial(JSON.parse(JSON.stringify(r)), 'read-only'), r.denial)
  } finally {
    fs.rmSync(ws, { recursive: true, force: true })
  }
})

test('bad input to the classifiers is a SandboxError', () => {
  assert.throws(() => isLikelySandboxDenied('docker', out(1)), (e) => e instanceof SandboxError && e.code === 'ERR_SANDBOX_INVALID_OPTIONS')
  assert.throws(() => isLikelySandboxDenied('bwrap', { exitCode: 'one' }), (e) => e instanceof SandboxError && /exitCode/.test(e.message))
  assert.throws(() => classifySandboxDenial({ exitCode: 1 }), (e) => e instanceof SandboxError && /sandboxType/.test(e.message))
})

test('the CLI prints one denial line naming the reason and the path', () => {
  const r = spawnSync(process.execPath, [path.join(__dirname, '..', 'bin', 'sandspawn.js'), '--', 'sh', '-c', 'echo x > /etc/sandspawn-cli-denial'], { encoding: 'utf8' })
  assert.equal(r.status, 2)
  const lines = r.stderr.split('\n').filter((l) => l.startsWith('sandspawn: sandbox denied'))
  assert.equal(lines.length, 1, r.stderr)
  assert.match(lines[0], /read_only_file_system: \/etc\/sandspawn-cli-denial/)
})

test('network denials decide first, but not unauthenticated ones (no allowedDomains entry would fix those)', () => {
  const failed = { ...out(7, 'curl: (56) CONNECT tunnel failed, response 403'), sandboxType: 'seatbelt' }
  const denial = (reason, host) => ({ host, port: 443, via: 'connect', reason, count: 1 })
  const named = classifySandboxDenial({ ...failed, networkDenials: [denial('unauthenticated', '127.0.0.1'), denial('not_allowed', 'evil.test')] })
  assert.equal(named.reason, 'network_denied')
  assert.equal(named.host, 'evil.test', 'the first refusal that is the policy speaking')
  const outsider = classifySandboxDenial({ ...failed, networkDenials: [denial('unauthenticated', '127.0.0.1')] })
  assert.notEqual(outsider && outsider.reason, 'network_denied')
})
