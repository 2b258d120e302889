'use strict'
// Text from a run (paths it created, words it printed) shown in the CLI's own lines: every
// control character, and every character that reorders or hides text on a terminal, is written as
// an escape, so a file name with CR, ANSI sequences or a right-to-left override can neither erase
// nor forge a warning.

// By Unicode property rather than a hand list, which an attacker's review found missing the
// Arabic letter mark, blank fillers (U+3164 draws as nothing), the soft hyphen and, for want of
// the `u` flag, every astral character (tag characters): Cc controls (C0, DEL, C1); Cf format
// characters (bidi marks, embeddings, overrides and isolates, zero-width ones, tags); the
// default-ignorable code points (drawn as nothing: fillers, variation selectors, U+034F); the line
// and paragraph separators; unassigned code points (no terminal knows how wide to draw them) and
// lone surrogates (not text at all); and the backslash, so an escape cannot be forged.
const ACTED_ON = '\\p{Cc}\\p{Cf}\\p{Default_Ignorable_Code_Point}\\p{Zl}\\p{Zp}\\p{Cn}\\p{Cs}'
const UNSAFE = new RegExp(`[${ACTED_ON}\\\\]`, 'gu')
// In JSON text: the same characters but the backslash, which JSON.stringify escapes itself.
const UNSAFE_IN_JSON = new RegExp(`[${ACTED_ON}]`, 'gu')

const NAMED = { '\n': '\\n', '\r': '\\r', '\t': '\\t', '\\': '\\\\', '\u001b': '\\e' }

/**
 * `text` with every unsafe character escaped (`\n`, `\r`, `\t`, `\e`, `\\`, `\xHH`, `\uHHHH`, and
 * `\UHHHHHHHH` past U+FFFF: the forms bash's `$'...'` reads, which `explain` quotes with).
 */
function printable(text) {
  return String(text).replace(UNSAFE, (c) => {
    if (NAMED[c]) return NAMED[c]
    const code = c.codePointAt(0)
    if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`
    if (code <= 0xffff) return `\\u${code.toString(16).padStart(4, '0')}`
    return `\\U${code.toString(16).padStart(8, '0')}`
  })
}

/**
 * `text` as the inside of a bash `$'...'` word that reads back as exactly its UTF-8 bytes: each
 * unsafe character as the `\xHH` escapes of its bytes. Not `printable`'s `\xHH`/`\uHHHH`:
 * bash reads `\xHH` as one raw byte (so U+0085 would come back as the byte 0x85, another name),
 * and `\u` only in a UTF-8 locale (in the C locale it stays six characters). Found by an
 * attacker's review: `explain` printed `dir\u0085name` as a word naming a different path.
 */
function shellEscaped(text) {
  return String(text).replace(UNSAFE, (c) => {
    if (NAMED[c]) return NAMED[c]
    return [...Buffer.from(c, 'utf8')].map((b) => `\\x${b.toString(16).padStart(2, '0')}`).join('')
  })
}

/** `s` as one shell word: bare when plain, else single-quoted, or as bash's `$'...'` of its escapes
 * when it holds control or invisible characters (so a word printed for the user to run can
 * neither redraw the line nor name another path). */
function shellWord(s) {
  if (/^[\w@%+=:,./-]+$/.test(s)) return s
  const escaped = shellEscaped(s)
  if (escaped !== s) return `$'${escaped.replace(/'/g, "\\'")}'`
  return `'${s.replace(/'/g, `'\\''`)}'`
}

/**
 * `value` as `--json` prints it (`JSON.stringify(value, null, 2)`), with every unsafe character
 * written as a JSON escape (`\u009b`; a surrogate pair's two past U+FFFF): parsed, the same value;
 * on a terminal, nothing it acts on or hides. JSON.stringify escapes only the C0 controls, and
 * xterm.js (VS Code's terminal) takes U+009B for ESC [: a command whose output held CSI
 * H, CSI 2J, CSI 3J, a fake result and CSI 8m erased the host-risk warning printed just before
 * the JSON, drew `"hostRisks": []` and concealed the real result (found by an attacker's review,
 * mode30). A raw line break is the layout's: inside a string JSON.stringify writes `\n`.
 */
function jsonText(value) {
  return JSON.stringify(value, null, 2).replace(UNSAFE_IN_JSON, (c) => {
    if (c === '\n') return c
    let escaped = ''
    for (let i = 0; i < c.length; i++) escaped += `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`
    return escaped
  })
}

module.exports = { printable, shellEscaped, shellWord, jsonText }
