'use strict'

/**
 * The CLI's warning for one `SpawnResult.hostRisks` entry: one line, naming the path, so that a
 * user sees what the run left on the host that a tool could run later.
 */
function hostRiskLine(risk) {
  const detail = String(risk.detail).replace(/\s+/g, ' ')
  return `sandspawn: warning: ${risk.kind}: ${risk.path}: ${detail}`
}

module.exports = { hostRiskLine }
