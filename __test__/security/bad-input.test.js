'use strict'
// Bad input: every invalid command or option rejects with a SandboxError carrying the right code
// and a message naming the problem, nothing runs (the command would leave a marker file), and
// spawnSandboxed never throws synchronously.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sandspawn, tempTree } = require('./helpers')

const { spawnSandboxed, startSandboxed, runWithEscalation, SandboxError } = sandspawn
const INVALID = 'ERR_SANDBOX_INVALID_OPTIONS'

/**
 * Cases: `make(tree)` returns [command, options]; by default the command would create
 * `tree.ws/marker` and the options are a workspace-write policy on the workspace.
 */
const CASES = [
  ['empty command', () => [[], {}], INVALID, /command/],
  ['non-array command (a string)', () => ['touch marker', {}], INVALID, /command.*array/],
  ['non-array command (an object)', () => [{ 0: 'touch', length: 1 }, {}], INVALID, /command/],
  ['non-string argument', (t) => [['touch', 42, `${t.ws}/marker`], {}], INVALID, /command\[1\].*string/],
  ['null argument', (t) => [['touch', null, `${t.ws}/marker`], {}], INVALID, /command\[1\]/],
  ['empty program', () => [[''], {}], INVALID, /command\[0\]/],
  ['NUL byte in an argument', (t) => [['touch', `${t.ws}/marker\0x`], {}], INVALID, /command\[1\].*NUL/],
  ['NUL byte in the program', (t) => [['touch\0evil', `${t.ws}/marker`], {}], INVALID, /command\[0\].*NUL/],
  ['NUL byte in a variable name', () => [null, { env: { 'A\0B': 'x' } }], INVALID, /env.*NUL/],
  ['NUL byte in a variable value', () => [null, { env: { A: 'x\0y' } }], INVALID, /env.*A.*NUL/],
  ["'=' in a variable name", () => [null, { env: { 'A=B': 'x' } }], INVALID, /env/],
  ['non-string variable value', () => [null, { env: { A: 1 } }], INVALID, /env.*A/],
  ['unknown option name', () => [null, { sandbx: 'read-only' }], INVALID, /sandbx/],
  ['unknown policy field', () => [null, { sandbox: { mode: 'workspace-write', netwrok: true } }], INVALID, /netwrok/],
  ['unknown mode (string)', () => [null, { sandbox: 'yolo' }], INVALID, /sandbox.*yolo/],
  ['unknown mode (policy)', () => [null, { sandbox: { mode: 'full' } }], INVALID, /mode.*full/],
  ['sandbox of the wrong type', () => [null, { sandbox: 1 }], INVALID, /sandbox/],
  ['relative writable root', () => [null, { sandbox: { mode: 'workspace-write', writableRoots: ['rel/dir'] } }], INVALID, /writableRoots\[0\].*absolute/],
  ['missing writable root', (t) => [null, { sandbox: { mode: 'workspace-write', writableRoots: [`${t.root}/missing`] } }], INVALID, /writableRoots\[0\].*(not exist|No such)/],
  ['writable root that is a file', (t) => [null, { sandbox: { mode: 'workspace-write', writableRoots: [`${t.root}/file`] } }], INVALID, /writableRoots\[0\].*not a directory/],
  ['relative denyRead path', () => [null, { sandbox: { mode: 'workspace-write', denyRead: ['secret'] } }], INVALID, /denyRead\[0\].*absolute/],
  ['relative readOnlyPaths entry', () => [null, { sandbox: { mode: 'workspace-write', readOnlyPaths: ['x'] } }], INVALID, /readOnlyPaths\[0\].*absolute/],
  ['unknown tmp value', () => [null, { sandbox: { mode: 'workspace-write', tmp: 'shared' } }], INVALID, /tmp/],
  ['cwd that is a file', (t) => [null, { cwd: `${t.root}/file` }], INVALID, /cwd.*not a directory/],
  ['cwd that does not exist', (t) => [null, { cwd: `${t.root}/missing` }], INVALID, /cwd/],
  ['NUL byte in cwd', (t) => [null, { cwd: `${t.ws}\0x` }], INVALID, /cwd.*NUL/],
  ['negative timeout', () => [null, { timeout: -1 }], INVALID, /timeout/],
  ['NaN timeout', () => [null, { timeout: NaN }], INVALID, /timeout/],
  ['timeout of the wrong type', () => [null, { timeout: '100' }], INVALID, /timeout/],
  ['negative forceKillAfterDelay', () => [null, { forceKillAfterDelay: -5 }], INVALID, /forceKillAfterDelay/],
  ['unknown killSignal', () => [null, { killSignal: 'SIGFOO' }], INVALID, /killSignal.*SIGFOO/],
  ['killSignal out of range', () => [null, { killSignal: 99 }], INVALID, /killSignal/],
  ['maxBuffer 0', () => [null, { maxBuffer: 0 }], INVALID, /maxBuffer/],
  ['negative maxBuffer', () => [null, { maxBuffer: -1 }], INVALID, /maxBuffer/],
  ['input of the wrong type (number)', () => [null, { input: 42 }], INVALID, /input/],
  ['input of the wrong type (object)', () => [null, { input: { data: 'x' } }], INVALID, /input/],
  ['onOutput not a function', () => [null, { onOutput: 'console.log' }], INVALID, /onOutput/],
  ['signal not an AbortSignal', () => [null, { signal: { aborted: false } }], INVALID, /signal/],
  // A look-alike without removeEventListener made the run fail later with a TypeError.
  ['a fake AbortSignal without removeEventListener', () => [null, { signal: { aborted: false, addEventListener() {} } }], INVALID, /options\.signal.*AbortSignal/],
  // An array was taken as { 0: 'A=1' }: the variable silently dropped.
  ['env as an array', () => [null, { env: ['A=1'] }], INVALID, /options\.env.*array/],
  ['env as a string', () => [null, { env: 'A=1' }], INVALID, /options\.env/],
  // NaN and Infinity nested in an option failed the binding's JSON conversion without naming the option.
  ['NaN requestTimeoutMs', () => [null, { sandbox: { network: { allowedDomains: [], requestTimeoutMs: NaN } } }], INVALID, /options\.sandbox\.network\.requestTimeoutMs/],
  ['Infinity requestTimeoutMs', () => [null, { sandbox: { network: { allowedDomains: [], requestTimeoutMs: Infinity } } }], INVALID, /options\.sandbox\.network\.requestTimeoutMs/],
  ['NaN terminal width', () => [null, { pty: { cols: NaN } }], INVALID, /options\.pty\.cols/],
  ['Infinity in a policy list', () => [null, { sandbox: { writableRoots: [Infinity] } }], INVALID, /options\.sandbox\.writableRoots\[0\]/],
  ['options not an object', () => [null, 'read-only'], INVALID, /options/],
  // Found by an attacker's review of the facade: each was taken silently, or rejected untyped.
  ['a lone surrogate in an argument (became U+FFFD: another file name)', (t) => [['touch', `${t.ws}/marker\uD800`], {}], INVALID, /command\[1\].*surrogate/],
  ['a lone surrogate in a variable', () => [null, { env: { A: 'x\uDC00' } }], INVALID, /options\.env\.A.*surrogate/],
  ['a lone surrogate in string input', () => [null, { input: 'x\uD800y' }], INVALID, /options\.input.*surrogate/],
  ['a Map as the policy (its entries were never read: the defaults ran)', () => [null, { sandbox: new Map([['mode', 'read-only']]) }], INVALID, /options\.sandbox.*Map/],
  ['a Date as the environment', () => [null, { env: new Date() }], INVALID, /options\.env.*Date/],
  ['a BigInt timeout (became a decimal string)', () => [null, { timeout: 10n }], INVALID, /options\.timeout.*bigint/],
  [
    'input whose ArrayBuffer was transferred (a bare TypeError)',
    () => {
      const bytes = new Uint8Array(4)
      structuredClone(bytes.buffer, { transfer: [bytes.buffer] })
      return [null, { input: bytes }]
    },
    INVALID,
    /options\.input.*detached/,
  ],
  [
    'a signal whose addEventListener throws (rejected with a plain Error after the command started)',
    () => [null, { signal: { aborted: false, addEventListener() { throw new Error('listener boom') }, removeEventListener() {} } }],
    INVALID,
    /options\.signal.*addEventListener threw.*listener boom/,
  ],
  [
    'an argv larger than the system allows (3 MB of args)',
    (t) => [['touch', `${t.ws}/marker`, ...Array.from({ length: 3000 }, (_, i) => `${t.ws}/${i}-${'x'.repeat(1000)}`)], {}],
    INVALID,
    /command.*(larger|too long|too large)/,
  ],
  ['one argument larger than the kernel allows (200 KB)', (t) => [['touch', `${t.ws}/marker`, 'x'.repeat(200_000)], {}], INVALID, /command\[2\].*(larger|too long|too large)/],
  // The environment is passed on bwrap's command line (--setenv) or in its environment: a huge
  // one is a bad option, not a broken sandbox.
  ['an environment larger than the system allows (2.5 MB)', () => [null, { env: Object.fromEntries(Array.from({ length: 2500 }, (_, i) => [`SANDSPAWN_SEC_${i}`, 'x'.repeat(1000)])) }], INVALID, /env|environment/],
  ['one variable larger than the kernel allows (200 KB)', () => [null, { env: { SANDSPAWN_SEC_BIG: 'x'.repeat(200_000) } }], INVALID, /env|environment/],
]

