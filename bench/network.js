#!/usr/bin/env node
'use strict'
/**
 * The network allow-list's proxy against a direct connection (issue 33; target: >= 80 % of direct
 * throughput for plain HTTP bodies and for CONNECT tunnels), on loopback: an HTTP server in a
 * process of its own (bench/network-server.js) on 127.0.0.2 sends N bytes; curl downloads them
 *   - direct: curl on the host, `--noproxy '*'` (the baseline);
 *   - plain HTTP: curl inside the sandbox, through the run's proxy (absolute-form GET);
 *   - CONNECT: curl inside the sandbox, `-p` (a CONNECT tunnel carrying the same GET);
 *   - bare relay: curl on the host through bench/bare-relay.py, a splice(2) relay with no policy and
 *     no parsing in a process of its own: the ceiling any relay (a second loopback hop) reaches here.
 * The four are interleaved (the order rotates every round), so machine load hits each alike.
 * Throughput is curl's own `%{speed_download}` (sandbox setup not included). The proxy's CPU is this
 * process's CPU time (`process.cpuUsage`) during a proxied run, per GB moved: the proxy runs in
 * the addon's threads here; curl and the server are other processes. curl's own CPU per GB (through
 * /usr/bin/time, where installed) shows what a relay costs the receiver.
 *
 *   node bench/network.js [--quick] [--json]
 * Asserts nothing: a missed target is printed, never thrown.
 */

const fs = require('node:fs')
const path = require('node:path')
const { spawn, execFile } = require('node:child_process')
const { loadSandspawn, summarize } = require('./lib')

const QUICK = process.argv.includes('--quick')
const N = QUICK ? { bytes: 128 * 2 ** 20, rounds: 3 } : { bytes: 512 * 2 ** 20, rounds: 7 }
const HOST = '127.0.0.2'
const RELAY_HOST = '127.0.0.3'

/** Start a process that prints the port it listens on; resolves `{ child, port }`. */
function startListener(argv0, args) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv0, args, { stdio: ['ignore', 'pipe', 'inherit'] })
    child.once('error', reject)
    child.once('exit', (code) => reject(new Error(`${path.basename(args[0])} exited (${code}) before it listened`)))
    child.stdout.once('data', (d) => resolve({ child, port: Number(String(d).trim()) }))
  })
}

const CURL_OUT = ['-sS', '-o', '/dev/null', '-w', '%{speed_download} %{size_download}\\n']
/** curl under /usr/bin/time prints its CPU seconds on stderr (`curl-cpu U S`); without it, no CPU. */
const TIME = fs.existsSync('/usr/bin/time') ? ['/usr/bin/time', '-f', 'curl-cpu %U %S'] : []

/** `{ mbps, curlCpuSPerGB }` from curl's output; `curlCpuSPerGB` is null without /usr/bin/time. */
function parseCurl(stdout, stderr, bytes) {
  const [speed, size] = stdout.trim().split(/\s+/).map(Number)
  if (size !== bytes) throw new Error(`curl downloaded ${size} of ${bytes} bytes: ${stdout}`)
  const cpu = /curl-cpu ([\d.]+) ([\d.]+)/.exec(stderr)
  return { mbps: speed / 1e6, curlCpuSPerGB: cpu ? (Number(cpu[1]) + Number(cpu[2])) / (bytes / 1e9) : null }
}

/** curl on the host, not through any proxy (`url` names the server itself, or the bare relay). */
function onHost(url, bytes) {
  const argv = [...TIME, 'curl', '--noproxy', '*', ...CURL_OUT, url]
  return new Promise((resolve, reject) => {
    execFile(argv[0], argv.slice(1), (err, stdout, stderr) => (err ? reject(new Error(stderr || err.message)) : resolve(parseCurl(stdout, stderr, bytes))))
  })
}

async function proxied(sandspawn, url, bytes, tunnel) {
  const sandbox = { network: { allowedDomains: [HOST], allowPrivateAddresses: [HOST] } }
  const before = process.cpuUsage()
  const r = await sandspawn.spawnSandboxed([...TIME, 'curl', ...(tunnel ? ['-p'] : []), ...CURL_OUT, url], { sandbox, timeout: 120000 })
  const cpu = process.cpuUsage(before)
  if (r.exitCode !== 0) throw new Error(`curl through the proxy failed: ${r.stderr}`)
  return { ...parseCurl(r.stdout, r.stderr, bytes), cpuSPerGB: (cpu.user + cpu.system) / 1e6 / (bytes / 1e9) }
}

/** `{ direct, plain, connect }`, each an array of per-round results. */
async function measure({ bytes = N.bytes, rounds = N.rounds } = {}) {
  const sandspawn = loadSandspawn()
  const server = await startListener(process.execPath, [path.join(__dirname, 'network-server.js'), HOST])
  const children = [server.child]
  const url = `http://${HOST}:${server.port}/${bytes}`
  const sides = {
    direct: () => onHost(url, bytes),
    plain: () => proxied(sandspawn, url, bytes, false),
    connect: () => proxied(sandspawn, url, bytes, true),
  }
  const out = { direct: [], plain: [], connect: [], relay: [] }
  try {
    // The ceiling is optional: without python3 (3.10+, for os.splice) the proxy's rows still stand.
    const relay = await startListener('python3', [path.join(__dirname, 'bare-relay.py'), RELAY_HOST, HOST, String(server.port)]).catch((err) => {
      console.error(`bench/network.js: no bare relay (${err.message}); its row is left out`)
      return null
    })
    if (relay) {
      children.push(relay.child)
      sides.relay = () => onHost(`http://${RELAY_HOST}:${relay.port}/${bytes}`, bytes)
    }
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
    for (const c of children) c.kill()
  }
  return out
}

/**
 * Rows: per relayed path (the proxy's two, then the bare relay when it ran), median MB/s, its share
 * of direct's median, the proxy's CPU s/GB (null for the bare relay), and curl's own CPU s/GB on
 * that path and on the direct one (null without /usr/bin/time).
 */
function summary(out) {
  const med = (xs) => (xs.length && xs.every((x) => x != null) ? summarize(xs).median : null)
  const direct = med(out.direct.map((r) => r.mbps))
  const paths = ['plain', 'connect', ...(out.relay.length ? ['relay'] : [])]
  return paths.map((path) => ({
    path,
    mbps: med(out[path].map((r) => r.mbps)),
    directMbps: direct,
    ratio: med(out[path].map((r) => r.mbps)) / direct,
    cpuSPerGB: path === 'relay' ? null : med(out[path].map((r) => r.cpuSPerGB)),
    curlCpuSPerGB: med(out[path].map((r) => r.curlCpuSPerGB)),
    directCurlCpuSPerGB: med(out.direct.map((r) => r.curlCpuSPerGB)),
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
        const proxyCpu = r.cpuSPerGB == null ? 'no proxy' : `proxy CPU ${r.cpuSPerGB.toFixed(2)} s/GB`
        const curlCpu = r.curlCpuSPerGB == null ? '' : `, curl CPU ${r.curlCpuSPerGB.toFixed(2)} s/GB (direct ${r.directCurlCpuSPerGB.toFixed(2)})`
        console.log(`${r.path.padEnd(8)} ${r.mbps.toFixed(0)} MB/s vs direct ${r.directMbps.toFixed(0)} MB/s = ${(100 * r.ratio).toFixed(0)} % (target >= 80 %), ${proxyCpu}${curlCpu}; samples ${r.samples.join(' ')} | direct ${r.directSamples.join(' ')}`)
      }
    })
    .catch((err) => {
      console.error(err)
      process.exit(1)
    })
}
