'use strict'
// The command's output on the way to a terminal, without the OSC strings that reach the host's
// clipboard or files: OSC 52 sets the terminal's clipboard (kitty, WezTerm, Alacritty, foot,
// Windows Terminal and tmux's set-clipboard honour it by default), and with `?` for its data asks
// the terminal to type the clipboard into the command's input where that is allowed; kitty's OSC
// 5522 is its newer clipboard protocol, and its OSC 5113 transfers files to and from the host
// (once the user says yes to a dialog that shows while the agent runs: mode37); iTerm2's OSC 1337
// copies to the clipboard (Copy=, CopyToClipboard) and saves files to the host's Downloads (File=
// with inline=0), and takes OSC 50, its older number, for the same (xterm's font change is lost
// with it). A sandboxed
// command must not leave text on the host's clipboard for the user's next paste into a shell, nor
// read it (found by an attacker's review, mode35: a read-only run's printf '\033]52;c;<base64>\a'
// reached the terminal as written). And every APC string (ESC _, 8-bit 9F): kitty's graphics
// protocol has kitty, a host process, read a file the command names by path (t=f, a denyRead one
// included, its reply saying whether it opened) or read and unlink a shared memory object of the
// host's by name (t=s). And every DCS string (ESC P, 8-bit 90): kitty's remote control (ESC P
// @kitty-cmd{"cmd":"launch",...}, honoured with allow_remote_control yes, which window-navigation
// plugins ask for) starts a program on the host or types into the user's other windows (send-text);
// iTerm2's ESC P 1000p takes what follows for tmux's control mode (CVE-2019-9535 ran commands from
// it); tmux's passthrough (ESC P tmux;) carries either to the terminal outside; xterm's DECUDK
// redefines what keys type (found by an attacker's review, mode37). Sixel images go with them.
// And the shell's working directory as the terminal takes it: OSC 7 (WezTerm, Ghostty, foot,
// kitty, GNOME Terminal, Konsole, iTerm2), OSC 9;9 (Windows Terminal, ConEmu) and VS Code's
// OSC 633 (P;Cwd=) say where the user's next tab, split or window opens, an unsandboxed shell in
// a directory the command chose and filled (a repository whose core.fsmonitor a git prompt runs),
// and where no shell integration reports it at each prompt it lasts past the run (found by an
// attacker's review, mode39). OSC 9 is iTerm2's desktop notification too, no command's to raise.
// Emacs vterm's OSC 51 likewise: A sets the buffer's default-directory (magit, M-x compile and
// the user's next shell run there), E calls vterm-eval-cmds (find-file of a path the command
// names: a TRAMP /ssh:HOST: one is a connection from the host, outside the run's policy).
// And desktop notifications: OSC 777 (notify; VTE's GNOME Terminal, foot, Ghostty, WezTerm, rxvt's
// extension) and kitty's OSC 99 show the command's words in the desktop's own dress, outside the
// terminal and apart from the agent's output (rev41). Window titles (OSC 0, 1, 2) pass: a title
// starts nothing, and tools show their progress there.
//
// One state for everything written to the terminal (stdout and stderr reach one parser there), so
// a string split between chunks or streams is recognized. The number is read as terminals read it:
// an integer (leading zeros taken), C0 characters inside it skipped as tmux skips them; the string
// starts with ESC ] or the 8-bit OSC (U+009D, C2 9D in UTF-8, or a 9D inside no UTF-8 character) and ends at
// BEL, ESC \, ST (9C; not in the number, where Windows Terminal reads on past it), or is cut off
// by CAN, SUB or ESC, as a terminal's parser does. A C0 control
// or DEL between ESC and ], _ or P leaves the terminal in its escape state (vt100.net's DEC parser, as
// xterm, tmux, vte, WezTerm and foot follow it), so ESC NUL ] 52 is OSC 52 too. Every other
// byte passes unchanged and in order.
//
// Every byte of a command's output comes through here, so bytes that can begin or end nothing are
// not read one by one: a chunk of text alone (ASCII, whole UTF-8 characters) is judged whole by
// ./plain-text, runs are found with a table and indexOf (./byte-set), a dropped string is skipped
// to its end. Each decides as reading byte by byte does (__test__/cli-clipboard-guard-fast.test.js
// holds this guard to the one before these paths, frozen in a fixture).

