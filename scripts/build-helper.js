#!/usr/bin/env node
'use strict'
// Build `sandspawn-helper` (the program every Linux sandbox runs before the command) and put it next
// to the addon's `.node` file with mode 0755, where the addon looks for it at load time. Its SHA-256
// goes to `sandspawn-helper.sha256` in the package root, which the addon's build bakes in (build.rs):
// so build the helper first, then the addon.
//   node scripts/build-helper.js [--debug] [--target TRIPLE] [--out DIR]
// `--out` defaults to the package root (beside the `.node` that `napi build --platform` writes);
// release CI passes the platform package's directory (npm/<platform>) together with `--target`.

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.resolve(__dirname, '..')
const argv = process.argv.slice(2)
const option = (name) => {
  const i = argv.indexOf(name)
  return i >= 0 ? argv[i + 1] : undefined
}
const release = !argv.includes('--debug')
const target = option('--target')
const out = path.resolve(root, option('--out') ?? '.')

// Always with an explicit target: then RUSTFLAGS apply to the helper only, not to build scripts,
// and the helper's artifacts live apart from the addon's (no rebuilds back and forth).
const host = /^host: (\S+)$/m.exec(spawnSync('rustc', ['-vV'], { encoding: 'utf8' }).stdout || '')
if (!target && !host) {
  console.error('sandspawn: cannot tell the Rust host target (`rustc -vV`)')
  process.exit(1)
}

// Without `--target`, a glibc host builds the helper for musl when that target's standard library
// is installed (`rustup target add x86_64-unknown-linux-musl`): glibc probes the CPU's caches with
// `cpuid` at every start, and in a VM each `cpuid` traps, so a glibc helper starts ~0.6 ms later on
// every sandboxed run (0.69 against 0.12 ms per exec, measured on the 2-core CI VM). Its exec is
// glibc's whichever libc it has (helper/src/exec_search.rs); what changes is the proxy's name
// lookups (`--resolve`, on the host): /etc/hosts and DNS, no NSS modules (README, "Network").
// Otherwise, or if the musl build fails, it is built for the host.
function muslTwin(triple) {
  if (!triple.endsWith('-unknown-linux-gnu')) return null
  const musl = triple.replace(/-gnu$/, '-musl')
  const libdir = spawnSync('rustc', ['--print', 'target-libdir', '--target', musl], { encoding: 'utf8' }).stdout
  const dir = (libdir || '').trim()
  const installed = dir && fs.existsSync(dir) && fs.readdirSync(dir).some((f) => f.startsWith('libstd-'))
  return installed ? musl : null
}

function build(triple) {
  const env = { ...process.env }
  // Linked statically against glibc (musl targets are static already): the dynamic loader never
  // runs for the helper, so a caller's LD_PRELOAD/LD_AUDIT reaches the command but never runs in
  // the helper, and the helper starts faster (no shared objects to map).
  if (triple.endsWith('-linux-gnu')) env.RUSTFLAGS = `${env.RUSTFLAGS || ''} -C target-feature=+crt-static`.trim()
  const args = ['build', '-p', 'sandspawn-helper', '--target', triple]
  if (release) args.push('--release')
  return spawnSync('cargo', args, { cwd: root, stdio: 'inherit', env }).status === 0
}

let triple = target || host[1]
const musl = target ? null : muslTwin(triple)
if (musl && build(musl)) {
  triple = musl
} else {
  if (musl) console.error(`sandspawn: building the helper for ${musl} failed; building it for ${triple}`)
  if (!build(triple)) process.exit(1)
}

const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target')
const built = path.join(targetDir, triple, release ? 'release' : 'debug', 'sandspawn-helper')
const dest = path.join(out, 'sandspawn-helper')
// Copy to a temporary name and rename, so a running sandbox never sees a half-written helper.
const tmp = `${dest}.${process.pid}.tmp`
fs.copyFileSync(built, tmp)
fs.chmodSync(tmp, 0o755)
fs.renameSync(tmp, dest)
const digest = crypto.createHash('sha256').update(fs.readFileSync(dest)).digest('hex')
const digestFile = path.join(root, 'sandspawn-helper.sha256')
if (!fs.existsSync(digestFile) || fs.readFileSync(digestFile, 'utf8') !== `${digest}  sandspawn-helper\n`) {
  fs.writeFileSync(digestFile, `${digest}  sandspawn-helper\n`)
}
console.error(`sandspawn: helper ${path.relative(root, dest) || dest} (${triple}, ${release ? 'release' : 'debug'})`)
