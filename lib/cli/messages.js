'use strict'
// Errors in the words of the command line. The library's messages name API fields
// (`options.sandbox.writableRoots[0]`) and carry Rust's OS error text (`(os error 2)`); a CLI
// user typed `--writable out`, so that is what the message must name.

/**
 * API field → the flag that set it; `[i]` entries name the value the user typed (the values of
 * that flag, or a function of all flag values). More specific fields first.
 */
const FIELDS = [
  ['options.sandbox.writableRoots', '--writable', 'writable'],
  ['options.sandbox.readOnlyPaths', '--read-only', 'read-only'],
  ['options.sandbox.denyRead', '--deny-read', 'deny-read'],
  ['options.sandbox.allowUnixSockets', '--allow-unix-sockets'],
  ['options.sandbox.network.allowedDomains', '--allow-domain', 'allow-domain'],
  ['options.sandbox.network.deniedDomains', '--deny-domain', 'deny-domain'],
  ['options.sandbox.network.allowPrivateAddresses', '--allow-private', 'allow-private'],
  ['options.sandbox.network', '--network'],
  ['options.sandbox.protectedNames', '--protected-name', (values) => require('./options').protectedNames(values)],
  ['options.sandbox.protectGit', '--protect-git'],
  ['options.sandbox.toolCaches', '--tool-caches'],
  ['options.sandbox.mode', '--mode'],
  ['options.sandbox.tmp', '--tmp'],
  ['options.sandbox', '--mode'],
  ['options.linux', '--allow-landlock'],
  ['options.cwd', '--cwd'],
  ['options.timeout', '--timeout'],
  ...require('./limits').MESSAGE_FIELDS,
  ['options.platform', '--platform'],
  // `sandspawn review ACTION ID`: the id the user typed.
  ['options.changeSet', 'review'],
  // `review apply|diff ID PATH...` and `--revision`: the paths the user named (the message says
  // which), not applyChangeSet's fields (found by an attacker's review, mode34).
  ['options.paths', 'PATH'],
  ['options.path', 'PATH'],
  ['options.revision', '--revision'],
  ['options.env', 'the environment'],
  ['command', 'COMMAND'],
]

const MODES = /\bmode '(read-only|workspace-write|danger-full-access)'/g

/**
 * The API's words inside a message (not at its start, where FIELDS renames them) → the flag that
 * set them: the Landlock mode's refusals list each rule it cannot keep, a plan's refusal names the
 * functions that could run it, and a terminal's pty is asked for by the CLI itself (found by an
 * attacker's review, mode32: on a host where only the Landlock mode may run, every run on a
 * terminal was told to go "without pty", with no word of --no-pty).
 */
