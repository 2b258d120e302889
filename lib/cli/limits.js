'use strict'
// The CLI's resource-limit flags (`--memory`, `--max-processes`, `--cpu-time`, `--max-file-size`,
// `--open-files`):
// parsing a size, building `options.limits`, and the lines that `doctor` and a limited run print.

const { UsageError } = require('./args')

/** flag → [limits key, takes a byte size with a k/m/g suffix, what the value is] */
const FLAGS = {
  memory: ['memory', true, 'bytes of memory per process'],
  'max-processes': ['processes', false, 'processes and threads in the sandbox'],
  'cpu-time': ['cpuTime', false, 'milliseconds of CPU time per process'],
  'max-file-size': ['fileSize', true, 'bytes per file written'],
  'open-files': ['openFiles', false, 'descriptors per process'],
}

const UNITS = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3 }

/** A positive integer from `text`; sizes may end in k, m or g (binary: 1k = 1024). Throws a
 * UsageError naming the flag otherwise. */
function parseValue(flag, text) {
  const [, bytes, what] = FLAGS[flag]
  const m = bytes ? /^(\d+)([kmg]?)$/i.exec(text.trim()) : /^(\d+)()$/.exec(text.trim())
  const n = m ? Number(m[1]) * UNITS[m[2].toLowerCase()] : NaN
  if (!Number.isSafeInteger(n) || n < 1) {
    const form = bytes ? 'a positive integer, optionally followed by k, m or g' : 'a positive integer'
    throw new UsageError(`--${flag} must be ${form} (${what}), got ${JSON.stringify(text)}`)
  }
  return n
}

/** `options.limits` from parsed flag values, or undefined when no limit flag was given. */
function limitsFromFlags(values) {
  const limits = {}
  for (const flag of Object.keys(FLAGS)) {
    if (values[flag] !== undefined) limits[FLAGS[flag][0]] = parseValue(flag, values[flag])
  }
  return Object.keys(limits).length ? limits : undefined
}

const FLAG_OF = { memory: '--memory', processes: '--max-processes', cpuTime: '--cpu-time', fileSize: '--max-file-size', openFiles: '--open-files' }

/** `doctor` lines: which limits this host enforces, and how, or why not. */
function doctorLines(limits) {
  if (!limits) return []
  return Object.keys(FLAG_OF).filter((name) => limits[name]).map((name, i) => {
    const { mechanism, reason } = limits[name]
    const head = i === 0 ? 'limits:' : ''
    const how = mechanism ? `${mechanism === 'rlimit' ? 'rlimit, per process' : 'cgroup v2, whole tree'}` : `not enforceable (${reason})`
    return `${head.padEnd(7)}     ${FLAG_OF[name]}: ${how}`
  })
}

/** The line printed after a run that a limit ended, or null. */
function exceededLine(result) {
  if (!result.limitExceeded) return null
  return `sandspawn: the command exceeded its ${FLAG_OF[result.limitExceeded]} limit (${result.signal || 'killed'})`
}

/** API field → flag, for messages.js. */
const MESSAGE_FIELDS = Object.entries(FLAGS).flatMap(([flag, [key]]) => [[`options.limits.${key}`, `--${flag}`], [`limits.${key}`, `--${flag}`]])

module.exports = { FLAGS, parseValue, limitsFromFlags, doctorLines, exceededLine, MESSAGE_FIELDS }
