'use strict'
// spawnSandboxed: exit status, signals, result fields, stdin input, output capture and
// truncation, streaming callbacks, environment and command lookup.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const os = require('node:os')
const crypto = require('node:crypto')

const { spawnSandboxed, SandboxError } = require('..')
const { PKG, MODES, tmpDir, runNode } = require('./fixtures/spawn-helpers')

const sha = (x) => crypto.createHash('sha256').update(x).digest('hex')
const opt = (mode, extra = {}) => (mode.sandbox === undefined ? { ...extra } : { sandbox: mode.sandbox, ...extra })

const scratch = tmpDir('sandspawn-spawn-')
test.after(() => fs.rmSync(scratch, { recursive: true, force: true }))

for (const mode of MODES) {
  test(`${mode.name}: exit codes 0, 1, 42, 255 are reported as exitCode with signal null`, async () => {
    for (const code of [0, 1, 42, 255]) {
      const r = await spawnSandboxed(['sh', '-c', `exit ${code}`], opt(mode))
      assert.equal(r.exitCode, code, `exit ${code}`)
      assert.equal(r.signal, null, `exit ${code}`)
      assert.equal(r.timedOut, false)
      assert.equal(r.sandboxType, mode.sandboxType)
    }
  })

  test(`${mode.name}: exit codes 128..160 follow the documented 128+n rule only under bwrap`, async () => {
    const names = { 129: 'SIGHUP', 143: 'SIGTERM', 159: 'SIGSYS' }
    for (const code of [128, 129, 143, 159, 160]) {
      const r = await spawnSandboxed(['sh', '-c', `exit ${code}`], opt(mode))
      if (mode.sandboxType === 'bwrap' && names[code]) {
        assert.equal(r.signal, names[code], `exit ${code} under bwrap`)
        assert.equal(r.exitCode, null, `exit ${code} under bwrap`)
      } else {
        // Without bwrap the real wait status is known: a plain exit stays an exit.
        assert.equal(r.exitCode, code, `exit ${code}`)
        assert.equal(r.signal, null, `exit ${code}`)
      }
    }
  })

  test(`${mode.name}: death by SIGTERM, SIGKILL, SIGSEGV is reported as signal with exitCode null`, async () => {
    for (const sig of ['TERM', 'KILL', 'SEGV']) {
      const r = await spawnSandboxed(['sh', '-c', `kill -${sig} $$`], opt(mode))
      assert.equal(r.signal, `SIG${sig}`, `kill -${sig}: ${JSON.stringify(r)}`)
      assert.equal(r.exitCode, null, `kill -${sig}`)
      assert.equal(r.timedOut, false)
      assert.ok(r.durationMs > 0)
    }
  })

  test(`${mode.name}: result echoes command and cwd, has pid, durationMs, sandboxType`, async () => {
    const command = ['sh', '-c', 'pwd; echo "$1"', 'sh', 'arg with  spaces']
    const before = Date.now()
    const r = await spawnSandboxed(command, opt(mode, { cwd: scratch }))
    const wall = Date.now() - before
    assert.deepEqual(r.command, command)
    assert.equal(r.cwd, scratch)
    assert.equal(r.stdout, `${scratch}\narg with  spaces\n`)
    assert.ok(Number.isInteger(r.pid) && r.pid > 0, `pid ${r.pid}`)
    assert.notEqual(r.pid, process.pid)
    assert.equal(typeof r.durationMs, 'number')
    assert.ok(r.durationMs > 0 && r.durationMs <= wall + 50, `durationMs ${r.durationMs} vs wall ${wall}`)
    assert.equal(r.sandboxType, mode.sandboxType)
    assert.equal(r.timedOut, false)
    assert.equal(r.truncated, false)
    assert.deepEqual(r.omittedBytes, { stdout: 0, stderr: 0 })
    assert.equal(r.stderr, '')

    const d = await spawnSandboxed(['pwd'], opt(mode))
    assert.equal(d.cwd, process.cwd(), 'default cwd is process.cwd()')
    assert.equal(d.stdout, `${process.cwd()}\n`)
  })

  test(`${mode.name}: 10 MB input round-trips through cat byte-exact`, async () => {
    const input = crypto.randomBytes(7864320).toString('base64') // exactly 10 MiB of ASCII
    assert.equal(input.length, 10 * 1024 * 1024)
    const buf = Buffer.from(input)
    const r = await spawnSandboxed(['cat'], opt(mode, { input: buf, maxBuffer: 20 * 1024 * 1024 }))
    assert.equal(r.exitCode, 0, r.stderr)
    assert.equal(r.truncated, false)
    assert.equal(r.stdout.length, input.length)
    assert.equal(sha(r.stdout), sha(input))
    assert.ok(r.stdout === input)
  })

  test(`${mode.name}: string, Buffer and Uint8Array (with offset) input`, async () => {
    const s = 'héllo €uro\nline 2 ✓\n'
    const r1 = await spawnSandboxed(['cat'], opt(mode, { input: s }))
    assert.equal(r1.stdout, s)

    const r2 = await spawnSandboxed(['cat'], opt(mode, { input: Buffer.from('buffer input\0with nul') }))
    assert.equal(r2.stdout, 'buffer input\0with nul')

    // A view into the middle of a larger ArrayBuffer: only the viewed bytes must be sent.
    const backing = Buffer.from('XXXXuint8 view bytesYYYY')
    const view = new Uint8Array(backing.buffer, backing.byteOffset + 4, 16)
    const r3 = await spawnSandboxed(['cat'], opt(mode, { input: view }))
    assert.equal(r3.stdout, 'uint8 view bytes')

    // Empty input: stdin is a pipe that is closed at once.
    const r4 = await spawnSandboxed(['wc', '-c'], opt(mode, { input: '' }))
    assert.equal(r4.stdout.trim(), '0')

    // Without input stdin is /dev/null: cat ends at once.
    const r5 = await spawnSandboxed(['cat'], opt(mode, { timeout: 5000 }))
    assert.equal(r5.timedOut, false)
    assert.equal(r5.stdout, '')
    assert.equal(r5.exitCode, 0)
  })

  test(`${mode.name}: aggregatedOutput interleaves stdout and stderr in arrival order`, async () => {
    const r = await spawnSandboxed(['sh', '-c', 'echo 1; sleep 0.05; echo 2 >&2; sleep 0.05; echo 3'], opt(mode))
    assert.equal(r.stdout, '1\n3\n')
    assert.equal(r.stderr, '2\n')
    assert.equal(r.aggregatedOutput, '1\n2\n3\n')
  })

  test(`${mode.name}: a UTF-8 character split across writes decodes as one character`, async () => {
    const chunks = []
    const r = await spawnSandboxed(['bash', '-c', "printf '\\xe2'; sleep 0.05; printf '\\x82\\xac'; sleep 0.05; printf '\\xe2' >&2; sleep 0.05; printf '\\x82\\xac' >&2"], opt(mode, {
      onOutput: (c) => chunks.push(c),
    }))
    assert.equal(r.exitCode, 0, r.stderr)
    assert.equal(r.stdout, '€')
    assert.equal(r.stderr, '€')
    assert.equal(r.aggregatedOutput, '€€')
    const out = Buffer.concat(chunks.filter((c) => c.stream === 'stdout').map((c) => c.data))
    assert.deepEqual([...out], [0xe2, 0x82, 0xac])
  })

  test(`${mode.name}: aggregatedOutput keeps characters split in one stream intact while the other stream interleaves`, async () => {
    // stdout: E2 .. 82 AC; stderr: E2 .. 82 AC, arriving as out E2, err E2, out 82AC, err 82AC.
    // Each stream is valid UTF-8, so the interleaved text must not contain U+FFFD.
    const chunks = []
    const r = await spawnSandboxed(['bash', '-c', "printf '\\xe2'; sleep 0.1; printf '\\xe2' >&2; sleep 0.1; printf '\\x82\\xac'; sleep 0.1; printf '\\x82\\xac' >&2"], opt(mode, {
      onOutput: (c) => chunks.push(`${c.stream}:${c.data.toString('hex')}`),
    }))
    assert.equal(r.stdout, '€')
    assert.equal(r.stderr, '€')
    assert.ok(!r.aggregatedOutput.includes('\uFFFD'), `aggregatedOutput ${JSON.stringify(r.aggregatedOutput)} from chunks ${chunks.join(' ')}`)
    assert.equal(r.aggregatedOutput, '€€')
  })

  test(`${mode.name}: onOutput receives every chunk in order (5 MB)`, async () => {
    const chunks = []
    const r = await spawnSandboxed(['seq', '1', '700000'], opt(mode, {
      maxBuffer: 16 * 1024 * 1024,
      onOutput: (c) => chunks.push(c),
    }))
    const expected = Array.from({ length: 700000 }, (_, i) => `${i + 1}\n`).join('')
    assert.ok(expected.length > 4.5e6)
    assert.equal(r.exitCode, 0)
    assert.equal(r.truncated, false)
    assert.ok(r.stdout === expected, 'stdout equals seq output')
    assert.ok(chunks.length > 1, 'output arrives in several chunks')
    for (const c of chunks) {
      assert.equal(c.stream, 'stdout')
      assert.ok(Buffer.isBuffer(c.data), 'chunk.data is a Buffer')
    }
    const joined = Buffer.concat(chunks.map((c) => c.data)).toString('utf8')
    assert.equal(joined.length, expected.length)
    assert.ok(joined === expected, 'concatenated chunks equal stdout')
  })

  test(`${mode.name}: a throwing onOutput callback does not break the run`, async () => {
    const warnings = []
    const onWarning = (w) => warnings.push(w)
    process.on('warning', onWarning)
    try {
      const r = await spawnSandboxed(['sh', '-c', 'echo a; echo b >&2'], opt(mode, {
        onOutput: () => {
          throw new Error('boom from callback')
        },
      }))
      assert.equal(r.exitCode, 0)
      assert.equal(r.stdout, 'a\n')
      assert.equal(r.stderr, 'b\n')
    } finally {
      await new Promise((r) => setImmediate(r))
      process.off('warning', onWarning)
    }
  })

  test(`${mode.name}: environment: env reaches the child, extendEnv false gives only env`, async () => {
    process.env.SANDSPAWN_TEST_HOST_VAR = 'from-host'
    try {
      const r = await spawnSandboxed(['sh', '-c', 'printf "%s|%s" "$MY_VAR" "$SANDSPAWN_TEST_HOST_VAR"'], opt(mode, { env: { MY_VAR: 'x y=z' } }))
      assert.equal(r.stdout, 'x y=z|from-host', 'env is merged over process.env')

      const iso = await spawnSandboxed(['/usr/bin/env'], opt(mode, { extendEnv: false, env: { ONLY: '1', OTHER: 'two' } }))
      assert.equal(iso.exitCode, 0, iso.stderr)
      const vars = Object.fromEntries(iso.stdout.trim().split('\n').map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]))
      const expected = { ONLY: '1', OTHER: 'two' }
      if (mode.sandboxType === 'bwrap') {
        expected.SANDSPAWN_SANDBOX = 'bwrap'
        expected.SANDSPAWN_NETWORK_DISABLED = '1'
        // With the network off: no retries that cannot succeed (README, Running package managers).
        expected.npm_config_fetch_retries = '0'
        expected.PIP_RETRIES = '1'
        expected.CARGO_NET_RETRY = '0'
        // bwrap 0.8 itself sets PWD after --chdir; that is the sandbox tool's, not a leak of process.env.
        if ('PWD' in vars) expected.PWD = process.cwd()
      }
      assert.deepEqual(vars, expected)
      assert.ok(!('SANDSPAWN_TEST_HOST_VAR' in vars))
    } finally {
      delete process.env.SANDSPAWN_TEST_HOST_VAR
    }
  })

  test(`${mode.name}: command not found → ENOENT, not executable → EACCES, lookup in the child's PATH`, async () => {
    await assert.rejects(spawnSandboxed(['sandspawn-no-such-command-xyz'], opt(mode)), (e) => {
      assert.ok(e instanceof SandboxError, `${e}`)
      assert.equal(e.code, 'ENOENT')
      return true
    })
    await assert.rejects(spawnSandboxed([path.join(scratch, 'does-not-exist')], opt(mode)), (e) => {
      assert.ok(e instanceof SandboxError, `${e}`)
      assert.equal(e.code, 'ENOENT')
      return true
    })

    const dir = fs.mkdtempSync(path.join(scratch, 'bin-'))
    const noexec = path.join(dir, 'noexec.sh')
    fs.writeFileSync(noexec, '#!/bin/sh\necho should-not-run\n', { mode: 0o644 })
    await assert.rejects(spawnSandboxed([noexec], opt(mode)), (e) => {
      assert.ok(e instanceof SandboxError, `${e}`)
      assert.equal(e.code, 'EACCES')
      return true
    })

    const tool = path.join(dir, 'sandspawn-path-tool')
    fs.writeFileSync(tool, '#!/bin/sh\necho "found me: $1"\n', { mode: 0o755 })
    // Found through the child's PATH, not the host's.
    const r = await spawnSandboxed(['sandspawn-path-tool', 'ok'], opt(mode, { env: { PATH: `${dir}:/usr/bin:/bin` } }))
    assert.equal(r.exitCode, 0, r.stderr)
    assert.equal(r.stdout, 'found me: ok\n')
    // And not found when the child's PATH does not have it, even though the host's might.
    const oldPath = process.env.PATH
    process.env.PATH = `${dir}:${oldPath}`
    try {
      await assert.rejects(spawnSandboxed(['sandspawn-path-tool'], opt(mode, { env: { PATH: '/usr/bin:/bin' } })), (e) => e instanceof SandboxError && e.code === 'ENOENT')
    } finally {
      process.env.PATH = oldPath
    }
  })
}

