'use strict'
// A polluted Object.prototype (by a dependency of the host application, or by a bug elsewhere in
// it) must change nothing about a run: every option bag crosses into the core as a copy of its own
// data, and the objects sandspawn builds for the binding inherit nothing. An attacker's script made
// `spawnSandboxed(cmd)` run unsandboxed with `Object.prototype.sandbox = 'danger-full-access'`, moved
// the writable workspace with `Object.prototype.cwd`, and the binding read inherited properties of
// nested objects too.
//
// Each test pollutes the prototype for the whole run (as the application's state would be) and
// restores it in a finally; the tests run one at a time, so nothing else sees the pollution.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sandspawn, tempTree } = require('./helpers')

const INVALID = 'ERR_SANDBOX_INVALID_OPTIONS'

/** Run `fn` (awaited) with `props` set on Object.prototype as plain assignments would (enumerable). */
async function polluted(props, fn) {
  const had = Object.keys(props).filter((k) => Object.hasOwn(Object.prototype, k))
  assert.deepEqual(had, [], 'Object.prototype already has these keys')
  try {
    for (const [k, v] of Object.entries(props)) Object.prototype[k] = v
    return await fn()
  } finally {
    for (const k of Object.keys(props)) delete Object.prototype[k]
  }
}

/** Every key the core reads somewhere in an option bag, set to a value that would loosen the run. */
function loosening(tree) {
  return {
    sandbox: 'danger-full-access',
    mode: 'danger-full-access',
    cwd: tree.out,
    writableRoots: [tree.out],
    network: true,
    tmp: 'writable',
    protectGit: false,
    protectedNames: [],
    linux: { allow: ['landlock'] },
    allowedDomains: ['example.com'],
    extendEnv: false,
  }
}

