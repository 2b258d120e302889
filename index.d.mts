// Types for the ES module entry (index.mjs). The declarations are in index.d.ts (the CommonJS
// entry's types); this file exists so that TypeScript sees an ES module with a default export
// where Node loads one, instead of CommonJS types "masquerading" as the ESM entry.
import * as sandspawn from './index.js'

export * from './index.js'
export default sandspawn
