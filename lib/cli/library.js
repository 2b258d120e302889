'use strict'
// Loading the sandspawn library (and with it the native addon) for the subcommands that need it.

const fs = require('node:fs')
const path = require('node:path')

/** The library; a load failure becomes an error the CLI can report (exit 125). */
function loadSandspawn() {
  try {
    return require('../..')
  } catch (err) {
    const root = path.resolve(__dirname, '..', '..')
    // In a git checkout the addon is built by `npm run build` (or `npm test`), not at install.
    const hint = fs.existsSync(path.join(root, 'Cargo.toml')) ? '; in a git checkout, build it first: npm run build' : ''
    const wrapped = new Error(`the native addon could not be loaded: ${err && err.message ? err.message.split('\n')[0] : err}${hint}`)
    wrapped.code = 'ERR_SANDBOX_UNAVAILABLE'
    throw wrapped
  }
}

module.exports = { loadSandspawn }
