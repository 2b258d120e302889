#!/usr/bin/env node
'use strict'
// Generates corpus.json: every case of gen/cases.js really run under sandspawn (the built addon)
// with its policy, and once more unsandboxed ('danger-full-access') in a fresh copy of the same
// fixture to check its label: a denial must behave differently there, an ordinary failure the same
// way (same exit code). Scratch paths become /WORKSPACE (the cwd), /SCRATCH (the case's tree) and
// /GEN (the servers' tree); loopback ports become PORT and CLOSED_PORT. Only loopback servers this
// script starts, and `.invalid` names, are ever contacted.
//
// Usage: node __test__/denial-corpus/generate.js [--only id,id] [out.json]
// Needs: bwrap, git, python3 (pyenv), node/npm/npx, yarn, pnpm, pip, uv, cargo, make, gcc, java,
// curl, wget, ssh, rsync, tar, docker (CLI only). Cases of missing tools are skipped and listed.

const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { spawnSandboxed } = require('../..')
const { buildTemplate, fresh } = require('./gen/fixture')
const { startServers, closedPort } = require('./gen/servers')
const { CASES } = require('./gen/cases')

const args = process.argv.slice(2)
const onlyAt = args.indexOf('--only')
const only = onlyAt >= 0 ? new Set(args.splice(onlyAt, 2)[1].split(',')) : null
const OUT = args[0] || path.join(__dirname, 'corpus.json')

const PYBIN = path.dirname(fs.realpathSync(execFileSync('python3', ['-c', 'import sys; print(sys.executable)']).toString().trim()))
const PYENV_BIN = (() => {
  try {
    return path.dirname(execFileSync('bash', ['-c', 'command -v pyenv']).toString().trim())
  } catch {
    return null
  }
})()
const PATH = [PYBIN, PYENV_BIN, path.join(os.homedir(), '.cargo/bin'), '/usr/local/bin', '/usr/bin', '/bin'].filter(Boolean).join(':')
const has = (tool) => {
  try {
    execFileSync('bash', ['-c', `command -v ${tool}`], { env: { PATH }, stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

function baseEnv(x, servers) {
  return {
    PATH,
    HOME: x.home,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    CARGO_HOME: x.cargoHome,
    RUSTUP_HOME: process.env.RUSTUP_HOME || path.join(os.homedir(), '.rustup'),
    CARGO_TERM_COLOR: 'never',
    npm_config_registry: `http://127.0.0.1:${servers.port}/npm/`,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    npm_config_fetch_retries: '0',
    PIP_INDEX_URL: `http://127.0.0.1:${servers.port}/simple/`,
    PIP_DISABLE_PIP_VERSION_CHECK: '1',
    PIP_RETRIES: '1',
    UV_INDEX_URL: `http://127.0.0.1:${servers.port}/simple/`,
    UV_NO_PROGRESS: '1',
    DOCKER_HOST: `unix://${servers.dockerSock}`,
    GIT_TERMINAL_PROMPT: '0',
  }
}

async function runCase(c, tpl, servers, sandbox) {
  const [id, , variant, , , argv, extra = {}] = c
  const x = { ...fresh(path.dirname(tpl), tpl), port: servers.port, closed: servers.closed, sock: servers.dockerSock }
  if (extra.setup) extra.setup(x)
  const env = { ...baseEnv(x, servers), ...(extra.env ? extra.env(x) : {}) }
  const policy = sandbox ? variant.policy(x) : 'danger-full-access'
  const command = argv(x)
  const r = await spawnSandboxed(command, { cwd: x.ws, sandbox: policy, env, extendEnv: false, timeout: extra.timeout ?? 60000, maxBuffer: 16384 })
  return { x, policy, command, r }
}

function normalizer(gen, x, servers) {
  const pairs = [
    [x.ws, '/WORKSPACE'],
    [x.t, '/SCRATCH'],
    [gen, '/GEN'],
    [encodeURIComponent(gen), '%2FGEN'],
  ]
  return (v) => {
    if (typeof v === 'string') {
      let s = v
      for (const [from, to] of pairs) s = s.split(from).join(to)
      s = s.replace(/\/sed[A-Za-z0-9]{6}\b/g, '/sedXXXXXX').replace(/127\.0\.0\.1-[0-9a-f]{16}/g, '127.0.0.1-HASH')
      return s.replace(new RegExp(`(?<![0-9])${servers.port}(?![0-9])`, 'g'), 'PORT').replace(new RegExp(`(?<![0-9])${servers.closed}(?![0-9])`, 'g'), 'CLOSED_PORT')
    }
    if (Array.isArray(v)) return v.map(normalizer(gen, x, servers))
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, w]) => [k, normalizer(gen, x, servers)(w)]))
    return v
  }
}

