'use strict'
// Finding the next of a few bytes in a chunk of a command's output, for the CLI's terminal guard
// and its sequence state, which stop only where such a byte is. Near the start a table look-up per
// byte (coloured output stops every few dozen bytes, where a native search costs more than the
// bytes it skips); past that Buffer#indexOf (memchr) for each byte, its position kept for the chunk
// and searched again only once passed (a search to the chunk's end from every stop made a chunk
// with none of a byte quadratic).

const NEAR = 32

class ByteSet {
  /** `bytes`: the bytes to stop at. */
  constructor(bytes) {
    this.bytes = bytes
    this.table = new Uint8Array(256)
    for (const b of bytes) this.table[b] = 1
  }

  /** Where each byte was last found in one chunk (not yet searched: -1); one per chunk. */
  positions() {
    return new Int32Array(this.bytes.length).fill(-1)
  }

  /** The first of the bytes in `buf[from, to)`, else `to`; `found`: this chunk's positions(). */
  next(buf, from, to, found) {
    const near = Math.min(to, from + NEAR)
    const table = this.table
    for (let i = from; i < near; i++) if (table[buf[i]] === 1) return i
    if (near === to) return to
    let first = buf.length
    for (let k = 0; k < this.bytes.length; k++) {
      if (found[k] < near) {
        const at = buf.indexOf(this.bytes[k], near)
        found[k] = at < 0 ? buf.length : at
      }
      if (found[k] < first) first = found[k]
    }
    return first < to ? first : to
  }
}

module.exports = { ByteSet }
