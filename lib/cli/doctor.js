'use strict'
// `sandspawn doctor [--json]`: can this host sandbox, and if not, why and how to fix it.
// Exits 1 when no sandbox is available.

const { printable } = require('./printable')
const { loadSandspawn } = require('./library')
const out = require('./output')

async function doctor(values) {
  const sandspawn = loadSandspawn()
  const caps = await sandspawn.sandboxCapabilities()
  const store = await sandspawn.toolCacheStore().catch((err) => ({ error: err.message }))
  if (values.json) {
    out.printJson({ ...caps, toolCacheStore: store })
    return out.exit(caps.available ? 0 : 1)
  }
  const source = caps.sandboxDetails && caps.sandboxDetails.bwrapSource
  // In the Landlock mode no bwrap is reported (the ladder's lines say why): not "not found".
  const noBwrap = caps.sandboxType === 'landlock' ? 'not used (see the ladder)' : 'not found'
  const lines = [
    `platform:   ${caps.platform}`,
    `sandbox:    ${caps.sandboxType}`,
    `bwrap:      ${caps.bwrap ? `${caps.bwrap.path} (${caps.bwrap.version || 'unknown version'})${source ? `, ${source}` : ''}` : noBwrap}`,
    `available:  ${caps.available ? 'yes' : 'no'}`,
  ]
  if (!caps.available) {
    lines.push(`cause:      ${caps.cause || 'unknown'}`)
    lines.push(`reason:     ${caps.reason}`)
    lines.push(`fix:        ${caps.fix}`)
  }
  // The Linux fallback ladder: each rung tried, in order (the last one runs when available).
  ;(caps.attempts || []).forEach((a, i) => {
    lines.push(`${i === 0 ? 'ladder:' : ''.padEnd(7)}     ${a.mechanism}: ${a.cause === 'ok' ? 'used' : a.cause} (${a.message})`)
  })
  // What the mechanism that runs does not enforce (the Landlock mode: why it was chosen, too).
  const gaps = (caps.sandboxDetails && caps.sandboxDetails.notEnforced) || []
  gaps.forEach((g, i) => lines.push(`${i === 0 ? 'not enforced:' : ''.padEnd(13)} ${g}`))
  lines.push(...require('./limits').doctorLines(caps.limits))
  lines.push(`tool caches: ${storeLine(store)}`)
  if (!caps.available && (caps.fixes || []).length > 1) {
    caps.fixes.forEach((f, i) => lines.push(`${i === 0 ? 'fixes:' : ''.padEnd(6)}      ${i + 1}. ${f}`))
  }
  // The probe's words (bwrap's stderr, paths under the cwd doctor runs in) escaped, line by line.
  out.writeStdout(lines.map(printable).join('\n') + '\n')
  out.exit(caps.available ? 0 : 1)
}

/** Where the private tool caches are kept and how much they take. */
function storeLine(store) {
  if (store.error) return `cannot be measured: ${store.error}`
  if (!store.path) return 'no store (neither SANDSPAWN_TOOL_CACHE_DIR nor HOME is an absolute path)'
  if (store.bytes === 0) return `${store.path} (empty)`
  const mib = (store.bytes / (1024 * 1024)).toFixed(1)
  return `${store.path}, ${mib} MiB for ${store.workspaces} workspace${store.workspaces === 1 ? '' : 's'} (unused ones go after 30 days)`
}

module.exports = { doctor }
