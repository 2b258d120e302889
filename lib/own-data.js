'use strict'
/**
 * What crosses into the native core is a copy of the caller's own data, nothing inherited.
 *
 * The binding's conversion (napi-rs) lists an object's keys with napi_get_property_names, which
 * walks the prototype chain like `for...in`, and reads named fields through it: with
 * `Object.prototype.sandbox = 'danger-full-access'` polluted by some dependency, `spawnSandboxed(cmd)`
 * ran without a sandbox. So every option bag is copied here: own enumerable string keys only, each
 * read once (a getter runs once; one that throws is a SandboxError naming the option), into
 * null-prototype objects and dense plain arrays. NaN and Infinity are refused here too, by name:
 * JSON has no such numbers and the binding's conversion failed without saying which option.
 */

const { types } = require('node:util')
const { invalid } = require('./errors')

/** As deep as the binding's conversion goes (napi-rs stops at 128). */
const MAX_DEPTH = 100
/** As many values as the binding's conversion takes (napi-rs stops at 1,000,000). */
const MAX_NODES = 1_000_000

/**
 * A built-in whose data is not in own enumerable properties (a Map's entries, a Date's time): its
 * copy would be an empty bag, and `sandbox: new Map([['mode', 'read-only']])` would silently run
 * with the defaults. Cross-realm safe (util.types, not instanceof).
 */
function exoticKind(value) {
  if (types.isMap(value) || types.isWeakMap(value)) return 'a Map'
  if (types.isSet(value) || types.isWeakSet(value)) return 'a Set'
  if (types.isDate(value)) return 'a Date'
  if (types.isRegExp(value)) return 'a RegExp'
  if (types.isPromise(value)) return 'a Promise'
  if (types.isAnyArrayBuffer(value) || types.isArrayBufferView(value)) return 'binary data'
  if (types.isBoxedPrimitive(value)) return 'a boxed primitive'
  return null
}

/** Refuse an object that is not a plain bag of data (see exoticKind). */
function plainObject(value, where) {
  const kind = exoticKind(value)
  if (kind) throw invalid(where, `must be a plain object or array, got ${kind}`)
}

function reason(err) {
  return err && err.message ? err.message : String(err)
}

/** A null-prototype object of `value`'s own enumerable string-keyed properties (getters read once). */
function ownProperties(value, where) {
  plainObject(value, where)
  let keys
  try {
    keys = Object.keys(value)
  } catch (err) {
    throw invalid(where, `listing its properties threw: ${reason(err)}`)
  }
  const out = Object.create(null)
  for (const key of keys) {
    let v
    try {
      const d = Object.getOwnPropertyDescriptor(value, key)
      if (d === undefined || !d.enumerable) continue
      v = 'value' in d ? d.value : d.get === undefined ? undefined : d.get.call(value)
    } catch (err) {
      throw invalid(`${where}.${key}`, `reading it threw: ${reason(err)}`)
    }
    out[key] = v
  }
  return out
}

/** `value`'s own elements, a hole as undefined (an inherited index is never read). */
function ownElements(value, where) {
  let length
  try {
    length = Object.getOwnPropertyDescriptor(value, 'length').value
  } catch (err) {
    throw invalid(where, `reading its length threw: ${reason(err)}`)
  }
  if (!Number.isSafeInteger(length) || length < 0) throw invalid(where, `is an array of no valid length (${String(length)})`)
  if (length > MAX_NODES) throw invalid(where, `holds more than ${MAX_NODES} values`)
  const out = []
  for (let i = 0; i < length; i++) {
    let v
    try {
      const d = Object.getOwnPropertyDescriptor(value, i)
      v = d === undefined ? undefined : 'value' in d ? d.value : d.get === undefined ? undefined : d.get.call(value)
    } catch (err) {
      throw invalid(`${where}[${i}]`, `reading it threw: ${reason(err)}`)
    }
    out.push(v)
  }
  return out
}

function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value
}

/**
 * The copy of `value` the core may see, named `where` in errors ('options.sandbox'). Keys whose
 * value is undefined are left out ("not given", as at the top of every option bag). `functionsAt`:
 * the paths where a function is kept as it is (the caller takes it out before the core sees it).
 */
function ownData(value, where, functionsAt = []) {
  const state = { nodes: 0, ancestors: new Set(), functionsAt }
  return copy(value, where, 0, state)
}

function copy(value, where, depth, state) {
  if (++state.nodes > MAX_NODES) throw invalid(where, `holds more than ${MAX_NODES} values`)
  switch (typeof value) {
    case 'string':
      // The binding's conversion to UTF-8 turns a lone surrogate into U+FFFD: the command would
      // get another argument (another file name) than the one asked for.
      if (!value.isWellFormed()) throw invalid(where, 'holds a lone surrogate (not valid UTF-16), which has no exact UTF-8 form')
      return value
    case 'boolean':
      return value
    case 'bigint':
      // The binding's conversion gave a BigInt as a decimal string: refused later as "got string".
      throw invalid(where, `must be a number, got a bigint (${value}n)`)
    case 'number':
      if (!Number.isFinite(value)) throw invalid(where, `must be a finite number, got ${value}`)
      return value
    case 'undefined':
      throw invalid(where, 'must not be undefined')
    case 'function':
      if (state.functionsAt.includes(where)) return value
      throw invalid(where, 'must be data (a string, number, boolean, array or plain object), got a function')
    case 'symbol':
      throw invalid(where, 'must be data (a string, number, boolean, array or plain object), got a symbol')
  }
  if (value === null) return null
  if (depth >= MAX_DEPTH) throw invalid(where, `is nested more than ${MAX_DEPTH} levels deep`)
  if (state.ancestors.has(value)) throw invalid(where, 'refers to an object that holds it (a cycle)')
  state.ancestors.add(value)
  try {
    if (Array.isArray(value)) return ownElements(value, where).map((v, i) => copy(v, `${where}[${i}]`, depth + 1, state))
    const own = ownProperties(value, where)
    const out = Object.create(null)
    for (const key of Object.keys(own)) if (own[key] !== undefined) out[key] = copy(own[key], `${where}.${key}`, depth + 1, state)
    return out
  } finally {
    state.ancestors.delete(value)
  }
}

/**
 * Refuse a key of `own` (from ownProperties) that `known` does not list: sandspawn does not ignore
 * options it does not know, here as in the options the core parses (a misspelt `waitMS` would
 * otherwise wait 0 ms unsaid).
 */
function onlyKnownKeys(own, where, known) {
  const unknown = Object.keys(own).find((key) => !known.includes(key))
  if (unknown !== undefined) throw invalid(`${where}.${unknown}`, `unknown option (accepted: ${known.join(', ')})`)
}

module.exports = { ownData, ownProperties, onlyKnownKeys, describe }
