// ESM entry: the CommonJS facade re-exported with named exports.
import sandspawn from './index.js'

export const {
  spawnSandboxed,
  startSandboxed,
  runWithEscalation,
  isLikelySandboxDenied,
  classifySandboxDenial,
  buildSandboxCommand,
  sandboxCapabilities,
  toolCacheStore,
  applyChangeSet,
  discardChangeSet,
  readChange,
  diffChange,
  listChangeSets,
  showChangeSet,
  SandboxError,
  AbortError,
  SandboxedProcess,
} = sandspawn
export default sandspawn