function setup(t) {
  const tree = tempTree(t)
  fs.writeFileSync(path.join(tree.root, 'file'), 'not a directory\n')
  return tree
}

function merge(tree, [command, options]) {
  const cmd = command === null ? ['touch', path.join(tree.ws, 'marker')] : command
  if (typeof options !== 'object' || options === null) return [cmd, options]
  const base = { cwd: tree.ws, sandbox: { mode: 'workspace-write' } }
  const out = { ...base, ...options }
  if (options.sandbox && Object.getPrototypeOf(options.sandbox) === Object.prototype) out.sandbox = { ...base.sandbox, ...options.sandbox }
  return [cmd, out]
}

async function expectRejection(promise, code, re) {
  let err
  try {
    const r = await promise
    assert.fail(`resolved instead of rejecting: exit=${r.exitCode} stderr=${r.stderr}`)
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e
    err = e
  }
  assert.ok(err instanceof SandboxError, `not a SandboxError: ${err && err.stack}`)
  assert.equal(err.name, 'SandboxError')
  assert.equal(err.code, code, `code ${err.code}: ${err.message}`)
  assert.match(err.message, re)
  return err
}

describe('bad input rejects with SandboxError and runs nothing', { concurrency: 8 }, () => {
  for (const [name, make, code, re] of CASES) {
    test(name, async (t) => {
      const tree = setup(t)
      const [command, options] = merge(tree, make(tree))
      const before = fs.readdirSync(tree.ws)
      let promise
      assert.doesNotThrow(() => {
        promise = spawnSandboxed(command, options)
      }, 'spawnSandboxed threw synchronously')
      assert.ok(promise instanceof Promise)
      await expectRejection(promise, code, re)
      // startSandboxed: same verdict
      await expectRejection(startSandboxed(command, options), code, re)
      assert.deepEqual(fs.readdirSync(tree.ws), before, 'the command ran')
      assert.equal(fs.existsSync(path.join(tree.ws, 'marker')), false)
    })
  }

  test('spawnSandboxed never throws synchronously (bad command, bad options, throwing getter, aborted signal)', async () => {
    const inputs = [
      [42],
      [undefined],
      [['true'], 42],
      [['true'], { get timeout() {
        throw new Error('getter boom')
      } }],
      [['true'], { signal: AbortSignal.abort() }],
      [new Proxy([], { get() {
        throw new Error('proxy boom')
      } })],
    ]
    for (const args of inputs) {
      let p
      try {
        p = spawnSandboxed(...args)
      } catch (err) {
        assert.fail(`spawnSandboxed(${args.map(String).join(', ')}) threw synchronously: ${err}`)
      }
      assert.ok(p instanceof Promise)
      await assert.rejects(p)
    }
    let p2
    assert.doesNotThrow(() => (p2 = startSandboxed(42)))
    await assert.rejects(p2, { code: INVALID })
    let p3
    assert.doesNotThrow(() => (p3 = runWithEscalation(['true'], {})))
    await assert.rejects(p3, { code: INVALID })
  })

  test('a getter that throws rejects with a SandboxError naming the option, and runs nothing', async (t) => {
    const tree = setup(t)
    const boom = () => {
      throw new Error('getter boom')
    }
    const top = () => Object.defineProperty({ sandbox: 'workspace-write' }, 'cwd', { enumerable: true, get: boom })
    const nested = () => ({ cwd: tree.ws, sandbox: Object.defineProperty({ mode: 'workspace-write' }, 'writableRoots', { enumerable: true, get: boom }) })
    const inEnv = () => ({ cwd: tree.ws, env: Object.defineProperty({}, 'A', { enumerable: true, get: boom }) })
    const command = ['touch', path.join(tree.ws, 'marker')]
    for (const [make, name] of [[top, 'options.cwd'], [nested, 'options.sandbox.writableRoots'], [inEnv, 'options.env.A']]) {
      const re = new RegExp(`^${name.replace(/\./g, '\\.')}: .*getter boom`)
      await expectRejection(spawnSandboxed(command, make()), INVALID, re)
      await expectRejection(startSandboxed(command, make()), INVALID, re)
      await expectRejection(runWithEscalation(command, Object.assign(make(), { approve: () => true })), INVALID, re)
      assert.throws(() => sandspawn.buildSandboxCommand(command, make()), (err) => err instanceof SandboxError && err.code === INVALID && re.test(err.message))
    }
    assert.equal(fs.existsSync(path.join(tree.ws, 'marker')), false)
  })

  test('each getter of the options runs once', async (t) => {
    const tree = setup(t)
    const reads = { cwd: 0, mode: 0, A: 0 }
    const sandbox = { get mode() { reads.mode++; return 'workspace-write' } }
    const env = { get A() { reads.A++; return 'from-getter' }, PATH: process.env.PATH }
    const r = await spawnSandboxed(['sh', '-c', 'echo "$A"; touch marker'], { get cwd() { reads.cwd++; return tree.ws }, sandbox, env })
    assert.equal(r.stdout, 'from-getter\n', r.stderr)
    assert.equal(fs.existsSync(path.join(tree.ws, 'marker')), true)
    assert.deepEqual(reads, { cwd: 1, mode: 1, A: 1 })
  })

  test('resize with NaN or Infinity throws a SandboxError naming the argument', async (t) => {
    const tree = setup(t)
    const p = await startSandboxed(['sh', '-c', 'sleep 10'], { cwd: tree.ws, pty: true, timeout: 15000 })
    try {
      assert.throws(() => p.resize(NaN, 24), (err) => err instanceof SandboxError && err.code === INVALID && /cols/.test(err.message) && /NaN/.test(err.message))
      assert.throws(() => p.resize(80, Infinity), (err) => err instanceof SandboxError && err.code === INVALID && /rows/.test(err.message) && /Infinity/.test(err.message))
    } finally {
      p.kill('SIGKILL')
      await p.wait()
    }
  })

  test('an options bag that is a Map rejects and runs nothing (it was an empty bag: the defaults ran)', async (t) => {
    const tree = setup(t)
    const options = new Map([['cwd', tree.ws], ['sandbox', 'read-only']])
    await expectRejection(spawnSandboxed(['touch', path.join(tree.ws, 'marker')], options), INVALID, /options.*Map/)
    assert.equal(fs.existsSync(path.join(tree.ws, 'marker')), false)
  })

  test('an already aborted signal rejects with AbortError and runs nothing', async (t) => {
    const tree = setup(t)
    const err = await spawnSandboxed(['touch', 'marker'], { cwd: tree.ws, sandbox: 'workspace-write', signal: AbortSignal.abort() }).then(
      () => assert.fail('resolved'),
      (e) => e,
    )
    assert.equal(err.name, 'AbortError')
    assert.equal(err.code, 'ABORT_ERR')
    assert.equal(fs.existsSync(path.join(tree.ws, 'marker')), false)
  })

  test('command not found → ENOENT, not executable → EACCES', async (t) => {
    const tree = setup(t)
    await expectRejection(spawnSandboxed(['sandspawn-sec-no-such-command'], { cwd: tree.ws }), 'ENOENT', /sandspawn-sec-no-such-command/)
    await expectRejection(spawnSandboxed([path.join(tree.root, 'file')], { cwd: tree.ws }), 'EACCES', /file/)
  })
})

test('showChangeSet: a maxChanges that is an object rejects with a SandboxError, not a TypeError of its message', async () => {
  // `${max}` of a null-prototype object (or one whose toString throws) threw a TypeError from the
  // very line meant to refuse it (found by an attacker's review, mode33, fuzzing the typed paths).
  for (const maxChanges of [Object.create(null), { toString() { throw new Error('boom') } }, Symbol('n')]) {
    const err = await sandspawn.showChangeSet('cs-0000000000000000', { maxChanges }).then(
      () => assert.fail('resolved'),
      (e) => e,
    )
    assert.ok(err instanceof SandboxError, `${err && err.constructor.name}: ${err && err.message}`)
    assert.equal(err.code, INVALID)
    assert.match(err.message, /maxChanges/)
  }
})