const PHRASES = [
  [/\bsandbox\.workspace 'review'/g, '--review'],
  [/\bsandbox\.tmp: 'private'/g, '--tmp private'],
  [/\bsandbox\.toolCaches: 'private'/g, '--tool-caches private'],
  [/\bsandbox\.denyRead entry /g, '--deny-read '],
  [/\bsandbox\.network as a NetworkPolicy/g, '--allow-domain or --deny-domain (the allow-list)'],
  [/\bsandbox\.allowUnixSockets as a list of paths/g, '--allow-unix-sockets with socket paths'],
  [/\bpty is not supported in the Landlock mode yet: run where bwrap works, or without pty/, 'a terminal (pty) is not supported in the Landlock mode yet: run where bwrap works, or give --no-pty'],
  [/`\.git` is governed by sandbox\.protectGit/g, '`.git` is governed by --protect-git and --no-protect-git'],
  // A stale `review apply --revision` (mode34: it sent the user to the API's showChangeSet).
  [/\(showChangeSet, sandspawn review show\)/, '(sandspawn review show)'],
  [/^--revision: must be the revision showChangeSet \(or a run's changeSet\) gave/, '--revision: must be the revision sandspawn review show (or a --review run) printed'],
  // `sandspawn explain`'s refusals of what a plan for another spawner cannot keep (found by an
  // attacker's review, mode33: they named the API's functions and fields, --allow-domain's as
  // "--network as a NetworkPolicy ... build the plan with network: true or false").
  [
    /^--network as a NetworkPolicy \(allow-list\) needs the proxy that spawnSandboxed\/startSandboxed run in their own process; a launch plan for another spawner cannot include it\. Run the command with spawnSandboxed or startSandboxed, or build the plan with network: true or false/,
    "--allow-domain and --deny-domain (the allow-list) need the proxy that sandspawn's own run keeps in its process; the plan `sandspawn explain` prints is for another spawner, and cannot include it. Run the command with `sandspawn` instead, or explain it with --network or with the network off",
  ],
  [/ needs spawnSandboxed or startSandboxed, which keep the run's change set; a launch plan for another spawner cannot/, " needs sandspawn's own run, which keeps the run's change set; the plan `sandspawn explain` prints is for another spawner, and cannot: run the command with `sandspawn` instead"],
  [
    / need spawnSandboxed or startSandboxed, which keep what each run wrote once its sandbox is gone; a launch plan for another spawner cannot\. Leave toolCaches out \(the caches stay read-only\) or run the command with spawnSandboxed/,
    " need sandspawn's own run, which keeps what each run wrote once its sandbox is gone; the plan `sandspawn explain` prints is for another spawner, and cannot. Leave --tool-caches out (the caches stay read-only) or run the command with `sandspawn` instead",
  ],
  [
    /SANDSPAWN_LINUX_ALLOW \(in this process's environment\) rules bwrap out, and a launch plan is a bwrap plan: the Landlock mode needs the supervisor that spawnSandboxed and startSandboxed run in this process\. Run the command with spawnSandboxed, or allow 'bwrap'/,
    "SANDSPAWN_LINUX_ALLOW rules bwrap out, and `sandspawn explain` prints bwrap plans only: the Landlock mode's run needs sandspawn's own supervisor. Run the command with `sandspawn` instead, or add bwrap to SANDSPAWN_LINUX_ALLOW",
  ],
]

/** The message of `err` (a SandboxError or anything thrown) for a CLI user. */
function cliMessage(err, values = {}) {
  let message = err && typeof err.message === 'string' ? err.message : String(err)
  message = renameField(message, values)
  message = message.replace(MODES, '--mode $1')
  for (const [api, flag] of PHRASES) message = message.replace(api, flag)
  // `spawn ls ENOENT: command not found` is Node's wording for an API; a shell says `ls: ...`.
  message = message.replace(/^spawn (.+?) (ENOENT|EACCES): /, '$1: ')
  return osErrorText(message)
}

function renameField(message, values) {
  // Some checks name the field without `options.` (`sandbox.tmp: ...`).
  const full = message.startsWith('sandbox.') ? `options.${message}` : message
  for (const [field, flag, key] of FIELDS) {
    if (!full.startsWith(field)) continue
    const rest = full.slice(field.length)
    const indexed = /^\[(\d+)\]/.exec(rest)
    if (indexed) {
      const typed = typeof key === 'function' ? key(values) : key && values[key]
      const value = typed ? typed[Number(indexed[1])] : undefined
      return `${flag}${value === undefined ? '' : ` ${value}`}${rest.slice(indexed[0].length)}`
    }
    if (/^[:\s']/.test(rest)) return flag + rest
  }
  return message
}

/** `No such file or directory (os error 2)` → `no such file or directory`, said once. */
function osErrorText(message) {
  let out = message.replace(/([A-Z][A-Za-z ]*?) \(os error \d+\)/g, (_, words) => words.toLowerCase())
  out = out.replace(/ (?:cannot be used|does not exist): no such file or directory/g, ' does not exist')
  out = out.replace(/^(--writable [^:]*): writable root /, '$1: ')
  return out.replace(/ \(os error \d+\)/g, '')
}

/** The CLI's exit status for an error that kept the command from running. */
function exitCodeForError(err) {
  if (err && err.usage) return 2
  switch (err && err.code) {
    case 'ENOENT':
      return 127
    case 'EACCES':
      return 126
    case 'ERR_SANDBOX_INVALID_OPTIONS':
      return 2
    // `review apply --revision` of a set a run continued since: nothing landed, the set is pending.
    case 'ERR_SANDBOX_CHANGE_SET_CHANGED':
      return 1
    default:
      return 125
  }
}

module.exports = { cliMessage, exitCodeForError }
