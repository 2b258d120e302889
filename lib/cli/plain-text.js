'use strict'
// The terminal guard's fast path: a chunk of nothing but text (the bulk of a command's output:
// ASCII, or whole UTF-8 characters) passes unchanged and leaves the terminal in text, so the guard
// need not read it byte by byte. Decided with simdutf (Buffer's isAscii and isUtf8) and memchr: in
// valid UTF-8 every byte from 80 to 9F continues a character begun by its lead byte, and the guard
// reads such a byte as part of that character (./utf8-tail), except after C2 (C2 9D is U+009D,
// the OSC itself). The bytes at either end, a character cut by the chunk's edges, are read as the
// guard reads them, one by one.

const { isAscii, isUtf8 } = require('node:buffer')
const { insideCharacter } = require('./utf8-tail')
const { textTail } = require('./sequence-state')
const { ESC } = require('./control-bytes')

/**
 * Whether `buf`, read in text (the guard in its ground state, the terminal in text), passes as it
 * is and leaves the terminal in text: no ESC, no C1 byte that may begin a string or a sequence.
 * `tail`, `textBytes`: the guard's last three bytes (packed) and how many of them were read in text.
 */
function passesAsText(buf, tail, textBytes) {
  if (isAscii(buf)) return buf.indexOf(ESC) < 0
  if (buf.indexOf(ESC) >= 0) return false
  // Continuation bytes at the start end a character begun in the chunk before.
  let head = 0
  while (head < 3 && head < buf.length && (buf[head] & 0xc0) === 0x80) head++
  let end = buf.length
  // A character the chunk's end cuts off is read after the rest.
  for (let k = buf.length - 1; k >= head && k >= buf.length - 3; k--) {
    if (buf[k] < 0x80) break
    if (buf[k] < 0xc0) continue
    if (buf.length - k < (buf[k] >= 0xf0 ? 4 : buf[k] >= 0xe0 ? 3 : 2)) end = k
    break
  }
  const afterHead = readAsText(buf, 0, head, tail, textBytes)
  if (afterHead < 0 || !wholeCharacters(buf, head, end)) return false
  let t = afterHead >>> 2
  for (let k = Math.max(head, end - 3); k < end; k++) t = ((t << 8) | buf[k]) & 0xffffff
  return readAsText(buf, end, buf.length, t, Math.min(3, (afterHead & 3) + end - head)) >= 0
}

/** Whether `buf[from, to)` is valid UTF-8 holding no C1 character (C2 80 to C2 9F). */
function wholeCharacters(buf, from, to) {
  if (!isUtf8(buf.subarray(from, to))) return false
  for (let at = buf.indexOf(0xc2, from); at >= 0 && at < to; at = buf.indexOf(0xc2, at + 1)) {
    if (buf[at + 1] < 0xa0) return false
  }
  return true
}

/**
 * `buf[from, to)` (a few bytes) read one by one as the guard reads text: the last three bytes and
 * how many were read in text, packed as `tail << 2 | textBytes`, or -1 when a byte would begin a
 * string (9D, 9F, 90) or a sequence (9B, 98, 9E) there, not continuing a character.
 */
function readAsText(buf, from, to, tail, textBytes) {
  for (let k = from; k < to; k++) {
    const b = buf[k]
    const c1 = b === 0x9d || b === 0x9f || b === 0x90 || b === 0x9b || b === 0x98 || b === 0x9e
    if (c1 && !insideCharacter(textTail(tail, textBytes))) return -1
    tail = ((tail << 8) | b) & 0xffffff
    textBytes = Math.min(3, textBytes + 1)
  }
  return (tail << 2) | textBytes
}

module.exports = { passesAsText }
