#!/usr/bin/env node
'use strict'
// The package.json that ships has no `prepare` script: in a checkout `prepare` builds the addon on
// `npm install` (so a fresh clone works with `npm install` alone), but consumers install prebuilt
// files, and npm would ask each of them to approve the script. `npm pack`/`npm publish` run
//   prepack:  node scripts/publish-manifest.js strip     (saves package.json, removes the script)
//   postpack: node scripts/publish-manifest.js restore   (puts the saved package.json back)
// `restore` is also safe to run by hand after an interrupted pack.

const fs = require('node:fs')
const path = require('node:path')

const root = path.resolve(__dirname, '..')
const manifest = path.join(root, 'package.json')
const saved = path.join(root, '.package.json.prepack')
const mode = process.argv[2]

if (mode === 'strip') {
  // A leftover copy from an interrupted pack is the real manifest: never overwrite it.
  if (!fs.existsSync(saved)) fs.copyFileSync(manifest, saved)
  const pkg = JSON.parse(fs.readFileSync(saved, 'utf8'))
  delete pkg.scripts.prepare
  fs.writeFileSync(manifest, JSON.stringify(pkg, null, 2) + '\n')
} else if (mode === 'restore') {
  if (fs.existsSync(saved)) fs.renameSync(saved, manifest)
} else {
  console.error('usage: publish-manifest.js strip|restore')
  process.exit(2)
}
