'use strict'
// The CLI's limit flags (lib/cli/limits.js): size parsing, the limits they set, the line a limited
// run prints, and the `doctor` lines.

const test = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFile } = require('node:child_process')

const { parseValue, limitsFromFlags } = require('../lib/cli/limits.js')
const { tmpDir } = require('./fixtures/spawn-helpers')

const CLI = path.join(__dirname, '..', 'bin', 'sandspawn.js')

function cli(args, opts = {}) {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { timeout: 60000, ...opts }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : null) : 0, stdout, stderr })
    })
  })
}

test('sizes take k, m and g (binary); counts and milliseconds are plain integers', () => {
  assert.equal(parseValue('memory', '512m'), 512 * 1024 * 1024)
  assert.equal(parseValue('memory', '2G'), 2 * 1024 ** 3)
  assert.equal(parseValue('max-file-size', '1k'), 1024)
  assert.equal(parseValue('max-file-size', '4096'), 4096)
  assert.equal(parseValue('max-processes', '64'), 64)
  assert.equal(parseValue('cpu-time', '1500'), 1500)
  for (const [flag, bad] of [['memory', '1.5m'], ['memory', '0'], ['memory', '12x'], ['memory', ''], ['max-processes', '10k'], ['cpu-time', '-5'], ['max-file-size', '99999999999999999g']]) {
    assert.throws(() => parseValue(flag, bad), (err) => err.usage === true && err.message.startsWith(`--${flag} must be`), `${flag} ${bad}`)
  }
  assert.deepEqual(limitsFromFlags({ memory: '1m', 'cpu-time': '2000' }), { memory: 1048576, cpuTime: 2000 })
  assert.equal(limitsFromFlags({ timeout: '5' }), undefined)
})

test('a run that hits --max-file-size exits 128+SIGXFSZ and says which limit ended it', async () => {
  const dir = tmpDir('sandspawn-cli-limits-')
  try {
    const r = await cli(['--writable', dir, '--cwd', dir, '--max-file-size', '1m', '--', 'sh', '-c', 'head -c 3000000 /dev/zero > f'])
    assert.equal(r.code, 128 + 25, r.stderr)
    assert.match(r.stderr, /exceeded its --max-file-size limit \(SIGXFSZ\)/)
    assert.equal(fs.statSync(path.join(dir, 'f')).size, 1024 * 1024)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('a bad limit flag is a usage error naming the flag', async () => {
  const r = await cli(['--memory', '12x', '--', 'true'])
  assert.equal(r.code, 2)
  assert.match(r.stderr, /--memory must be a positive integer, optionally followed by k, m or g/)
})

test('doctor says how each limit is enforced here', async () => {
  const r = await cli(['doctor'])
  assert.equal(r.code, 0, r.stderr)
  assert.match(r.stdout, /^limits: {5}--memory: rlimit, per process$/m)
  assert.match(r.stdout, /--cpu-time: rlimit, per process/)
  assert.match(r.stdout, /--max-processes: (rlimit, per process|not enforceable \(.+\))/)
})