test('a script without #! runs through /bin/sh in every mode, as with child_process (danger-full-access refused it)', async (t) => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-noshebang-')))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  const script = path.join(dir, 'script')
  fs.writeFileSync(script, 'echo "from script: $1"\n', { mode: 0o755 })
  for (const sandbox of ['workspace-write', 'danger-full-access']) {
    const r = await spawnSandboxed([script, 'a b'], { cwd: dir, sandbox })
    assert.equal(r.exitCode, 0, `${sandbox}: ${r.stderr}`)
    assert.equal(r.stdout, 'from script: a b\n', sandbox)
  }
  // A file that is not executable at all is still EACCES, with the file's own error.
  fs.chmodSync(script, 0o644)
  await assert.rejects(spawnSandboxed([script], { cwd: dir, sandbox: 'danger-full-access' }), { code: 'EACCES' })
})

test('default sandbox: SANDSPAWN_SANDBOX=bwrap and SANDSPAWN_NETWORK_DISABLED=1 are visible; not under danger-full-access', async () => {
  const script = 'printf "%s|%s|%s" "${SANDSPAWN_SANDBOX-unset}" "${SANDSPAWN_NETWORK_DISABLED-unset}" "$SANDSPAWN_SANDBOX"'
  const sb = await spawnSandboxed(['sh', '-c', script])
  assert.equal(sb.stdout, 'bwrap|1|bwrap')
  const none = await spawnSandboxed(['sh', '-c', 'printf "%s" "${SANDSPAWN_SANDBOX-unset}"'], { sandbox: 'danger-full-access' })
  assert.equal(none.stdout, 'unset')
  // A caller-provided SANDSPAWN_SANDBOX cannot fake the marker inside the sandbox.
  const faked = await spawnSandboxed(['sh', '-c', 'printf "%s" "$SANDSPAWN_SANDBOX"'], { env: { SANDSPAWN_SANDBOX: 'none' } })
  assert.equal(faked.stdout, 'bwrap')
})