/** A label agrees with the unsandboxed run: denials differ there, ordinary failures do not. */
function labelProblem(label, boxed, host, norm) {
  const text = (r) => norm(r.stdout + r.stderr).replace(/\d+(\.\d+)? ?m?s\b/g, 'T')
  if (label !== null) {
    // A `.invalid` name fails everywhere; with the network off no name could resolve at all.
    if (/invalid/.test(JSON.stringify(boxed.command ?? ''))) return null
    if (host.exitCode !== boxed.exitCode || text(host) !== text(boxed)) return null
    return 'labelled a denial, but the unsandboxed run behaves the same'
  }
  if (boxed.exitCode === 0) return null
  if (host.exitCode === boxed.exitCode && host.signal === boxed.signal) return null
  return `labelled ordinary, but unsandboxed it ends ${host.exitCode ?? host.signal} (sandboxed ${boxed.exitCode ?? boxed.signal})`
}

async function main() {
  // Not under /tmp: workspace-write makes /tmp writable, and 'outside' must really be outside.
  const gen = fs.mkdtempSync('/var/tmp/sandspawn-corpus-')
  const cases = CASES.filter((c) => !only || only.has(c[0]))
  const skipped = []
  const problems = []
  const records = []
  let servers
  try {
    const tplRoot = path.join(gen, 'cases')
    const port = await closedPort()
    const tpl = buildTemplate(tplRoot, port)
    servers = await startServers(gen, path.join(tpl, 'remote.git'), port, await closedPort())
    for (const c of cases) {
      const [id, tool, variant, label, description, , extra = {}] = c
      const bin = { python: 'python3', sh: 'sh', javac: 'javac' }[tool] || tool
      if (!has(bin)) {
        skipped.push(`${id} (${bin} not installed)`)
        continue
      }
      const boxed = await runCase(c, tpl, servers, true)
      const norm = normalizer(gen, boxed.x, servers)
      const host = await runCase(c, tpl, servers, false)
      const problem = labelProblem(label, { ...boxed.r, command: boxed.command }, host.r, normalizer(gen, host.x, servers))
      if (problem) problems.push(`${id}: ${problem}`)
      if (boxed.r.timedOut && !extra.timeout) problems.push(`${id}: hung (60 s)`)
      const r = boxed.r
      records.push({
        id,
        tool,
        description,
        policyName: variant.key,
        sandboxType: r.sandboxType,
        policy: norm(boxed.policy),
        cwd: norm(r.cwd),
        command: norm(boxed.command),
        ...(extra.timeout ? { timeout: extra.timeout } : {}),
        ...(extra.knownMiss ? { knownMiss: extra.knownMiss } : {}),
        exitCode: r.exitCode,
        signal: r.signal,
        timedOut: r.timedOut,
        stdout: norm(r.stdout),
        stderr: norm(r.stderr),
        aggregatedOutput: norm(r.aggregatedOutput),
        unsandboxed: { exitCode: host.r.exitCode, signal: host.r.signal },
        expected: label && { reason: label[0], kind: label[1], path: label[2] },
        got: norm(r.denial),
      })
      process.stderr.write(`${id}: exit ${r.exitCode ?? r.signal}${r.timedOut ? ' (timed out)' : ''}, unsandboxed ${host.r.exitCode ?? host.r.signal}\n`)
    }
  } finally {
    if (servers) await servers.stop()
    fs.rmSync(gen, { recursive: true, force: true })
  }
  const out = records.map(({ got, ...rest }) => rest)
  fs.writeFileSync(OUT, JSON.stringify(out, null, 2) + '\n')
  process.stderr.write(`wrote ${out.length} cases to ${OUT}\n`)
  if (skipped.length) process.stderr.write(`skipped:\n  ${skipped.join('\n  ')}\n`)
  if (problems.length) {
    process.stderr.write(`label problems:\n  ${problems.join('\n  ')}\n`)
    process.exitCode = 1
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