const { insideCharacter } = require('./utf8-tail')
const sequence = require('./sequence-state')
const { passesAsText } = require('./plain-text')
const { ByteSet } = require('./byte-set')
const { isAscii } = require('node:buffer')

const { ESC, BEL, CAN, SUB, ST8, OSC8, APC8, DCS8 } = require('./control-bytes')
/** The bytes that may begin a string: ESC and the 8-bit OSC, APC and DCS. */
const INTRODUCERS = new ByteSet([ESC, OSC8, APC8, DCS8])
/** The bytes that end a dropped string or may (ESC): see step(). */
const STRING_ENDS = new ByteSet([ESC, BEL, ST8, CAN, SUB])
// Past this many bytes of a number, the string is taken for one to drop (a terminal reads 0…052).
const MAX_NUMBER_BYTES = 256
// kitty reads this many digits at most, up to the first other byte, and takes the rest for the
// string: 000522c;... is OSC 52 to it (found by an attacker's review, mode37).
const KITTY_DIGITS = 5
/** The OSC numbers dropped (see above). */
const DROPPED = new Set([7, 9, 50, 51, 52, 99, 633, 777, 1337, 5113, 5522])

const GROUND = 0
const AFTER_ESC = 1
const NUMBER = 2
const DROPPING = 3

class ClipboardGuard {
  constructor() {
    this.state = GROUND
    // The bytes of an OSC whose number is not known yet, held back until it is.
    this.held = []
    this.value = 0
    // The number as kitty reads it: its first KITTY_DIGITS digits before any other byte.
    this.kittyValue = 0
    this.kittyDigits = 0
    // The last three bytes that went by, packed (the latest lowest): whether a 9D, 9F or 90 is inside
    // a UTF-8 character is read from them.
    this.tail = 0x0a0a0a
    // Where the terminal's parser stands between strings (./sequence-state): a lead byte begins a
    // character in text only.
    this.seq = sequence.TEXT
    // Where it stood before the OSC being read began: where it stays if the OSC goes unwritten.
    this.seqBefore = sequence.TEXT
    // How many of the last three bytes the terminal read in text (and so in a UTF-8 character).
    this.textBytes = 0
  }

  /** `data` (Buffer or string) as it may reach the terminal. */
  filter(data) {
    const buf = Buffer.isBuffer(data) ? data : Buffer.from(String(data))
    // Where the bytes that change the terminal's state between strings are in this chunk.
    const changes = sequence.changes()
    if (this.passesWhole(buf, changes)) return buf
    const parts = []
    let i = 0
    // Bytes from here up to i pass as they came: copied as one slice when something is cut.
    let copyFrom = 0
    const introducers = INTRODUCERS.positions()
    const stringEnds = STRING_ENDS.positions()
    while (i < buf.length) {
      if (this.state === GROUND) {
        // Plain text up to the next byte that may begin an OSC, APC or DCS passes whole.
        const next = INTRODUCERS.next(buf, i, buf.length, introducers)
        this.advanceText(buf, i, next, changes)
        this.remember(buf, i, next)
        if (next === buf.length) break
        i = next
        if (buf[i] !== ESC && this.continuesCharacter()) {
          // A 9D, 9F or 90 inside a UTF-8 character: text, read as step() reads it (in text still).
          this.tail = ((this.tail << 8) | buf[i]) & 0xffffff
          this.textBytes = Math.min(3, this.textBytes + 1)
          i++
          continue
        }
      }
      const out = []
      const start = i
      const fresh = this.state === GROUND
      // Byte by byte while a sequence is being read: no more than that sequence (or a dropped string).
      do {
        if (this.state === DROPPING) {
          // A dropped string's bytes up to its end go unread (none is text, none changes a state).
          const end = STRING_ENDS.next(buf, i, buf.length, stringEnds)
          if (end > i) {
            this.remember(buf, i, end)
            this.textBytes = 0
            i = end
            if (i === buf.length) break
          }
        }
        this.step(buf[i], out)
        this.tail = ((this.tail << 8) | buf[i]) & 0xffffff
        // A byte dropped, or read inside a sequence, begins no character the terminal decodes.
        const text = this.seq === sequence.TEXT && this.state !== DROPPING && this.state !== AFTER_ESC
        this.textBytes = text ? Math.min(3, this.textBytes + 1) : 0
        i++
      } while (i < buf.length && this.state !== GROUND)
      // Begun here and nothing dropped or held back: the bytes as they came, left in the slice.
      if (fresh && asCame(out, buf, start, i)) continue
      if (start > copyFrom) parts.push(buf.subarray(copyFrom, start))
      if (out.length) parts.push(Buffer.from(out))
      copyFrom = i
    }
    // The last three bytes stand at the chunk's end already (each path above took them in).
    if (parts.length === 0 && copyFrom === 0) return buf
    if (copyFrom < buf.length) parts.push(buf.subarray(copyFrom))
    return parts.length === 1 ? parts[0] : Buffer.concat(parts)
  }

