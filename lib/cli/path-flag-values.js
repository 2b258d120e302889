'use strict'
// Path flags' values the shell left wrong, refused before anything resolves them.
//
// An empty one: a variable the shell left empty (`--cwd "$PROJECT"` with PROJECT unset) was taken
// for `.`, and `--mode workspace-write --cwd ''` ran the command in the shell's own directory,
// writable (an agent's home); the API refuses an empty path (found by an attacker's review, mode33).
//
// One that begins with `~`: the shell did not expand it. bash and zsh expand a tilde
// only at the start of a word (or in an assignment), so `--deny-read=~/.ssh` reaches sandspawn as
// `~/.ssh`, which, taken as a path relative to the cwd, named `<cwd>/~/.ssh`: missing, so it denied
// nothing, and the command read ~/.ssh (found by an attacker's review, mode33). Refused, naming
// what to write instead; a directory really named `~` is still `./~`.

const { UsageError } = require('./args')

/** The path flags, in the order they are checked. */
const PATH_FLAGS = ['cwd', 'writable', 'read-only', 'deny-read']

/** `~` or `~/...`, `~user` or `~user/...`: what a shell would have expanded at a word's start. */
const TILDE = /^~[^/]*(\/|$)/

/** Throws a UsageError for the first path flag in `values` whose value is empty or begins with a tilde. */
function refuseShellLeftovers(values) {
  for (const flag of PATH_FLAGS) {
    const given = values[flag] === undefined ? [] : [values[flag]].flat()
    if (given.includes('')) throw new UsageError(`--${flag}: an empty path (a variable the shell left empty?); name the path, or . for the current directory`)
    const p = given.find((v) => TILDE.test(v))
    if (p === undefined) continue
    const rest = p.replace(/^~[^/]*\/?/, '')
    const home = p.startsWith('~/') || p === '~' ? `$HOME${rest ? `/${rest}` : ''}` : 'an absolute path'
    throw new UsageError(`--${flag} ${p}: the shell did not expand its ~ (no shell does after =); write --${flag} ${p} with a space, or ${home} (a directory named ~ here: ./~)`)
  }
}

module.exports = { refuseShellLeftovers }
