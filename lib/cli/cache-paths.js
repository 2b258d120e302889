'use strict'
// Paths a command printed that lie in one of its private tool caches. With `toolCaches: 'private'`
// what the command wrote there (npm's "A complete log of this run can be found in:
// ~/.npm/_logs/...", pip's and cargo's logs) landed in sandspawn's store, not at the path it
// printed, which on the host does not have it. One note per such file says where it really is:
// `<store>/<name>/base/<the rest of the path>` once the run's writes are folded into the cache,
// or the run's pending layer `<store>/<name>/pending/<layer>/...` while other runs still hold it
// (the store's documented layout). The fold happens after the run's result, off its path, so the
// notes wait for it first (`toolCachesSettled`): a pending layer named a moment before its fold is
// a path that no longer exists when the user looks.

const fs = require('node:fs')
const path = require('node:path')
const { printable } = require('./printable')

/** Characters that end a path a tool quoted or put at the end of a sentence. */
const PATH_END = /[\s'"`)\]}>,;]|\.(?=\s|$)|:(?=\s|$)/
/** The longest path looked for after a cache's prefix (Linux's PATH_MAX): no file has a longer one. */
const PATH_MAX = 4096
/** Paths looked up on the host at most (each a few stats and a listing of the pending layers). */
const MOST_LOOKED = 64

/** `sandspawn: note: ...` lines for `result` (a SpawnResult), at most `max`. */
async function cachePathNotes(result, max = 5) {
  const tc = result && result.toolCaches
  if (!tc || (tc.mode !== 'private' && tc.mode !== 'shared') || !tc.store || !Array.isArray(tc.caches)) return []
  const text = `${result.stdout || ''}\n${result.stderr || ''}`
  const prefixOf = (cache) => (cache.path.endsWith('/') ? cache.path : `${cache.path}/`)
  if (!tc.caches.some((cache) => text.includes(prefixOf(cache)))) return []
  await require('../../binding.js').toolCachesSettled()
  const notes = []
  const seen = new Set()
  let looked = 0
  for (const cache of tc.caches) {
    const prefix = prefixOf(cache)
    // The output is the command's: each path is read from a window of at most PATH_MAX characters,
    // and the next search starts where it ended, so the work is linear in the output. Before, each
    // place the prefix began at was looked at with all the output after it (searched to its end,
    // a normalized copy kept): the prefix printed back to back for 1 MiB ran the CLI out of memory
    // before the host-risk warnings (found by an attacker's review, cross32).
    for (let at = text.indexOf(prefix); at >= 0 && notes.length < max && looked < MOST_LOOKED; ) {
      const from = at + prefix.length
      const rest = text.slice(from, from + PATH_MAX)
      const end = rest.search(PATH_END)
      at = text.indexOf(prefix, from + (end < 0 ? rest.length : end))
      if (end < 0 && rest.length === PATH_MAX) continue // longer than any path: none
      const rel = path.normalize(end < 0 ? rest : rest.slice(0, end))
      if (!rel || rel.startsWith('..') || seen.has(prefix + rel)) continue
      seen.add(prefix + rel)
      looked += 1
      const stored = where(path.join(tc.store, cache.name), rel)
      if (!stored) continue
      // Both paths hold a name the command chose: escaped, so it cannot move the cursor or erase.
      notes.push(`sandspawn: note: ${printable(prefix + rel)} was written to sandspawn's private ${printable(cache.name)} cache; on the host it is ${printable(stored)}`)
    }
  }
  return notes
}

/** The file `rel` of a cache in the store: in the folded base, else in the newest pending layer. */
function where(cacheDir, rel) {
  const base = path.join(cacheDir, 'base', rel)
  if (fs.existsSync(base)) return base
  let layers = []
  try {
    layers = fs.readdirSync(path.join(cacheDir, 'pending')).sort().reverse()
  } catch {}
  for (const layer of layers) {
    const p = path.join(cacheDir, 'pending', layer, rel)
    if (fs.existsSync(p)) return p
  }
  return null
}

module.exports = { cachePathNotes }