test('default maxBuffer: 1 GB of output is truncated head+marker+tail and host RSS grows < 64 MB', async () => {
  // In a fresh node process, so other tests' allocations do not pollute the measurement.
  const code = `
    const { spawnSandboxed } = require(${JSON.stringify(PKG)})
    const vmhwm = () => Number(/VmHWM:\\s+(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]) * 1024
    ;(async () => {
      await spawnSandboxed(['true'])
      global.gc && global.gc()
      const base = process.memoryUsage().rss
      const hwmBefore = vmhwm()
      let peak = base
      const t = setInterval(() => { const r = process.memoryUsage().rss; if (r > peak) peak = r }, 5)
      const r = await spawnSandboxed(['head', '-c', '1000000000', '/dev/zero'])
      clearInterval(t)
      const rss = process.memoryUsage().rss; if (rss > peak) peak = rss
      const out = r.stdout
      const m = /\\[\\.\\.\\. (\\d+) bytes omitted \\.\\.\\.\\]/.exec(out)
      console.log(JSON.stringify({
        exitCode: r.exitCode, signal: r.signal, truncated: r.truncated, omittedBytes: r.omittedBytes,
        len: out.length, marker: m && m[0], markerN: m && Number(m[1]), markerAt: m ? m.index : -1,
        headZeros: m ? /^\\0*\\n?$/.test(out.slice(0, m.index)) : false,
        headLen: m ? out.slice(0, m.index).replace(/\\n$/, '').length : 0,
        tailLen: m ? out.slice(m.index + m[0].length).replace(/^\\n/, '').length : 0,
        tailZeros: m ? /^\\n?\\0*$/.test(out.slice(m.index + m[0].length)) : false,
        aggLen: r.aggregatedOutput.length,
        base, peak, hwmDelta: vmhwm() - hwmBefore,
      }))
    })().catch((e) => { console.error(e); process.exit(3) })`
  const res = await runNode(code, { nodeArgs: ['--expose-gc'], timeoutMs: 60000 })
  assert.equal(res.code, 0, res.stderr)
  const o = JSON.parse(res.stdout)
  assert.equal(o.exitCode, 0)
  assert.equal(o.signal, null)
  assert.equal(o.truncated, true)
  assert.deepEqual(o.omittedBytes, { stdout: 1e9 - 1048576, stderr: 0 })
  assert.equal(o.marker, `[... ${1e9 - 1048576} bytes omitted ...]`)
  assert.ok(o.headZeros && o.tailZeros, 'head and tail are the original bytes')
  assert.equal(o.headLen, 524288, 'first half of maxBuffer kept')
  assert.equal(o.tailLen, 524288, 'last half of maxBuffer kept')
  assert.ok(o.len < 1048576 + 100, `stdout length ${o.len}`)
  assert.ok(o.aggLen < 1048576 + 100, `aggregatedOutput length ${o.aggLen}`)
  const grew = o.peak - o.base
  assert.ok(grew < 64 * 1024 * 1024, `RSS grew by ${(grew / 1048576).toFixed(1)} MB (sampled peak)`)
  assert.ok(o.hwmDelta < 64 * 1024 * 1024, `VmHWM grew by ${(o.hwmDelta / 1048576).toFixed(1)} MB`)
})

