'use strict'
// The CLI's one line for a run that was sandboxed less than bwrap (or Seatbelt) sandboxes: the
// Landlock mode, or guarantees the result lists in `sandboxDetails.notEnforced`. Found by an
// attacker's review: with SANDSPAWN_LINUX_ALLOW=landlock every run used the Landlock mode and the
// CLI's output said nothing; only --json showed it.

const { printable } = require('./printable')

/** The notice for `result`, or null when the sandbox gave every guarantee. */
function weakerLine(result) {
  const gaps = (result.sandboxDetails && result.sandboxDetails.notEnforced) || []
  const landlock = result.sandboxType === 'landlock'
  if (!landlock && gaps.length === 0) return null
  // Entries name paths a workspace chose: escaped, and kept on one line.
  const list = gaps.map((g) => printable(String(g).replace(/[ \t\n]+/g, ' '))).join('; ')
  const head = landlock ? 'ran in the weaker Landlock mode, not bwrap' : `the ${printable(result.sandboxType)} sandbox did not enforce everything`
  return `sandspawn: notice: ${head}${list ? `; not enforced: ${list}` : ''}`
}

module.exports = { weakerLine }
