'use strict'
// What the sandboxed attempt changed, said before "Run again without the sandbox?": the retry
// runs as the user whatever the attempt left in the workspace, its own script included (a command
// can rewrite build.sh, print a plausible "Permission denied" and wait to be run again).

const path = require('node:path')
const { printable } = require('./printable')

/** How many changed paths the line names (the count covers all). */
const NAMED = 10

/**
 * The lines for `changes` (runWithEscalation's request.changes), paths relative to `cwd`; none
 * when nothing changed. A changed file the command line names gets a warning of its own: the CLI
 * still asks (the change may be the command's job, a code generator's), but it must not be missed.
 */
function changesLines(changes, cwd) {
  if (!changes || changes.paths.length === 0) return []
  const rel = (p) => printable(p === cwd || p.startsWith(cwd + path.sep) ? path.relative(cwd, p) || '.' : p)
  const n = changes.paths.length
  const count = `${n}${changes.truncated ? ' or more' : ''} file${n === 1 && !changes.truncated ? '' : 's'}`
  const more = n > NAMED || changes.truncated ? ', ...' : ''
  const lines = [`sandspawn: the sandboxed attempt changed ${count}: ${changes.paths.slice(0, NAMED).map(rel).join(', ')}${more}; running again without the sandbox runs them as you`]
  for (const f of changes.commandFiles) {
    lines.push(`sandspawn: warning: the sandboxed attempt changed ${rel(f)}, which this command runs: without the sandbox it runs the changed ${rel(f)}, not the one you started`)
  }
  return lines
}

module.exports = { changesLines }
