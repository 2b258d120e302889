#!/usr/bin/env node
'use strict'
// Build the native addon, its in-sandbox helper and the bundled bwrap when any is missing or
// older than the sources. Used by `npm install` in a checkout (the `prepare` script, so a fresh
// clone works with `npm install` alone) and by `npm test`. The published package.json has no
// `prepare` (scripts/publish-manifest.js strips it while packing): consumers get prebuilt files and
// are never asked to approve an install script.

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
  visit(path.join(root, 'helper', 'src'))
  // The bundled bwrap's digest is baked into the addon (build.rs), so a rebuilt bwrap rebuilds it.
  for (const f of ['Cargo.toml', 'Cargo.lock', 'build.rs', 'helper/Cargo.toml', 'sandspawn-bwrap.sha256', 'sandspawn-helper.sha256']) {
    const p = path.join(root, f)
    if (fs.existsSync(p)) newest = Math.max(newest, fs.statSync(p).mtimeMs)
  }
  return newest
}

function builtAddon() {
  const files = fs.readdirSync(root).filter((f) => /^sandspawn\..+\.node$/.test(f))
  const helper = path.join(root, 'sandspawn-helper')
  if (files.length === 0 || !fs.existsSync(helper)) return null
  return Math.min(fs.statSync(helper).mtimeMs, ...files.map((f) => fs.statSync(path.join(root, f)).mtimeMs))
}

// Installed from a registry tarball there are no sources: the prebuilt platform package is used.
if (!fs.existsSync(path.join(root, 'src'))) process.exit(0)

// The bundled bwrap first (Linux only; a no-op when up to date): the addon embeds its digest.
const bwrap = spawnSync(process.execPath, [path.join(__dirname, 'build-bwrap.js'), ...(force ? ['--force'] : [])], {
  cwd: root,
  stdio: 'inherit',
})
if (bwrap.status !== 0) process.exit(bwrap.status === null ? 1 : bwrap.status)

const built = builtAddon()
if (!force && built !== null && built >= newestSource()) process.exit(0)

const cargo = spawnSync('cargo', ['--version'], { stdio: 'ignore' })
if (cargo.error || cargo.status !== 0) {
  console.error('sandspawn: building the native addon needs Rust (https://rustup.rs); cargo was not found on PATH.')
  process.exit(1)
}
// The helper first: the addon bakes in its digest (build.rs).
const h = spawnSync(process.execPath, [path.join(__dirname, 'build-helper.js'), ...(release ? [] : ['--debug'])], { cwd: root, stdio: 'inherit' })
if (h.status !== 0) process.exit(h.status === null ? 1 : h.status)
const napi = path.join(root, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')
const args = [napi, 'build', '--platform', '--js', 'binding.js', '--dts', 'binding.d.ts']
if (release) args.push('--release')
console.error(`sandspawn: building the native addon (${release ? 'release' : 'debug'})...`)
const r = spawnSync(process.execPath, args, { cwd: root, stdio: 'inherit' })
process.exit(r.status === null ? 1 : r.status)
