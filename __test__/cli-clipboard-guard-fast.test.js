'use strict'
// The terminal guard's fast paths (text passed by simdutf and memchr, runs found by table and
// indexOf, dropped strings skipped to their end) against the guard as integ37 left it, read byte by
// byte in every sequence (fixtures/clipboard-guard-reference.js, frozen): the same chunks in, the
// same bytes out of each, for random bytes and for output built of the pieces terminals see (text
// in three scripts, colour, titles, OSC 52, APC, DCS, 8-bit introducers, ESCs left open), cut at
// random points. Deterministic: fixed seeds.

const test = require('node:test')
const assert = require('node:assert/strict')
const { ClipboardGuard } = require('../lib/cli/clipboard-guard')
const { ReferenceGuard } = require('./fixtures/clipboard-guard-reference')

/**
 * xorshift32. Not the LCG of the other fuzzer: seed * 1103515245 in a double loses the low bits,
 * and its 100,000 inputs per seed are 1,236 and 1,920 distinct ones.
 */
function random(start) {
  let seed = start
  return (n) => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) % n
  }
}

/**
 * `input` cut at up to `cuts` random points (or, with `tiny`, every one to three bytes: a pty's
 * reads), through both guards: each chunk's bytes alike.
 */
function sameThroughBoth(input, rnd, cuts, tiny = false) {
  const points = []
  if (tiny) for (let at = 1 + rnd(3); at < input.length; at += 1 + rnd(3)) points.push(at)
  else for (let n = rnd(cuts + 1); n > 0; n--) points.push(rnd(input.length + 1))
  points.sort((a, b) => a - b)
  const fast = new ClipboardGuard()
  const reference = new ReferenceGuard()
  let from = 0
  for (const to of [...points, input.length]) {
    const chunk = input.subarray(from, to)
    const want = reference.filter(chunk)
    const got = fast.filter(chunk)
    if (!got.equals(want)) {
      assert.fail(`input ${input.toString('hex')} cut at ${points}: chunk ${from}-${to} gave ${got.toString('hex')}, want ${want.toString('hex')}`)
    }
    from = to
  }
}

const TEXT = [
  'plain text, line after line of it, long enough to pass the near scan ',
  'Съешь же ещё этих мягких французских булок. Эй, Юля! ',
  'Příliš žluťoučký kůň úpěl ďábelské ódy, Ěě Řř Ýý ',
  '✔ ✖ ℹ → ‘quoted’ « » ° 😀 𝄞 ',
  '\n',
  '\t',
]
const SEQUENCES = [
  '\x1b[32m', '\x1b[0m', '\x1b[1;31m', '\x1b[?25l', '\x1b(B', '\x1b7', '\x1b8', '\x1bX sos \x1b\\',
  '\x1b]0;title\x07', '\x1b]0;title\x1b\\', '\x1b]8;;http://a.test/\x07link\x1b]8;;\x07',
  '\x1b]52;c;Y3VybCBldmlsfHNo\x07', '\x1b]52;c;?\x1b\\', '\x1b]000522c;eA==\x07', '\x1b]5X2;c;eA==\x07',
  '\x1b]1337;File=inline=0:eA==\x07', '\x1b]5113;ac=send\x1b\\', '\x1b]5522;type=write\x07',
  '\x1b_Ga=T,t=f;L2V0Yy9wYXNzd2Q=\x1b\\', '\x1bP@kitty-cmd{"cmd":"launch"}\x1b\\', '\x1bPtmux;\x1b\x1b]52;c;eA==\x07\x1b\\',
  '\x1b\x1b]52;c;x\x07]52;c;eA==\x07', '\x1b\x00]52;c;eA==\x07', '\x1b\xa9_Ga=T\x1b\\', '\x1b\xe2\x9d52;c;eA==\x07',
  '\xc2\x9d52;c;eA==\x07', '\x9d52;c;eA==\x9c', '\x9f_G\x9c', '\x90q\x9c', '\x9b31m', '\xc2\x9b31m', '\x98sos\x9c',
  '\x1b', '\x1b[', '\x1b]', '\x1b]5', '\x18', '\x1a', '\x07', '\x9c', '\xc3', '\xe2\x9d', '\xf0\x9f\x9d', '\x80',
  // A dropped string ending in a lead byte, and the continuations after it: the lead is no text.
  '\x1b_G\xf0\x9c', '\x1b]52;c;\xe2\x9c', '\x9f\xc3\x9c', '\x90\xf0\x07', '\x80', '\x80\x80', '\xa9',
]

