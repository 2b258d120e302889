'use strict'
// A path flag whose value begins with `~`: the shell did not expand it. bash and zsh expand a tilde
// only at the start of a word (or in an assignment), so `--deny-read=~/.ssh` reaches sandspawn as
// `~/.ssh`, which, taken as a path relative to the cwd, named `<cwd>/~/.ssh`: missing, so it denied
// nothing, and the command read ~/.ssh (found by an attacker's review, mode33). Refused, naming
// what to write instead; a directory really named `~` is still `./~`.

const { UsageError } = require('./args')

/** The path flags, in the order they are checked. */
const PATH_FLAGS = ['cwd', 'writable', 'read-only', 'deny-read']

/** `~` or `~/...`, `~user` or `~user/...`: what a shell would have expanded at a word's start. */
const TILDE = /^~[^/]*(\/|$)/

/** Throws a UsageError for the first path flag in `values` whose value begins with a tilde. */
function refuseUnexpandedTilde(values) {
  for (const flag of PATH_FLAGS) {
    const given = values[flag] === undefined ? [] : [values[flag]].flat()
    const p = given.find((v) => TILDE.test(v))
    if (p === undefined) continue
    const rest = p.replace(/^~[^/]*\/?/, '')
    const home = p.startsWith('~/') || p === '~' ? `$HOME${rest ? `/${rest}` : ''}` : 'an absolute path'
    throw new UsageError(`--${flag} ${p}: the shell did not expand its ~ (no shell does after =); write --${flag} ${p} with a space, or ${home} (a directory named ~ here: ./~)`)
  }
}

module.exports = { refuseUnexpandedTilde }
