'use strict'
// Parsing the command line: which subcommand, which flags, and where the command starts.
// `util.parseArgs` does the flag parsing; this module only finds the split point, because
// parseArgs cannot stop at the first positional word by itself.

const { parseArgs } = require('node:util')

const FLAGS = {
  mode: { type: 'string' },
  writable: { type: 'string', multiple: true },
  'read-only': { type: 'string', multiple: true },
  'deny-read': { type: 'string', multiple: true },
  network: { type: 'boolean' },
  'allow-domain': { type: 'string', multiple: true },
  'deny-domain': { type: 'string', multiple: true },
  'allow-private': { type: 'string', multiple: true },
  'allow-unix-sockets': { type: 'boolean' },
  'allow-landlock': { type: 'boolean' },
  // Planted configuration and tool caches (workspace-write; see policy-flags.js).
  'protect-git': { type: 'boolean' },
  'no-protect-git': { type: 'boolean' },
  'protected-name': { type: 'string', multiple: true },
  'no-protected-names': { type: 'boolean' },
  'tool-caches': { type: 'string' },
  // The reviewable workspace (see review.js).
  review: { type: 'boolean' },
  force: { type: 'boolean' },
  revision: { type: 'string' },
  tmp: { type: 'string' },
  cwd: { type: 'string' },
  timeout: { type: 'string' },
  // Resource limits (see limits.js).
  memory: { type: 'string' },
  'max-processes': { type: 'string' },
  'cpu-time': { type: 'string' },
  'max-file-size': { type: 'string' },
  'open-files': { type: 'string' },
  json: { type: 'boolean' },
  ask: { type: 'boolean' },
  'no-pty': { type: 'boolean' },
  platform: { type: 'string' },
  version: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
}

/** The flags each subcommand accepts (a run takes everything but --platform; explain all but --ask). */
const ALLOWED = {
  run: Object.keys(FLAGS).filter((f) => f !== 'platform' && f !== 'force' && f !== 'revision'),
  explain: Object.keys(FLAGS).filter((f) => f !== 'ask' && f !== 'no-pty' && f !== 'force' && f !== 'revision'),
  review: ['json', 'force', 'revision', 'help', 'version'],
  doctor: ['json', 'help', 'version'],
  help: ['json', 'help', 'version'],
}

const SUBCOMMANDS = new Set(['doctor', 'explain', 'help', 'review'])

/** A mistake in how sandspawn was called (exit 2, one line of usage). */
class UsageError extends Error {
  constructor(message, subcommand = 'run', json = false) {
    super(message)
    this.code = 'ERR_SANDBOX_INVALID_OPTIONS'
    this.usage = true
    this.subcommand = subcommand
    /** `--json` was among sandspawn's own flags: report this error as JSON too. */
    this.json = json
  }
}

/**
 * `argv` (without node and the script) → `{ subcommand, values, command, topic }`.
 * The command starts after `--` or at the first word that is not a flag or a flag's value; a
 * subcommand name is recognized only as that first word (so `sandspawn -- doctor` runs `doctor`).
 * Throws UsageError.
 */
function parseCommandLine(argv) {
  // A lenient pass only to find the boundaries: unknown flags are reported by the strict pass.
  const { tokens } = parseArgs({ args: argv, options: FLAGS, strict: false, allowPositionals: true, tokens: true })
  let subcommand = 'run'
  let subIndex = -1
  let end = argv.length
  let command = []
  let topic
  for (const t of tokens) {
    if (t.kind === 'option-terminator') {
      end = t.index
      command = argv.slice(t.index + 1)
      break
    }
    if (t.kind !== 'positional') continue
    if (subIndex < 0 && subcommand === 'run' && SUBCOMMANDS.has(t.value)) {
      subcommand = t.value
      subIndex = t.index
      continue
    }
    if (subcommand === 'help' && topic === undefined) {
      topic = t.value
      end = t.index
      break
    }
    end = t.index
    command = argv.slice(t.index)
    break
  }
  if (subcommand === 'review') return parseReview(argv.filter((_, i) => i !== subIndex))
  const head = argv.slice(0, end).filter((_, i) => i !== subIndex)
  const json = head.includes('--json')
  const values = strictFlags(head, subcommand, false)
  if ((subcommand === 'doctor' || subcommand === 'help') && command.length > 0) {
    throw new UsageError(`\`sandspawn ${subcommand}\` takes no command (to run a program named ${subcommand}: sandspawn -- ${subcommand})`, subcommand, json)
  }
  return { subcommand, values, command, topic }
}

/**
 * `sandspawn review ACTION [ID] [PATH...]` runs no command, so its flags may stand anywhere, as its
 * help writes them (`review apply ID --force`); after `--` every word is a path.
 */
function parseReview(args) {
  const { values, positionals } = strictFlags(args, 'review', true)
  return { subcommand: 'review', values, command: positionals }
}

/** `args` parsed strictly, with only the flags `subcommand` accepts. Throws UsageError. */
function strictFlags(args, subcommand, allowPositionals) {
  const json = args.includes('--json')
  let parsed
  try {
    parsed = parseArgs({ args, options: FLAGS, strict: true, allowPositionals })
  } catch (err) {
    throw new UsageError(describeParseError(err), subcommand, json)
  }
  for (const flag of Object.keys(parsed.values)) {
    if (!ALLOWED[subcommand].includes(flag)) {
      const where = subcommand === 'run' ? 'only with `sandspawn explain`' : `not with \`sandspawn ${subcommand}\``
      throw new UsageError(`--${flag} is allowed ${where}`, subcommand, json)
    }
  }
  return allowPositionals ? parsed : parsed.values
}

/** parseArgs' errors, in one short line that names the flag. */
function describeParseError(err) {
  const name = /'(-{1,2}[^' ]+)/.exec(err.message)
  const flag = name ? name[1] : 'an option'
  switch (err.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `unknown option ${flag}`
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/does not take an argument/.test(err.message)) return `${flag} takes no value`
      if (/ambiguous/.test(err.message)) return `${flag} needs a value (write ${flag}=VALUE for a value that starts with -)`
      return `${flag} needs a value`
    default:
      return err.message.split('\n')[0]
  }
}

module.exports = { parseCommandLine, UsageError, FLAGS }
