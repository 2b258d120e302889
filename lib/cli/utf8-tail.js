'use strict'
// Whether a byte continues a UTF-8 character, read from the bytes before it (the clipboard guard and
// its sequence state keep the last three, packed, the latest lowest).

/**
 * Whether a 9D, 9F or 90 after `tail` (the last three bytes, packed, the latest lowest) continues a UTF-8
 * character: after a lead byte (C3..F4) that still waits for it. Not after ASCII, a whole
 * character or a stray continuation byte, where a UTF-8 terminal on a DEC parser (WezTerm's
 * vtparse: ground again after each character) reads the bare byte as the 8-bit OSC or APC (found
 * by an attacker's review, rfix36: 'é' 9D 52;c;... passed); and C2 9D is U+009D, the OSC itself.
 */
function insideCharacter(tail) {
  for (let k = 1; k <= 3; k++) {
    const p = (tail >> (8 * (k - 1))) & 0xff
    if (p < 0x80) return false
    if (p < 0xc0) continue
    if (p < 0xc3 || p > 0xf4) return false
    const continuations = p >= 0xf0 ? 3 : p >= 0xe0 ? 2 : 1
    return k - 1 < continuations
  }
  return false
}

module.exports = { insideCharacter }
