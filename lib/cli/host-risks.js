'use strict'

const { printable } = require('./printable')

/**
 * The CLI's warning for one `SpawnResult.hostRisks` entry: one line, naming the path, so that a
 * user sees what the run left on the host that a tool could run later.
 */
function hostRiskLine(risk) {
  const detail = String(risk.detail).replace(/[ \t\n]+/g, ' ')
  return `sandspawn: warning: ${printable(risk.kind)}: ${printable(risk.path)}: ${printable(detail)}`
}

module.exports = { hostRiskLine }