  /**
   * Whether `buf` passes as it is, read from the ground state, the guard's state then taken past
   * it: text only (ASCII, whole UTF-8 characters) read in text, judged without reading it byte by
   * byte (./plain-text); or no OSC, APC or DCS begun in it (coloured output, ESC [ only), asked
   * on the way through its sequences. `changes`: this chunk's (./sequence-state).
   */
  passesWhole(buf, changes) {
    if (this.state !== GROUND) return false
    if (this.seq === sequence.TEXT && passesAsText(buf, this.tail, this.textBytes)) {
      this.textBytes = Math.min(3, this.textBytes + buf.length)
      this.remember(buf, 0, buf.length)
      return true
    }
    if (!noEightBitIntroducer(buf)) return false
    const after = sequence.advance(this.seq, buf, 0, buf.length, this.tail, this.textBytes, changes, opensString)
    if (after < 0) return false
    this.seq = after >> 2
    this.textBytes = after & 3
    this.remember(buf, 0, buf.length)
    return true
  }

  step(b, out) {
    switch (this.state) {
      case GROUND:
        if (b === ESC) {
          this.state = AFTER_ESC
          this.held = [b]
        } else if ((b === OSC8 || b === APC8 || b === DCS8) && !this.continuesCharacter()) {
          if (b === OSC8) this.beginNumber([b])
          else this.drop()
        } else {
          out.push(b)
          // The bytes before as the terminal read them in text: ESC E2 9E is a PM to WezTerm, the
          // E2 ignored in its escape state and dropped here (found by gperf37).
          this.seq = sequence.next(this.seq, b, sequence.textTail(this.tail, this.textBytes))
        }
        return
      case AFTER_ESC:
        if (b === 0x5d) return this.beginNumber([...this.held, b])
        if (b === 0x5f || b === 0x50) return this.drop()
        if (insideEscape(b)) return this.holdInsideEscape(b, out)
        if (b === ESC || (b >= 0x80 && b <= 0x9f)) {
          // Another ESC, or a C1 byte (the 8-bit OSC among them), makes a terminal drop the ESC it
          // holds; written, it would stay open before what may be dropped next and meet the bytes
          // after that (ESC ESC ]52;c;x BEL ]52;... reached the terminal as ESC ]52;...: mode37).
          // The C0 controls held with it are executed the same without it.
          out.push(...this.held.filter((c) => c < 0x20 && c !== ESC))
          this.held = []
          this.state = GROUND
          return this.step(b, out)
        }
        out.push(...this.held)
        this.held = []
        this.state = GROUND
        this.seq = sequence.next(this.seq, ESC, this.tail)
        return this.step(b, out)
      case NUMBER:
        return this.number(b, out)
      default:
        // Dropping a string up to its end (an OSC of DROPPED, an APC, a DCS); an ESC may begin what
        // follows (a terminal leaves the string at an ESC too: what comes after is read afresh).
        if (b === ESC) {
          this.state = AFTER_ESC
          this.held = [b]
        } else if (b === BEL || b === ST8 || b === CAN || b === SUB) this.state = GROUND
    }
  }

