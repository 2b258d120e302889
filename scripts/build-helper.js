#!/usr/bin/env node
'use strict'
// Build `sandspawn-helper` (the program every Linux sandbox runs before the command) and put it next
// to the addon's `.node` file with mode 0755, where the addon looks for it at load time.
//   node scripts/build-helper.js [--debug] [--target TRIPLE] [--out DIR]
// `--out` defaults to the package root (beside the `.node` that `napi build --platform` writes);
// release CI passes the platform package's directory (npm/<platform>) together with `--target`.

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

const args = ['build', '-p', 'sandspawn-helper']
if (release) args.push('--release')
if (target) args.push('--target', target)
const r = spawnSync('cargo', args, { cwd: root, stdio: 'inherit' })
if (r.status !== 0) process.exit(r.status === null ? 1 : r.status)

const targetDir = process.env.CARGO_TARGET_DIR ? path.resolve(process.env.CARGO_TARGET_DIR) : path.join(root, 'target')
const built = path.join(targetDir, ...(target ? [target] : []), release ? 'release' : 'debug', 'sandspawn-helper')
const dest = path.join(out, 'sandspawn-helper')
// Copy to a temporary name and rename, so a running sandbox never sees a half-written helper.
const tmp = `${dest}.${process.pid}.tmp`
fs.copyFileSync(built, tmp)
fs.chmodSync(tmp, 0o755)
fs.renameSync(tmp, dest)
console.error(`sandspawn: helper ${path.relative(root, dest) || dest} (${release ? 'release' : 'debug'})`)
