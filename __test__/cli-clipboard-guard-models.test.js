'use strict'
// The guard's output against the models of kitty's, WezTerm's and Windows Terminal's parsers
// (fixtures/terminal-parsers.js), with inputs that differ: the fuzzer in cli-clipboard-guard.test.js
// draws from an LCG computed in doubles (seed * 1103515245 loses its low bits), so its 100,000
// inputs per seed are 1,236 and 1,920 distinct ones; with xorshift32 the same alphabet found a bare
// 9B inside an OSC's number (gperf37). Deterministic: fixed seeds.

const test = require('node:test')
const assert = require('node:assert/strict')
const { ClipboardGuard } = require('../lib/cli/clipboard-guard')
const parsers = require('./fixtures/terminal-parsers')

function dispatched(out) {
  return [...parsers.kitty(out), ...parsers.wezterm(out), ...parsers.windowsTerminal(out)]
}

/** Each input (Latin-1), cut into two chunks at every point: no model dispatches a dropped string. */
function noneDispatchedAtAnyCut(inputs) {
  for (const input of inputs) {
    const bytes = Buffer.from(input, 'latin1')
    for (let cut = 0; cut <= bytes.length; cut++) {
      const g = new ClipboardGuard()
      const out = Buffer.concat([g.filter(bytes.subarray(0, cut)), g.filter(bytes.subarray(cut))])
      assert.deepEqual(dispatched(out), [], `${bytes.toString('hex')} cut at ${cut} -> ${out.toString('hex')}`)
    }
  }
}

test('a bare 8-bit CSI, SOS or PM inside an OSC number is read as WezTerm reads it: no DCS or APC follows unseen', () => {
  // Found by gperf37: in ESC ] 0 9B E2 90 ..., WezTerm's vtparse leaves the OSC at the bare 9B
  // (a CSI from any state), ignores E2 there and begins a DCS at 90, while the guard, holding the
  // number, took E2 90 for a character and wrote it all out when the string ended.
  const dcs = '\x90tmux;\x1b\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b\\'
  noneDispatchedAtAnyCut([
    '\x1b]0\x9b\xe2' + dcs,
    '\x9d0\x9b\xe2' + dcs,
    '\x9d\x9b\xc3\x9f_Ga=T,t=f;L2V0Yy9wYXNzd2Q=\x1b\\',
    '\x1b]5\x98\xe2' + dcs,
    '\x1b]5\x9e\xe2' + dcs,
  ])
})

test('a dropped string leaves the terminal where it was before it: no DCS after an unfinished CSI or an SOS', () => {
  // Found by gperf37: the guard read the dropped OSC as if written (the terminal in an OSC string,
  // decoding UTF-8), but no terminal sees a byte of it, its ESC and end included: after ESC [ or
  // an SOS, WezTerm ignores C3 and begins a DCS at 90 (ESC [ ESC ]52;c;x BEL C3 90 tmux;...).
  const dcs = '\xc3\x90tmux;\x1b\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b\\'
  noneDispatchedAtAnyCut([
    '\x1b[\x1b]52;c;eA==\x07' + dcs,
    '\x1b[1;\x1b]52;c;eA==\x1b\\' + dcs,
    '\x1bX\x1b]52;c;eA==\x07' + dcs,
    '\x98\x9d52;c;eA==\x07' + dcs,
    '\x1b[\x1b]5\x9f\x07' + dcs,
    '\x1b[\x1b]52\x07' + dcs,
    '\x1b[\x1b_Ga=T\x1b\\' + dcs,
  ])
})