/** Output built of TEXT and SEQUENCES, some pieces long (a dropped string's payload, a run of text). */
function structured(rnd) {
  const pieces = []
  for (let n = 1 + rnd(12); n > 0; n--) {
    const pick = rnd(10)
    if (pick < 4) pieces.push(TEXT[rnd(TEXT.length)].repeat(1 + rnd(6)))
    else if (pick < 9) pieces.push(SEQUENCES[rnd(SEQUENCES.length)])
    else pieces.push('\x1b]52;c;' + 'QUJD'.repeat(rnd(400)) + (rnd(2) ? '\x07' : ''))
  }
  // Latin-1 for the sequences' raw bytes, UTF-8 for the text's characters.
  return Buffer.concat(pieces.map((p) => Buffer.from(p, /[^\x00-\xff]/.test(p) ? 'utf8' : 'latin1')))
}

test('random bytes: the fast guard gives every chunk the bytes the byte-by-byte guard gives', () => {
  // The fuzzer's alphabet (cli-clipboard-guard.test.js), with more text bytes: leads and continuations.
  const alphabet = [0x1b, 0x1b, 0x5b, 0x28, 0x6d, 0x58, 0x9b, 0xc3, 0xa9, 0x5d, 0x5f, 0x50, 0x35, 0x32, 0x30, 0x31, 0x33, 0x37, 0x3b, 0x63, 0x58, 0x5c, 0x07, 0x00, 0x18, 0x1a, 0x9d, 0x9c, 0x9f, 0x90, 0x98, 0x9e, 0xc2, 0xd0, 0xe2, 0xf0, 0x80, 0x41, 0x41, 0x20, 0x7f, 0xa0]
  for (const start of [11, 12, 13]) {
    const rnd = random(start)
    for (let t = 0; t < 30000; t++) {
      const input = Buffer.from(Array.from({ length: 1 + rnd(40) }, () => alphabet[rnd(alphabet.length)]))
      sameThroughBoth(input, rnd, 4, t % 4 === 0)
    }
  }
})

test('random text in three scripts: chunks cut inside characters pass alike through both guards', () => {
  const rnd = random(21)
  for (let t = 0; t < 3000; t++) {
    const text = Buffer.from(Array.from({ length: 1 + rnd(8) }, () => TEXT[rnd(TEXT.length)].repeat(1 + rnd(3))).join(''))
    sameThroughBoth(text, rnd, 6)
  }
})

test('structured output (colour, titles, dropped strings, 8-bit introducers, open ESCs): alike through both guards', () => {
  for (const start of [31, 32]) {
    const rnd = random(start)
    for (let t = 0; t < 8000; t++) sameThroughBoth(structured(rnd), rnd, 8, t % 4 === 0)
  }
})

test('strings where a character meets a chunk edge or a dropped string, cut at every pair of points: alike through both guards', () => {
  // Where the fast text path takes over from the byte-wise one: continuation bytes at a chunk's
  // start after a dropped string that ended in a lead byte (no text, so no character), and C1
  // bytes inside characters cut at every point.
  const inputs = [
    '\x1b_G\xf0\x9c\x80\x9d52;c;eA==\x07',
    '\x1b]52;c;\xe2\x9c\x80\x9f_G\x07text',
    '\x9f\xc3\x9c\x90q\x9c\x80\x80\x9d0;t\x07',
    'a\xe2\x90\x9f ok \xe6\x9d\x90 ok \xf0\x9f\x90\x9d',
    '\x1b[\xe2m\x80\x9dx\x07\xc3\x9b1m',
  ].map((s) => Buffer.from(s, 'latin1'))
  for (const input of inputs) {
    for (let a = 0; a <= input.length; a++) {
      for (let b = a; b <= input.length; b++) {
        const fast = new ClipboardGuard()
        const reference = new ReferenceGuard()
        for (const chunk of [input.subarray(0, a), input.subarray(a, b), input.subarray(b)]) {
          assert.equal(fast.filter(chunk).toString('hex'), reference.filter(chunk).toString('hex'), `${input.toString('hex')} cut at ${a}, ${b}`)
        }
      }
    }
  }
})