test('maxBuffer 100 MiB: 50 MiB of output is returned byte-exact', async () => {
  const expected = crypto.randomBytes(39321600).toString('base64') // 52428800 chars
  assert.equal(expected.length, 52428800)
  const file = path.join(scratch, 'fifty-mb.txt')
  fs.writeFileSync(file, expected)
  try {
    const r = await spawnSandboxed(['cat', file], { maxBuffer: 100 * 1024 * 1024 })
    assert.equal(r.exitCode, 0, r.stderr)
    assert.equal(r.truncated, false)
    assert.deepEqual(r.omittedBytes, { stdout: 0, stderr: 0 })
    assert.equal(r.stdout.length, expected.length)
    assert.equal(sha(r.stdout), sha(expected))
    assert.equal(r.aggregatedOutput.length, expected.length)
  } finally {
    fs.rmSync(file, { force: true })
  }
})

test('small maxBuffer: stderr and stdout are truncated independently with exact counts', async () => {
  const r = await spawnSandboxed(['sh', '-c', 'head -c 5000 /dev/zero | tr "\\0" a; head -c 300 /dev/zero | tr "\\0" b >&2'], { maxBuffer: 1000 })
  assert.equal(r.exitCode, 0)
  assert.equal(r.truncated, true)
  assert.deepEqual(r.omittedBytes, { stdout: 4000, stderr: 0 })
  assert.equal(r.stderr, 'b'.repeat(300))
  assert.match(r.stdout, /^a{500}\n?\[\.\.\. 4000 bytes omitted \.\.\.\]\n?a{500}$/)
})

test('startSandboxed: write() and end() keep their call order when not awaited, and a reused buffer is not re-read', async () => {
  const { startSandboxed } = require('..')
  const want = Array.from({ length: 100 }, (_, i) => `line ${i}\n`).join('') + 'reused\n'
  for (let run = 0; run < 20; run++) {
    const p = await startSandboxed(['cat'], { stdin: 'pipe' })
    const buf = Buffer.from('reused\n')
    for (let i = 0; i < 100; i++) p.write(`line ${i}\n`)
    p.write(buf)
    buf.fill(0x41) // the caller reuses its buffer before the write happened
    p.end()
    const r = await p.wait()
    assert.equal(r.stdout, want, `run ${run}`)
  }
})
