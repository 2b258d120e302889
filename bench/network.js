#!/usr/bin/env node
'use strict'
/**
 * The network allow-list's proxy against a direct connection (issue 33; target: >= 80 % of direct
 * throughput for plain HTTP bodies and for CONNECT tunnels), on loopback: an HTTP server in a
 * process of its own (bench/network-server.js) on 127.0.0.2 sends N bytes; curl downloads them
 *   - direct: curl on the host, `--noproxy '*'` (the baseline);
 *   - plain HTTP: curl inside the sandbox, through the run's proxy (absolute-form GET);
 *   - CONNECT: curl inside the sandbox, `-p` (a CONNECT tunnel carrying the same GET).
 * The three are interleaved (the order rotates every round), so machine load hits each alike.
 * Throughput is curl's own `%{speed_download}` (sandbox setup not included). The proxy's CPU is this
 * process's CPU time (`process.cpuUsage`) during a proxied run, per GB moved: the proxy runs in
 * the addon's threads here; curl and the server are other processes.
 *
 *   node bench/network.js [--quick] [--json]
 * Asserts nothing: a missed target is printed, never thrown.
 */

const path = require('node:path')
const { spawn, execFile } = require('node:child_process')
const { loadSandspawn, summarize } = require('./lib')

const QUICK = process.argv.includes('--quick')
const N = QUICK ? { bytes: 128 * 2 ** 20, rounds: 3 } : { bytes: 512 * 2 ** 20, rounds: 7 }
const HOST = '127.0.0.2'

function startServer() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(__dirname, 'network-server.js'), HOST], { stdio: ['ignore', 'pipe', 'inherit'] })
    child.once('error', reject)
    child.stdout.once('data', (d) => resolve({ child, port: Number(String(d).trim()) }))
  })
}

const CURL_OUT = ['-sS', '-o', '/dev/null', '-w', '%{speed_download} %{size_download}\\n']

function parseCurl(stdout, bytes) {
  const [speed, size] = stdout.trim().split(/\s+/).map(Number)
  if (size !== bytes) throw new Error(`curl downloaded ${size} of ${bytes} bytes: ${stdout}`)
  return speed / 1e6
}

function direct(url, bytes) {
  return new Promise((resolve, reject) => {
    execFile('curl', ['--noproxy', '*', ...CURL_OUT, url], (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve({ mbps: parseCurl(stdout, bytes) })))
  })
}

async function proxied(sandspawn, url, bytes, tunnel) {
  const sandbox = { network: { allowedDomains: [HOST], allowPrivateAddresses: [HOST] } }
  const before = process.cpuUsage()
  const r = await sandspawn.spawnSandboxed(['curl', ...(tunnel ? ['-p'] : []), ...CURL_OUT, url], { sandbox, timeout: 120000 })
  const cpu = process.cpuUsage(before)
  if (r.exitCode !== 0) throw new Error(`curl through the proxy failed: ${r.stderr}`)
  return { mbps: parseCurl(r.stdout, bytes), cpuSPerGB: (cpu.user + cpu.system) / 1e6 / (bytes / 1e9) }
}

/** `{ direct, plain, connect }`, each an array of per-round results. */
async function measure({ bytes = N.bytes, rounds = N.rounds } = {}) {
  const sandspawn = loadSandspawn()
  const { child, port } = await startServer()
  const url = `http://${HOST}:${port}/${bytes}`
  const sides = {
    direct: () => direct(url, bytes),
    plain: () => proxied(sandspawn, url, bytes, false),
    connect: () => proxied(sandspawn, url, bytes, true),
  }
  const out = { direct: [], plain: [], connect: [] }
  try {
    // One warm-up of each, not kept.
    for (const f of Object.values(sides)) await f()
    const names = Object.keys(sides)
    for (let i = 0; i < rounds; i++) {
      for (let k = 0; k < names.length; k++) {
        const name = names[(i + k) % names.length]
        out[name].push(await sides[name]())
      }
    }
  } finally {
    child.kill()
  }
  return out
}

/** Rows: per proxied path, median MB/s, its share of direct's median, and the proxy's CPU s/GB. */
function summary(out) {
  const med = (xs) => summarize(xs).median
  const direct = med(out.direct.map((r) => r.mbps))
  return ['plain', 'connect'].map((path) => ({
    path,
    mbps: med(out[path].map((r) => r.mbps)),
    directMbps: direct,
    ratio: med(out[path].map((r) => r.mbps)) / direct,
    cpuSPerGB: med(out[path].map((r) => r.cpuSPerGB)),
    samples: out[path].map((r) => Math.round(r.mbps)),
    directSamples: out.direct.map((r) => Math.round(r.mbps)),
  }))
}

module.exports = { measure, summary, N }

if (require.main === module) {
  measure()
    .then((out) => {
      const rows = summary(out)
      if (process.argv.includes('--json')) return console.log(JSON.stringify(rows))
      for (const r of rows) {
        console.log(`${r.path.padEnd(8)} ${r.mbps.toFixed(0)} MB/s vs direct ${r.directMbps.toFixed(0)} MB/s = ${(100 * r.ratio).toFixed(0)} % (target >= 80 %), proxy CPU ${r.cpuSPerGB.toFixed(2)} s/GB; samples ${r.samples.join(' ')} | direct ${r.directSamples.join(' ')}`)
      }
    })
    .catch((err) => {
      console.error(err)
      process.exit(1)
    })
}
