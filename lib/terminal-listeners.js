'use strict'
// The `onData` listeners of a pty run, fed by the same native callback as `onOutput`.
//
// A command prints as soon as it starts (a shell's first prompt), usually before `startSandboxed`
// has resolved and so before anyone could call `onData`. That output is kept, up to `maxBuffer`
// bytes (the oldest dropped first, like `read()`), and handed to the first subscriber before
// anything newer, so a terminal attached at once shows the stream from its first byte. Once a
// subscriber has had it, output nobody listens to is not kept (`read()` and the result have it).
// It is kept as bytes in one bounded ring (see tail-buffer.js), not as the chunks it came in.
// `spawnSandboxed` has no onData and makes none of this (see process.js).
//
// The native side keeps its own copy for `read()` (`pty::Unread`, also bounded by maxBuffer);
// this one cannot be served from it: `read()` consumes what it returns, onData must not.

const { TailBuffer } = require('./tail-buffer')

const DEFAULT_MAX_BUFFER = 1024 * 1024

class TerminalListeners {
  listeners = new Set()
  /** The newest output from before the first subscriber; null once handed over. */
  #backlog

  constructor(onOutput, maxBuffer) {
    const limit = typeof maxBuffer === 'number' && maxBuffer >= 1 ? Math.floor(maxBuffer) : DEFAULT_MAX_BUFFER
    this.#backlog = new TailBuffer(limit)
    this.dispatch = (chunk) => {
      if (onOutput) onOutput(chunk)
      // A listener added inside onOutput must not get this chunk before the older ones.
      this.#handOver()
      if (this.#backlog !== null) return this.#backlog.push(chunk.data)
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

  /** The backlog to the first listener present (if any), once. */
  #handOver() {
    if (this.#backlog === null) return
    const [first] = this.listeners
    if (!first) return
    const kept = this.#backlog.contents()
    this.#backlog = null
    if (kept.length) first(kept)
  }
}

module.exports = { TerminalListeners }
