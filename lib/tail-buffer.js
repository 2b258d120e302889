'use strict'
// The newest `limit` bytes of a stream, kept in one ring Buffer (start + length). Memory is the
// bytes kept, whatever sizes the chunks came in, and a push costs the bytes it copies. The ring
// grows by doubling up to `limit`, so a run that prints little allocates little.
//
// Why not an array of the chunks: the command chooses the chunk size. One byte per write() made
// the host hold one Buffer object (~100+ bytes) per byte, and dropping the oldest bytes by
// shifting that array was quadratic (an attacker's review froze the host's event loop for
// minutes; __test__/pty-backlog-bound.test.js).

const FIRST_CAPACITY = 4096

class TailBuffer {
  #ring = Buffer.alloc(0)
  #start = 0
  #length = 0
  #limit

  /** `limit`: a positive number of bytes. */
  constructor(limit) {
    this.#limit = limit
  }

  /** Appends `data` (a Uint8Array), dropping the oldest bytes beyond the limit. */
  push(data) {
    const n = data.length
    if (n === 0) return
    if (n >= this.#limit) {
      // Only its own end survives; what was kept is all dropped.
      this.#ring = Buffer.from(data.subarray(n - this.#limit))
      this.#start = 0
      this.#length = this.#limit
      return
    }
    this.#reserve(Math.min(this.#limit, this.#length + n))
    const ring = this.#ring
    const capacity = ring.length
    const end = (this.#start + this.#length) % capacity
    const first = Math.min(n, capacity - end)
    ring.set(data.subarray(0, first), end)
    if (first < n) ring.set(data.subarray(first), 0)
    // Past the capacity (only once it is the limit), the oldest bytes were just overwritten.
    const over = this.#length + n - capacity
    if (over > 0) {
      this.#start = (this.#start + over) % capacity
      this.#length = capacity
    } else {
      this.#length += n
    }
  }

  /** The bytes kept, oldest first, as one Buffer. */
  contents() {
    const capacity = this.#ring.length
    const end = this.#start + this.#length
    if (end <= capacity) return this.#ring.subarray(this.#start, end)
    return Buffer.concat([this.#ring.subarray(this.#start), this.#ring.subarray(0, end - capacity)])
  }

  /** Room for `need` bytes (at most the limit), the contents moved to the start of a new ring. */
  #reserve(need) {
    if (this.#ring.length >= need) return
    const capacity = Math.min(this.#limit, Math.max(need, 2 * this.#ring.length, FIRST_CAPACITY))
    const ring = Buffer.allocUnsafe(capacity)
    this.contents().copy(ring, 0)
    this.#ring = ring
    this.#start = 0
  }
}

module.exports = { TailBuffer }