test('an OSC written up to the ESC that ended it is closed, whatever becomes of that ESC: no OSC 52 from the text after a dropped one', () => {
  // Found by gperf37 (on main too): ESC ]0 ended by the ESC of ESC ]52;c;x BEL was written, the
  // ESC dropped with the string it began, and the text after it read as the number's digits:
  // kitty, Windows Terminal and xterm took ESC ]052;c;<base64> BEL for OSC 52.
  const payload = 'c;Y3VybCBldmlsfHNo\x07'
  noneDispatchedAtAnyCut([
    '\x1b]0\x1b]52;c;x\x0752;' + payload,
    '\x1b]0\x1b_Ga=T\x1b\\52;' + payload,
    '\x1b]0\x1bP@kitty-cmd\x1b\\52;' + payload,
    '\x1b]\x1b\x1b]52;c;x\x07[52;' + payload,
    '\x1b]\x1b\x9f_x\x0752;' + payload,
    '\x1b]\x1b\x00\x9fX\x07\xe2\x0052;' + payload,
  ])
})

test("a bare ST inside an OSC's number is no end to Windows Terminal: ESC ] 9C 52;c;... is dropped", () => {
  // Found by gperf37 (on main too): the guard took the 9C for the string's end and wrote the rest;
  // Windows Terminal decodes UTF-8 first (a lone 9C is U+FFFD) and ignores C1 controls unless asked
  // to accept them, so its OSC parameter state read on: 52, OSC 52.
  noneDispatchedAtAnyCut([
    '\x1b]\x9c52;c;Y3VybCBldmlsfHNo\x07',
    '\x1b]\xc2\x9c52;c;Y3VybCBldmlsfHNo\x07',
    '\x9d5\x9c2;c;Y3VybCBldmlsfHNo\x07',
    '\x1b]52\x9cc;Y3VybCBldmlsfHNo\x07',
  ])
})

test('text cut between chunks anywhere, even inside a character, passes whole', () => {
  // Found by gperf37: with E2 ending one chunk and 90 9F beginning the next (U+241F), the guard
  // took the chunk's first byte into its last three twice, lost the E2, took the 9F for an APC and
  // dropped the text after it up to the next BEL or ESC (a Chinese 材料, E6 9D 90 E6 96 99, alike).
  for (const text of ['a ␟ symbol, and the rest of the line\n', '材料 吐 束 吝\n', 'ok 🐝 П Н А\n', 'Ý ě Ř\n']) {
    const bytes = Buffer.from(text)
    for (let cut = 0; cut <= bytes.length; cut++) {
      for (const second of [cut, cut + 1, cut + 2]) {
        const g = new ClipboardGuard()
        const parts = [bytes.subarray(0, cut), bytes.subarray(cut, Math.min(second, bytes.length)), bytes.subarray(Math.min(second, bytes.length))]
        const out = Buffer.concat(parts.map((part) => g.filter(part)))
        assert.equal(out.toString('hex'), bytes.toString('hex'), `${text} cut at ${cut}, ${second}`)
      }
    }
  }
})

test('random output through the guard, cut once, makes no modelled terminal dispatch a dropped string (xorshift32)', () => {
  const alphabet = [0x1b, 0x1b, 0x5b, 0x28, 0x6d, 0x58, 0x9b, 0xc3, 0xa9, 0x5d, 0x5f, 0x50, 0x35, 0x32, 0x30, 0x31, 0x33, 0x37, 0x3b, 0x63, 0x58, 0x5c, 0x07, 0x00, 0x18, 0x9d, 0x9c, 0x9f, 0x90, 0xc2, 0xe2, 0x80, 0x41, 0x98, 0x9e]
  for (const start of [7, 8]) {
    let seed = start
    const rnd = (n) => {
      seed ^= seed << 13
      seed ^= seed >>> 17
      seed ^= seed << 5
      return (seed >>> 0) % n
    }
    for (let t = 0; t < 150000; t++) {
      const input = Buffer.from(Array.from({ length: 3 + rnd(12) }, () => alphabet[rnd(alphabet.length)]))
      const g = new ClipboardGuard()
      const cut = rnd(input.length + 1)
      const out = Buffer.concat([g.filter(input.subarray(0, cut)), g.filter(input.subarray(cut)), g.filter(Buffer.from([0x07, 0x1b, 0x5c]))])
      assert.deepEqual(dispatched(out), [], `${input.toString('hex')} cut at ${cut} -> ${out.toString('hex')}`)
    }
  }
})
