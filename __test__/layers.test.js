'use strict'
// scripts/check-layers.js (run by npm test on this repository) finds what it must on crates made
// here: a circle through re-exports and child modules, a ground floor that imports the crate, and
// nothing where test code or a comment names another module.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const SCRIPT = path.join(__dirname, '..', 'scripts', 'check-layers.js')

function crate(t, files) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sandspawn-layers-'))
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }))
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, 'src', name)), { recursive: true })
    fs.writeFileSync(path.join(dir, 'src', name), text)
  }
  const r = spawnSync(process.execPath, [SCRIPT, dir], { encoding: 'utf8' })
  return { status: r.status, out: r.stdout + r.stderr }
}

/** A crate whose caches::store calls super::settle() in `store` (its source) and caches::f calls
 * store::g(): a circle of two modules, unless a literal hides the call. */
function cachesCrate(store) {
  return {
    'lib.rs': 'pub mod error;\npub mod caches;\n',
    'error.rs': 'pub struct Error;\n',
    'caches/mod.rs': 'pub mod store;\npub fn settle() {}\npub fn f() { store::g() }\n',
    'caches/store.rs': store,
  }
}

test('a clean crate passes; what only tests and comments name does not count', (t) => {
  const r = crate(t, {
    'lib.rs': 'pub mod error;\npub mod a;\npub mod b;\npub use error::Error;\n',
    'error.rs': '// crate::a is mentioned in a comment only\npub struct Error;\n#[cfg(test)]\nmod tests { use crate::a::f; }\n',
    'a.rs': 'use crate::Error;\npub fn f() -> Option<Error> { crate::b::g() }\n',
    'b.rs': 'pub fn g() -> Option<crate::error::Error> { None }\n#[cfg(test)]\nmod tests { use crate::a::f; }\n',
  })
  assert.equal(r.status, 0, r.out)
  assert.match(r.out, /no import circles/)
})

test('a circle through a re-export and a child module is found and named file by file', (t) => {
  const r = crate(t, {
    'lib.rs': 'pub mod error;\npub mod net;\npub mod run;\n',
    'error.rs': 'pub struct Error;\n',
    'net/mod.rs': 'mod proxy;\npub use proxy::Proxy;\npub struct Policy;\n',
    'net/proxy.rs': 'use super::Policy;\npub struct Proxy(Policy);\n',
    'run.rs': 'pub fn go(_: crate::net::Proxy) {}\n',
  })
  assert.equal(r.status, 1, r.out)
  assert.match(r.out, /import circle of 2 modules: src\/net\/mod\.rs -> src\/net\/proxy\.rs -> src\/net\/mod\.rs/)
})

test('the ground floor importing the crate is refused', (t) => {
  const r = crate(t, {
    'lib.rs': 'pub mod error;\npub mod capabilities;\n',
    'error.rs': 'pub struct Error { pub attempts: Vec<crate::capabilities::Attempt> }\n',
    'capabilities.rs': 'pub struct Attempt;\n',
  })
  assert.equal(r.status, 1, r.out)
  assert.match(r.out, /src\/error\.rs is the ground floor but imports crate::capabilities/)
})

// Found merging this session's fixes: stripped kind by kind, the `r"` ending `"... looked for",`
// was taken for a raw string's start, and what followed for string: a circle through a later
// `super::` call went unseen (tool_caches::store -> tool_caches::settle), and a test string with
// `\"` kept a test module in (a circle that was not there).
test('literals are read left to right: a word ending in r before a quote, and // in a string, hide no code', (t) => {
  const r = crate(t, cachesCrate('pub fn g() { let _ = ("not looked for", "https://x.invalid/"); super::settle() }\n#[cfg(test)]\nmod tests { const T: &str = "a \\" b"; }\n'))
  assert.equal(r.status, 1, r.out)
  assert.match(r.out, /import circle of 2 modules: src\/caches\/mod\.rs -> src\/caches\/store\.rs -> src\/caches\/mod\.rs/)
})

// Found when deep_paths wrote the root as c"/" (dcb5ecb): a C string literal's quote was not taken
// for a string's start, so its closing quote opened one that ran to the next literal and hid the
// code between (or, the other way round, showed a string's words as code).
test('C string literals (c"..." and cr"...") are literals too: they hide no code', (t) => {
  const r = crate(t, cachesCrate('pub fn g() { let _ = c"/"; super::settle(); let _ = "x"; }\n'))
  assert.equal(r.status, 1, r.out)
  assert.match(r.out, /import circle of 2 modules: src\/caches\/mod\.rs -> src\/caches\/store\.rs -> src\/caches\/mod\.rs/)
  const raw = crate(t, cachesCrate('pub fn g() { let _ = cr"a"; super::settle(); let _ = "x"; }\n'))
  assert.equal(raw.status, 1, raw.out)
})
