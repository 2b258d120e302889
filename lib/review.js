'use strict'
/**
 * The reviewable workspace's change sets (`sandbox: { mode: 'workspace-write', workspace: 'review' }`):
 * apply, discard, read, list. Each call runs on a native worker thread; bad input rejects with a
 * SandboxError (ERR_SANDBOX_INVALID_OPTIONS, an unknown id included).
 */

const native = require('../binding.js')
const { fromRecord, invalid } = require('./errors')
const { ownData, onlyKnownKeys, describe } = require('./own-data')

function checkId(id) {
  if (typeof id !== 'string') throw invalid('id', `must be a change set id (a string), got ${id === null ? 'null' : typeof id}`)
}

function checkOptions(options, example) {
  if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
    throw invalid('options', `expected an object like ${example}, got ${Array.isArray(options) ? 'an array' : typeof options}`)
  }
  // A copy of the own data only (undefined values are "not given", as in every option bag of
  // sandspawn): the binding's conversion reads inherited properties too (lib/own-data.js).
  return options ? ownData(options, 'options') : null
}

function settle(tagged) {
  if (!tagged.ok) throw fromRecord(tagged.error)
  return tagged.value
}

/**
 * Apply the set (or `paths` of it); returns `{ applied, conflicts, heldBack, revision }` (the
 * revision of what is left, null when nothing is). With `revision` (a shown set's), nothing lands
 * when the set is no longer that revision: ERR_SANDBOX_CHANGE_SET_CHANGED.
 */
async function applyChangeSet(id, options) {
  checkId(id)
  return settle(await native.applyChangeSet(id, checkOptions(options, '{ paths: [...], force: true, revision: shown.revision }')))
}

/** Drop the set and everything in it. */
async function discardChangeSet(id) {
  checkId(id)
  settle(await native.discardChangeSet(id))
}

/** The new content of one path of the set (`null` when the set deletes it). */
async function readChange(id, path) {
  checkId(id)
  if (typeof path !== 'string') throw invalid('path', `must be an absolute path, got ${path === null ? 'null' : typeof path}`)
  return settle(await native.readChange(id, path)) ?? null
}

/** A unified diff of one path, from the host's current file to the set's. */
async function diffChange(id, path) {
  checkId(id)
  if (typeof path !== 'string') throw invalid('path', `must be an absolute path, got ${path === null ? 'null' : typeof path}`)
  return settle(await native.diffChange(id, path))
}

/** The pending sets (oldest first), with `cwd` only those covering it. */
async function listChangeSets(options) {
  return settle(await native.listChangeSets(checkOptions(options, "{ cwd: '/path' }")))
}

/** One set described like `SpawnResult.changeSet`, plus its `cwd` and `created` (the CLI's `review show`). */
async function showChangeSet(id, options) {
  checkId(id)
  const own = checkOptions(options, '{ maxChanges: 100 }') || Object.create(null)
  onlyKnownKeys(own, 'options', ['maxChanges'])
  const max = own.maxChanges ?? 10000
  // A number is shown as it is, anything else by its kind: `${max}` of a null-prototype object or a
  // Symbol threw a TypeError from this very refusal (found by an attacker's review, mode33).
  if (!Number.isSafeInteger(max) || max < 0 || max > 0xffffffff) throw invalid('maxChanges', `must be a non-negative integer, got ${typeof max === 'number' ? max : describe(max)}`)
  return settle(await native.showChangeSet(id, max))
}

module.exports = { applyChangeSet, discardChangeSet, readChange, diffChange, listChangeSets, showChangeSet }