  /**
   * A C0 control (executed) or DEL (ignored) after ESC: the terminal stays in its escape state, so
   * ESC NUL ] is an OSC. Held with the ESC; past the bound the controls go out ahead of the ESC
   * (the terminal executes them the same there), so what is held stays bounded.
   */
  holdInsideEscape(b, out) {
    this.held.push(b)
    if (this.held.length <= MAX_NUMBER_BYTES) return
    out.push(...this.held.slice(1))
    this.held = [ESC]
  }

  /** Whether the byte being read continues a UTF-8 character: in text, after a lead byte waiting for it. */
  continuesCharacter() {
    return this.seq === sequence.TEXT && insideCharacter(sequence.textTail(this.tail, this.textBytes))
  }

  /** The terminal's state after the plain run `buf[from, to)` (./sequence-state); `changes`: this chunk's. */
  advanceText(buf, from, to, changes) {
    const after = sequence.advance(this.seq, buf, from, to, this.tail, this.textBytes, changes)
    this.seq = after >> 2
    this.textBytes = after & 3
  }

  /**
   * The bytes of `buf` before `end` as the last that went by; `from`: where the last three stand
   * already. Taking bytes in twice lost a character's lead byte (E2 | 90 9F: the 9F taken for an
   * APC and the text after it dropped; found by gperf37).
   */
  remember(buf, from, end) {
    for (let k = Math.max(from, end - 3); k < end; k++) this.tail = ((this.tail << 8) | buf[k]) & 0xffffff
  }

  beginNumber(held) {
    // The terminal reads an OSC string from here (if it gets it): UTF-8 decoded afresh.
    this.seqBefore = this.seq
    this.seq = sequence.TEXT
    this.textBytes = 0
    this.state = NUMBER
    this.held = held
    this.value = 0
    this.kittyValue = 0
    this.kittyDigits = 0
  }

  number(b, out) {
    if (b >= 0x30 && b <= 0x39) {
      this.value = Math.min(this.value * 10 + (b - 0x30), 1e9)
      if (this.kittyDigits < KITTY_DIGITS) {
        this.kittyValue = this.kittyValue * 10 + (b - 0x30)
        this.kittyDigits++
      }
      this.held.push(b)
    } else if (b === 0x3b) {
      if (this.dropsNumber()) return this.drop()
      return this.release(b, out)
    } else if (b === ST8) {
      // A bare ST ends the string for WezTerm, with the number read so far; Windows Terminal
      // decodes UTF-8 first (a lone 9C is U+FFFD) and ignores C1 controls it is not asked to
      // accept, and reads on: ESC ] 9C 52;c;... is OSC 52 there (found by gperf37). So the string
      // is dropped if its number so far is, and read on as Windows Terminal reads it if not.
      if (!this.continuesCharacter() && this.dropsNumber()) return this.drop()
      this.held.push(b)
      this.kittyDigits = KITTY_DIGITS
    } else if (endsString(b)) {
      // Ended right after its number: nothing to drop but the introducer and the number, which
      // go too when the number is a dropped one (kitty takes ESC ]52c BEL for OSC 52 already).
      if (!this.dropsNumber()) return this.release(b, out)
      this.forget()
      this.state = GROUND
      if (b === ESC) this.step(b, out)
    } else if (leavesString(b) && !this.continuesCharacter()) {
      // A bare 8-bit introducer begins a string of its own on a DEC parser (WezTerm), from any
      // state; Windows Terminal would skip it and read on. Either way the string so far is never
      // written (no terminal sees its ESC ]), and the byte is read as the introducer it is. So is
      // a bare 8-bit CSI, SOS or PM: WezTerm leaves the OSC for that sequence, where it decodes no
      // UTF-8 (ESC ]0 9B E2 90 begins a DCS at the 90; found by gperf37).
      this.forget()
      this.state = GROUND
      return this.step(b, out)
    } else {
      // Any other byte is skipped inside the number: tmux skips C0 controls, Windows Terminal
      // every byte up to ';' or the end (its _EventOscParam ignores them), so ESC ]5X2; is OSC 52
      // there (mode37). kitty's number ends at it, and kitty takes the rest for the string.
      this.held.push(b)
      this.kittyDigits = KITTY_DIGITS
    }
    if (this.held.length > MAX_NUMBER_BYTES) this.drop()
  }

