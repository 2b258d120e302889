'use strict'
// Where a terminal's parser stands between the strings the clipboard guard reads: in text, or
// inside an escape or control sequence. It matters for a bare 9D, 9F or 90 after a UTF-8 lead byte:
// in text the byte may end that character, but WezTerm's parser decodes UTF-8 only in its ground
// and OSC states; in the escape, CSI, SOS and PM states it ignores bytes from A0 up and takes a
// bare C1 byte for what it is from any state (vtparse's anywhere_or), so ESC E2 9D 52;... is OSC 52
// there (found by an attacker's review, mode37). The states are the DEC parser's
// (vt100.net/emu/dec_ansi_parser), folded to what ends each.

const { insideCharacter } = require('./utf8-tail')

const TEXT = 0
const ESCAPE = 1
const INTERMEDIATE = 2
const CSI = 3
const SOS_PM = 4

const { ESC, CAN, SUB } = require('./control-bytes')
const { ByteSet } = require('./byte-set')

/** The state after byte `b` from state `s`; `tail`: the three bytes before `b`, packed. */
function next(s, b, tail) {
  if (b === ESC) return ESCAPE
  if (b === CAN || b === SUB) return TEXT
  if (b >= 0x80 && b <= 0x9f && !(s === TEXT && insideCharacter(tail))) {
    if (b === 0x9b) return CSI
    if (b === 0x98 || b === 0x9e) return SOS_PM
    return TEXT // 9C ends a string; 9D, 9F and 90 are the guard's; the rest execute
  }
  switch (s) {
    case ESCAPE:
      if (b >= 0x20 && b <= 0x2f) return INTERMEDIATE
      if (b === 0x5b) return CSI
      if (b === 0x58 || b === 0x5e) return SOS_PM
      return b >= 0x30 && b <= 0x7e ? TEXT : ESCAPE
    case INTERMEDIATE:
      return b >= 0x30 && b <= 0x7e ? TEXT : INTERMEDIATE
    case CSI:
      return b >= 0x40 && b <= 0x7e ? TEXT : CSI
    default:
      return s
  }
}

/**
 * The state after `buf[from, to)` from state `s`, and how many of the bytes last read (up to three)
 * were read in text, which is all a terminal's UTF-8 decoder has seen of a character, packed as
 * `state * 4 + textBytes` (no object per run: the guard calls this once per run of text). `tail`:
 * the three bytes before `from`, packed; `textBytes`: how many of them were read in text; `found`:
 * CHANGES.positions() for this chunk; `stopAtEscape(buf, i)`, when given, is asked at every ESC
 * read, and -1 returned if it says so (the guard's check that no string begins, made on the way).
 * Text is passed over to the next byte that can change it (ESC and the 8-bit CSI, SOS and PM).
 */
function advance(s, buf, from, to, tail, textBytes, found, stopAtEscape = null) {
  // Where the text read last begins (bytes before `from` count as far as `textBytes` says).
  let textFrom = from - textBytes
  let i = from
  while (i < to) {
    if (s === TEXT) {
      i = CHANGES.next(buf, i, to, found)
      if (i >= to) break
    } else if (s === CSI) {
      // A CSI's parameter and intermediate bytes (20 to 3F) leave it a CSI, read outside text.
      let k = i
      while (k < to && buf[k] >= 0x20 && buf[k] <= 0x3f) k++
      if (k > i) textFrom = k
      i = k
      if (i >= to) break
    }
    const was = s
    const b = buf[i]
    if (b === ESC && stopAtEscape !== null && stopAtEscape(buf, i)) return -1
    // The bytes before matter only to a C1 byte in text (whether it ends a character).
    const before = s === TEXT && b >= 0x80 && b <= 0x9f ? textTail(tailAt(buf, i, from, tail), i - textFrom) : 0
    s = next(s, b, before)
    if (s !== TEXT) textFrom = i + 1
    else if (was !== TEXT) textFrom = i
    i++
  }
  return s * 4 + (s === TEXT ? Math.min(3, to - textFrom) : 0)
}

/** `tail` with the bytes older than the last `n` read in text taken for ASCII. */
function textTail(tail, n) {
  if (n >= 3) return tail
  const mask = n <= 0 ? 0 : (1 << (8 * n)) - 1
  return (tail & mask) | (0x0a0a0a & ~mask)
}

/** The bytes that can take text into another state. */
const CHANGES = new ByteSet([ESC, 0x9b, 0x98, 0x9e])

/** The three bytes before `buf[i]`, packed, those before `from` taken from `tail`. */
function tailAt(buf, i, from, tail) {
  let t = tail
  for (let k = Math.max(from, i - 3); k < i; k++) t = ((t << 8) | buf[k]) & 0xffffff
  return t
}

module.exports = { TEXT, next, advance, textTail, changes: () => CHANGES.positions() }