describe('a polluted Object.prototype changes nothing about a run', { concurrency: false }, () => {
  test('a run without options keeps the read-only sandbox: no host marker, bwrap', async (t) => {
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'marker')
    const script = `touch '${marker}' && echo WROTE; echo "sandbox=$SANDSPAWN_SANDBOX"`
    // The attacker's one line alone, and every loosening key at once (nested objects then inherit
    // objects, without end: the binding's conversion gave up on the depth).
    for (const pollution of [{ sandbox: 'danger-full-access' }, loosening(tree)]) {
      for (const options of [undefined, {}, { cwd: tree.ws }, { cwd: tree.ws, sandbox: {} }]) {
        const what = `${Object.keys(pollution)} polluted, options ${JSON.stringify(options)}`
        const r = await polluted(pollution, () => sandspawn.spawnSandboxed(['sh', '-c', script], options))
        assert.equal(r.sandboxType, 'bwrap', `${what}: ${r.stdout}${r.stderr}`)
        assert.equal(fs.existsSync(marker), false, `${what}: the command wrote on the host`)
        assert.doesNotMatch(r.stdout, /WROTE/)
      }
    }
  })

  test('workspace-write keeps its workspace: an inherited cwd or writableRoots is not read', async (t) => {
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'marker')
    const r = await polluted(loosening(tree), () =>
      sandspawn.spawnSandboxed(['sh', '-c', `pwd; touch '${marker}'; touch ws-marker`], { cwd: tree.ws, sandbox: { mode: 'workspace-write' } }),
    )
    assert.equal(r.sandboxType, 'bwrap')
    assert.equal(r.cwd, tree.ws)
    assert.equal(fs.existsSync(marker), false, 'an inherited writableRoots entry was writable')
    assert.equal(fs.existsSync(path.join(tree.ws, 'ws-marker')), true, `the workspace was not writable: ${r.stderr}`)

    // Without a cwd the run's cwd is process.cwd(), never the inherited one (read-only by default).
    const r2 = await polluted(loosening(tree), () => sandspawn.spawnSandboxed(['pwd'], {}))
    assert.equal(r2.cwd, process.cwd())
    assert.equal(r2.stdout.trim(), process.cwd())
  })

  test('the environment: an inherited env, processEnv or extendEnv is not read', async (t) => {
    const tree = tempTree(t)
    process.env.SANDSPAWN_POLLUTION_HOST = 'host-value'
    t.after(() => delete process.env.SANDSPAWN_POLLUTION_HOST)
    const script = 'echo "injected=[$SANDSPAWN_POLLUTION_INJECTED] host=[$SANDSPAWN_POLLUTION_HOST]"'
    const pollution = { env: { SANDSPAWN_POLLUTION_INJECTED: 'yes' }, extendEnv: false, processEnv: true }
    const r = await polluted(pollution, () => sandspawn.spawnSandboxed(['sh', '-c', script], { cwd: tree.ws }))
    assert.equal(r.exitCode, 0, r.stderr)
    assert.equal(r.stdout.trim(), 'injected=[] host=[host-value]')
    // extendEnv: false keeps the host's environment out, whatever HostInfo would inherit.
    const r2 = await polluted(pollution, () => sandspawn.spawnSandboxed(['sh', '-c', script], { cwd: tree.ws, extendEnv: false, env: { PATH: process.env.PATH } }))
    assert.equal(r2.stdout.trim(), 'injected=[] host=[]')
  })

  test('buildSandboxCommand plans exactly what it plans without the pollution', async (t) => {
    const tree = tempTree(t)
    const options = { cwd: tree.ws, sandbox: { mode: 'workspace-write', network: false }, limits: { openFiles: 256 } }
    const clean = sandspawn.buildSandboxCommand(['true'], options)
    const plan = await polluted(loosening(tree), () => sandspawn.buildSandboxCommand(['true'], options))
    assert.equal(plan.sandboxType, 'bwrap')
    assert.deepEqual(plan, clean)
    const bare = await polluted(loosening(tree), () => sandspawn.buildSandboxCommand(['true']))
    assert.equal(bare.sandboxType, 'bwrap')
  })

  test('runWithEscalation never takes an inherited approve', async (t) => {
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'marker')
    const approve = () => true
    await polluted({ approve }, () =>
      assert.rejects(sandspawn.runWithEscalation(['touch', marker], { cwd: tree.ws }), (err) => err.code === INVALID && /approve/.test(err.message)),
    )
    assert.equal(fs.existsSync(marker), false)
  })

  test('inherited signal, input and onOutput are not used', async (t) => {
    const tree = tempTree(t)
    let called = false
    const pollution = { signal: AbortSignal.abort(), input: 'inherited input', onOutput: () => (called = true) }
    const r = await polluted(pollution, () => sandspawn.spawnSandboxed(['sh', '-c', 'cat; echo done'], { cwd: tree.ws }))
    assert.equal(r.stdout, 'done\n')
    assert.equal(called, false)
  })

  test('the result reports the run, not inherited fields', async (t) => {
    const tree = tempTree(t)
    const forged = { exitCode: 0, signal: 'SIGKILL', aggregatedOutput: 'forged', denial: { kind: 'filesystem' }, pty: { cols: 1, rows: 1 }, limitExceeded: 'memory', attempts: ['forged'], result: { forged: true } }
    const r = await polluted(forged, () => sandspawn.spawnSandboxed(['sh', '-c', 'echo real; exit 3'], { cwd: tree.ws }))
    assert.equal(r.exitCode, 3)
    assert.equal(r.signal, null)
    assert.equal(r.aggregatedOutput, 'real\n')
    assert.equal(r.denial, null)
    assert.equal(Object.hasOwn(r, 'pty'), false)
    assert.equal(r.limitExceeded, null)
    const err = await polluted(forged, () => sandspawn.spawnSandboxed(['sandspawn-no-such-command'], { cwd: tree.ws }).then(assert.fail, (e) => e))
    assert.equal(err.code, 'ENOENT')
    assert.equal(Object.hasOwn(err, 'attempts'), false)
    assert.equal(Object.hasOwn(err, 'result'), false)
  })

  test('the denial checks read only the output they are given', async () => {
    const output = { exitCode: 1, stdout: '', stderr: '' }
    const pollution = { stderr: 'touch: cannot touch x: Read-only file system', aggregatedOutput: 'Operation not permitted', policy: { mode: 'read-only' } }
    const likely = await polluted(pollution, () => sandspawn.isLikelySandboxDenied('bwrap', { exitCode: 1 }))
    assert.equal(likely, false)
    const denial = await polluted(pollution, () => sandspawn.classifySandboxDenial({ ...output, sandboxType: 'bwrap' }, {}))
    assert.equal(denial, null)
  })

  test('the other entry points read only their own options', async () => {
    // Values of the wrong type: read, each would reject; and `clean` would empty the store.
    const pollution = { cwd: 5, clean: 'yes', linux: 5, paths: 5, force: 'yes', maxChanges: -1 }
    const sets = await polluted(pollution, () => sandspawn.listChangeSets({}))
    assert.ok(Array.isArray(sets))
    const store = await polluted(pollution, () => sandspawn.toolCacheStore({}))
    assert.equal(typeof store, 'object')
    const caps = await polluted(pollution, () => sandspawn.sandboxCapabilities({}))
    assert.equal(typeof caps.available, 'boolean')
    const unknownId = (err) => err.code === INVALID && !/maxChanges|paths|force/.test(err.message)
    await polluted(pollution, () => assert.rejects(sandspawn.showChangeSet('cs-no-such-set'), unknownId))
    await polluted(pollution, () => assert.rejects(sandspawn.applyChangeSet('cs-no-such-set', {}), unknownId))
  })
})
