'use strict'
// Text from a run (paths it created, words it printed) shown in the CLI's own lines: every
// control character, and every character that reorders or hides text on a terminal, is written as
// an escape, so a file name with CR, ANSI sequences or a right-to-left override can neither erase
// nor forge a warning.

// C0 controls, DEL, C1 controls; bidi embeddings, overrides and isolates; zero-width and other
// invisible formatting characters; the line and paragraph separators.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\\]/g

const NAMED = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\', '\u001b': '\\e' }

/** `text` with every unsafe character escaped (`\n`, `\r`, `\t`, `\e`, `\\`, `\xHH`, `\uHHHH`). */
function printable(text) {
  return String(text).replace(UNSAFE, (c) => {
    if (NAMED[c]) return NAMED[c]
    const code = c.charCodeAt(0)
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`
  })
}

module.exports = { printable }
