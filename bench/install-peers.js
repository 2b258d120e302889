#!/usr/bin/env node
'use strict'
/**
 * `npm run bench:peers`: install the peer sandboxes the benchmark compares against into
 * bench/peers/ (git-ignored; never a dependency of sandspawn):
 *   - @anthropic-ai/sandbox-runtime (srt), which needs socat and ripgrep on Linux
 *   - @openai/codex (the Codex CLI, whose `codex sandbox linux` runs a command in its sandbox)
 * When running as root on a Debian-like system it also tries `apt-get install -y socat ripgrep`.
 * Every step is best effort: a failure is reported and the next step still runs.
 *
 *   node bench/install-peers.js [--no-apt] [--only srt|codex]
 */

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')
const path = require('node:path')

const PEERS_DIR = path.join(__dirname, 'peers')
const PACKAGES = {
  srt: '@anthropic-ai/sandbox-runtime',
  codex: '@openai/codex',
}

function run(cmd, args, opts = {}) {
  console.log(`$ ${cmd} ${args.join(' ')}`)
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts })
  if (r.error) {
    console.log(`  -> failed to start: ${r.error.message}`)
    return false
  }
  if (r.status !== 0) {
    console.log(`  -> exit ${r.status ?? r.signal}`)
    return false
  }
  return true
}

function which(name) {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' })
  return r.status === 0 ? r.stdout.trim() : null
}

function main() {
  const argv = process.argv.slice(2)
  const noApt = argv.includes('--no-apt')
  const onlyIdx = argv.indexOf('--only')
  const only = onlyIdx >= 0 ? argv[onlyIdx + 1] : null
  const wanted = Object.entries(PACKAGES).filter(([k]) => !only || k === only)
  const report = []

  if (process.platform === 'linux' && (!only || only === 'srt')) {
    const missing = ['socat', 'rg'].filter((b) => !which(b))
    if (missing.length === 0) {
      report.push('socat, ripgrep: already installed')
    } else if (noApt) {
      report.push(`socat/ripgrep missing (${missing.join(', ')}); --no-apt given, srt will not run`)
    } else if (typeof process.getuid === 'function' && process.getuid() === 0 && which('apt-get')) {
      const ok = run('apt-get', ['install', '-y', 'socat', 'ripgrep'], { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
      report.push(ok ? 'socat, ripgrep: installed with apt-get' : 'socat, ripgrep: apt-get install failed (try `apt-get update` first)')
    } else {
      report.push(`socat/ripgrep missing (${missing.join(', ')}): install them (e.g. sudo apt-get install -y socat ripgrep)`)
    }
  }

  fs.mkdirSync(PEERS_DIR, { recursive: true })
  const pkgJson = path.join(PEERS_DIR, 'package.json')
  if (!fs.existsSync(pkgJson)) {
    fs.writeFileSync(pkgJson, JSON.stringify({ name: 'sandspawn-bench-peers', private: true, description: 'peers for bench/run.js; not part of sandspawn' }, null, 2) + '\n')
  }
  for (const [key, name] of wanted) {
    const ok = run('npm', ['install', '--prefix', PEERS_DIR, '--no-audit', '--no-fund', `${name}@latest`])
    report.push(`${key} (${name}): ${ok ? 'installed' : 'npm install failed'}`)
  }

  console.log('\nsummary:')
  for (const line of report) console.log(`  ${line}`)
  console.log(`\npeers live in ${PEERS_DIR} (git-ignored). Run \`npm run bench\` to include them.`)
}

main()
