'use strict'
// What the CLI writes before its own lines that follow the command's output on a terminal: the
// command's output reaches the screen unfiltered, and may leave the terminal in a state that hides
// or disguises what comes next. An unterminated window-title string (ESC ]2;) swallows every
// character up to a BEL, and a "conceal" attribute (ESC [8m) makes text invisible: a run that
// printed a question of its own and then one of those had the user answer it, while sandspawn's
// real question ("allow 127.0.0.9:41241?", "Run again without the sandbox?") was on the screen
// unseen (found by an attacker's review).
//
// CAN ends any control sequence or string in progress (the DEC parser's "anywhere" transition),
// ST ends a string on terminals that wait for one, SGR 0 makes text visible in the default colours,
// and G0 = ASCII invoked into GL undoes a line-drawing character set. Two modes are set back to
// what every terminal starts with: autowrap (with it off, the end of a long line is cut at the
// screen's edge: the domain at the end of a long host name, the `[y/N/a]`, the file a warning names)
// and a visible cursor (it shows where the real question is). Last, the scroll region is made the
// whole screen again: confined to two rows (DECSTBM), each of sandspawn's lines scrolled the one
// before out of sight, and a review listing or the host-risk warnings were lost but for their last
// line (found by a review of this reset). Setting the region homes the cursor, so it is saved
// before and put back after (DECSC, DECRC). Nothing here moves the cursor (a soft reset, DECSTR,
// would also turn autowrap off).

const RESET = '\x18\x1b\\\x1b[0m\x1b(B\x0f\x1b[?7h\x1b[?25h\x1b7\x1b[r\x1b8'

// The default colours themselves can be redefined (OSC 10/11: foreground and background, 12 the
// cursor's, 17/19 the selection's, 4/5 palette entries, which are the default colours on some
// terminals): black on black hid the real question as well (found by a review of this reset). They
// are set back (OSC 110...119, 104, 105) after output that held any OSC at all, whatever its number:
// terminals read the number as an integer and tmux skips C0 characters inside it, so ESC ]010; and
// ESC ]1^A0; redefine the foreground as ESC ]10; does, and a check of the number's spelling let a
// run through (found by an attacker's review). Only then, since a user's own theme may have set
// them too (base16-shell does): a run that printed a title or a hyperlink resets that theme.
// The 8-bit OSC as UTF-8 (C2 9D) or as a byte of its own after ASCII: a 9D inside another UTF-8
// character (the curly quote E2 80 9D) is not one.
const ANY_OSC = /\x1b\]|\xc2\x9d|(?:^|[\x00-\x7f])\x9d/
const COLOUR_RESET = '\x1b]110\x07\x1b]111\x07\x1b]112\x07\x1b]117\x07\x1b]119\x07\x1b]104\x07\x1b]105\x07'

let coloursRedefined = false
let tail = ''

/**
 * Note what the command's output (`data`, a Buffer or string) did to the terminal's colours. On
 * the CLI's output path: once redefined nothing more is learnt, and a chunk without ESC or OSC is
 * looked at only where it joins the last one (a sequence split between chunks).
 */
function observe(data) {
  if (coloursRedefined) return
  const buf = Buffer.isBuffer(data) ? data : Buffer.from(data)
  const escapes = buf.indexOf(0x1b) >= 0 || buf.indexOf(0x9d) >= 0
  if (ANY_OSC.test(tail + (escapes ? buf : buf.subarray(0, 1)).toString('latin1'))) coloursRedefined = true
  tail = buf.subarray(-1).toString('latin1')
}

/** The reset to write before sandspawn's own text on `stream`: only where that is a terminal. */
function terminalReset(stream = process.stderr) {
  if (!stream || !stream.isTTY) return ''
  return RESET + (coloursRedefined ? COLOUR_RESET : '')
}

module.exports = { terminalReset, observe, RESET, COLOUR_RESET }
