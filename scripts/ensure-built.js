#!/usr/bin/env node
'use strict'
// Build the native addon when it is missing or older than its sources. Used by `npm test` (and
// run it by hand before a single `node --test` file). Deliberately not an npm `prepare` script:
// npm would ask every consumer of the published package to approve it as an install script.

const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.resolve(__dirname, '..')
const force = process.argv.includes('--force')
const release = !process.argv.includes('--debug')

function newestSource() {
  let newest = 0
  const visit = (p) => {
    const st = fs.statSync(p)
    if (st.isDirectory()) for (const e of fs.readdirSync(p)) visit(path.join(p, e))
    else if (/\.(rs|sbpl)$/.test(p)) newest = Math.max(newest, st.mtimeMs)
  }
  visit(path.join(root, 'src'))
  for (const f of ['Cargo.toml', 'Cargo.lock', 'build.rs']) {
    const p = path.join(root, f)
    if (fs.existsSync(p)) newest = Math.max(newest, fs.statSync(p).mtimeMs)
  }
  return newest
}

function builtAddon() {
  const files = fs.readdirSync(root).filter((f) => /^sandspawn\..+\.node$/.test(f))
  if (files.length === 0) return null
  return Math.min(...files.map((f) => fs.statSync(path.join(root, f)).mtimeMs))
}

// Installed from a registry tarball there are no sources: the prebuilt platform package is used.
if (!fs.existsSync(path.join(root, 'src'))) process.exit(0)

const built = builtAddon()
if (!force && built !== null && built >= newestSource()) process.exit(0)

const cargo = spawnSync('cargo', ['--version'], { stdio: 'ignore' })
if (cargo.error || cargo.status !== 0) {
  console.error('sandspawn: building the native addon needs Rust (https://rustup.rs); cargo was not found on PATH.')
  process.exit(1)
}
const napi = path.join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')
const args = [napi, 'build', '--platform', '--js', 'binding.js', '--dts', 'binding.d.ts']
if (release) args.push('--release')
console.error(`sandspawn: building the native addon (${release ? 'release' : 'debug'})...`)
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' })
process.exit(r.status === null ? 1 : r.status)