  /** The number read so far is one to drop, as the terminals named above read it. */
  dropsNumber() {
    return DROPPED.has(this.value) || DROPPED.has(this.kittyValue)
  }

  /** Not a string to drop: what was held goes out, and `b` is read from the ground state. */
  release(b, out) {
    out.push(...this.held)
    // Ended by an ESC, it is closed here with BEL: that ESC may yet be dropped, with a string it
    // begins (ESC ]0 ESC ]52;c;x BEL) or before another ESC or a C1 byte, and the terminal, never
    // told the string ended, read the text after as its number (52;c;<base64> BEL: ESC ]052;...,
    // OSC 52 to kitty, Windows Terminal and xterm; found by gperf37). The ST such an ESC may begin
    // is then a stray one, which terminals ignore.
    if (b === ESC) out.push(BEL)
    this.held = []
    this.state = GROUND
    this.seq = sequence.TEXT // an OSC string, which decodes UTF-8 as text does
    this.textBytes = 0
    return this.step(b, out)
  }

  drop() {
    this.forget()
    this.state = DROPPING
  }

  /**
   * The string read so far goes unwritten, its introducer (and the ESC before it) with it: no
   * terminal sees a byte of it, so each stays where it was before it. Read as written, an OSC
   * left the guard in text after it, while a terminal still in the CSI or SOS begun before read
   * C3 90 there as an ignored byte and a DCS (ESC [ ESC ]52;c;x BEL C3 90tmux;... in WezTerm;
   * found by gperf37).
   */
  forget() {
    if (this.state === NUMBER) this.seq = this.seqBefore
    this.held = []
  }
}


/** Whether `out` is `buf[start, end)` as it came (nothing held back, dropped or added: a BEL). */
function asCame(out, buf, start, end) {
  if (out.length !== end - start) return false
  for (let k = 0; k < out.length; k++) if (out[k] !== buf[start + k]) return false
  return true
}

/** A bare C1 byte that takes a DEC parser out of an OSC into a string or sequence of its own. */
function leavesString(b) {
  return b === OSC8 || b === APC8 || b === DCS8 || b === 0x9b || b === 0x98 || b === 0x9e
}

/** A byte that ends (BEL, ST, and ESC's ST) or cuts off (CAN, SUB) the string it is in. */
function endsString(b) {
  return b === BEL || b === ESC || b === ST8 || b === CAN || b === SUB
}

/**
 * A byte that leaves a terminal's parser in its escape state: a C0 control but CAN, SUB, ESC; DEL;
 * and a byte from A0 up, which WezTerm's escape state ignores (ESC A9 _ is an APC there: mode37).
 */
function insideEscape(b) {
  return (b < 0x20 && b !== CAN && b !== SUB && b !== ESC) || b === 0x7f || b >= 0xa0
}

/**
 * Whether the ESC at `buf[at]` may begin an OSC, APC or DCS, or be left open: followed by ], _ or P,
 * by a byte that keeps the escape going (ESC NUL ] is an OSC), or by nothing in this chunk.
 */
function opensString(buf, at) {
  if (at + 1 >= buf.length) return true
  const b = buf[at + 1]
  return b === 0x5d || b === 0x5f || b === 0x50 || insideEscape(b)
}

/** Whether no 8-bit OSC, APC or DCS byte is in `buf`. */
function noEightBitIntroducer(buf) {
  return isAscii(buf) || (buf.indexOf(OSC8) < 0 && buf.indexOf(APC8) < 0 && buf.indexOf(DCS8) < 0)
}

module.exports = { ClipboardGuard }
