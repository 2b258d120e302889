'use strict'
// The `onData` listeners of a pty run, fed by the same native callback as `onOutput`.
//
// A command prints as soon as it starts (a shell's first prompt), usually before `startSandboxed`
// has resolved and so before anyone could call `onData`. That output is kept, up to `maxBuffer`
// bytes (the oldest dropped first, like `read()`), and handed to the first subscriber before
// anything newer, so a terminal attached at once shows the stream from its first byte. Once a
// subscriber has had it, output nobody listens to is not kept (`read()` and the result have it).

const DEFAULT_MAX_BUFFER = 1024 * 1024

class TerminalListeners {
  listeners = new Set()
  /** Chunks that arrived before the first subscriber; null once handed over. */
  #backlog = []
  #backlogBytes = 0
  #limit

  constructor(onOutput, maxBuffer) {
    this.#limit = typeof maxBuffer === 'number' && maxBuffer > 0 ? maxBuffer : DEFAULT_MAX_BUFFER
    this.dispatch = (chunk) => {
      if (onOutput) onOutput(chunk)
      // A listener added inside onOutput must not get this chunk before the older ones.
      this.#handOver()
      if (this.#backlog !== null) return this.#keep(chunk.data)
      for (const listener of [...this.listeners]) listener(chunk.data)
    }
  }

  /** Adds `listener`; the backlog reaches the first one right after the caller's turn. */
  add(listener) {
    this.listeners.add(listener)
    // Not inside onData itself: the caller may not be ready for data before it returns (it may
    // not even hold the disposable yet). A microtask still runs before the next native chunk.
    if (this.#backlog !== null) queueMicrotask(() => this.#handOver())
    return () => this.listeners.delete(listener)
  }

  #keep(data) {
    this.#backlog.push(data)
    this.#backlogBytes += data.length
    while (this.#backlogBytes > this.#limit) {
      const over = this.#backlogBytes - this.#limit
      const oldest = this.#backlog[0]
      if (oldest.length <= over) {
        this.#backlog.shift()
        this.#backlogBytes -= oldest.length
      } else {
        this.#backlog[0] = oldest.subarray(over)
        this.#backlogBytes -= over
      }
    }
  }

  /** The backlog to the first listener present (if any), once. */
  #handOver() {
    if (this.#backlog === null) return
    const [first] = this.listeners
    if (!first) return
    const backlog = this.#backlog
    this.#backlog = null
    this.#backlogBytes = 0
    if (backlog.length) first(Buffer.concat(backlog))
  }
}

module.exports = { TerminalListeners }
