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
// and a visible cursor (it shows where the real question is); left and right margins are turned
// off (DECLRMM, mode 69: with it on, a command's DECSLRM one column wide squeezed each of
// sandspawn's lines into that column on xterm, WezTerm and iTerm2; found by an attacker's review). Last, the scroll region is made the
// whole screen again: confined to two rows (DECSTBM), each of sandspawn's lines scrolled the one
// before out of sight, and a review listing or the host-risk warnings were lost but for their last
// line (found by a review of this reset). Setting the region homes the cursor, so it is saved
// before and put back after (DECSC, DECRC). Nothing here moves the cursor (a soft reset, DECSTR,
// would also turn autowrap off), but for leaving the alternate screen (below).
//
// The alternate screen (ESC [?1049h, ?1047h, ?47h) has no scrollback: a review listing or warnings
// longer than the screen were lost above its top, and all of them vanished when the terminal left
// it later (found by a review of this reset). Leaving it blindly is not safe: ESC [?1049l also
// puts the cursor back where it was saved, on tmux the place an earlier full-screen program (long
// gone) entered it even when the terminal is not on the alternate screen now, and the erase below
// sandspawn's fresh line then wiped the user's screen. Entering it first makes the pair leave
// nothing changed when it is off (the cursor saved is where it is), and when it is on leave it for
// the place the command entered it (tmux and xterm.js: enter is a no-op there); checked in both
// for each of ?1049l, ?1047l, ?47l and the pair, and only the pair lost nothing in every case.
// It comes first: leaving restores the attributes and character set saved on entering.
const LEAVE_ALTERNATE_SCREEN = '\x1b[?1049h\x1b[?1049l'
// What the user's keys send and how their echo looks, as every terminal starts (found by a review
// of this reset): bracketed paste off (2004; "yes" pasted at the question was read as ESC[200~yes
// ESC[201~), mouse reporting off in every protocol and encoding (9, 1000-1003, 1005, 1006, 1015,
// 1016; a mouse move sent bytes that answered the network question, which takes the first key),
// focus reports off (1004; clicking the terminal to answer sent ESC [I, the same), the keypad
// numeric (DECKPNM; its Enter sent ESC O M and ended no line) and insert mode off (IRM; the echo
// of a Backspace, BS SP BS, pushed the erased letter right instead of blanking it).
const INPUT_MODES = '\x1b[?9;1000;1001;1002;1003;1004;1005;1006;1015;1016;2004l\x1b>\x1b[4l'

// A hyperlink the command began (OSC 8 with a URI) and never ended outlives all of the above:
// every later character is part of its link, so a click on the path a warning of sandspawn's
// names, or on its question, opened where the command chose (a decoy file for the hook the
// warning names); found by an attacker's review (mode30), in xterm.js (VS Code's terminal). An
// OSC 8 with no URI ends it; a terminal without hyperlinks ignores the string. After leaving the
// alternate screen, which may restore attributes saved when the command entered it.
const END_HYPERLINK = '\x1b]8;;\x1b\\'

// Synchronized output (mode 2026, "begin synchronized update") left on by the command: the
// terminal draws nothing new until it is turned off, so sandspawn's question was not on the screen
// when the user's key came, and a key pressed for what was last drawn answered it; found by an
// attacker's review (mode30). xterm.js (VS Code's terminal) gives up after a second, other
// terminals (kitty, WezTerm, foot, Windows Terminal...) after their own timeout. Ended first of the
// modes, so what follows is drawn as it comes; a terminal without the mode ignores it.
const END_SYNCHRONIZED_OUTPUT = '\x1b[?2026l'

const RESET = `\x18\x1b\\${END_SYNCHRONIZED_OUTPUT}${LEAVE_ALTERNATE_SCREEN}${END_HYPERLINK}\x1b[0m\x1b(B\x0f\x1b[?7h\x1b[?25h\x1b[?69l${INPUT_MODES}\x1b7\x1b[r\x1b8`

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
// Whether the command's output reached the screen since sandspawn's last line began (see
// freshLine()), and whether its last byte was LF.
let outputSince = false
let endedWithNewline = true

/**
 * Note that the command's output (`data`, a Buffer or string) reached the screen, and what it did
 * to the terminal's colours. On
 * the CLI's output path: once redefined nothing more is learnt, and a chunk without ESC or OSC is
 * looked at only where it joins the last one (a sequence split between chunks).
 */
function observe(data) {
  if (data.length === 0) return
  outputSince = true
  endedWithNewline = (typeof data === 'string' ? data.charCodeAt(data.length - 1) : data[data.length - 1]) === 0x0a
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

// Where a line of sandspawn's begins after the command's output. Nothing the command wrote may be
// left on that line or after it on the screen: a question followed the command's text on its line
// when the output ended inside an OSC string whose last byte was LF (the terminal ignores that LF,
// but a check of the last byte took it for a line start), and text the command had drawn on the
// line below before moving the cursor back up stayed to the right of the question ("[y/N/a]
// <- this is registry.npmjs.org; press y"): found by an attacker's review. So on a terminal, a
// new line whenever output came since sandspawn's last line (CR too: output processing may be off,
// ./tty-output), whatever its last byte, then the screen erased from there down (ED, ESC [J):
// below sandspawn's own last line only what the command drew there is lost. Not where the output
// is no terminal: nothing is drawn over in a log, and its last byte says where a line starts.
const ERASE_BELOW = '\x1b[J'

/**
 * What to write on `stream` before a line of sandspawn's own (a question, a denial, a warning):
 * the reset, and a fresh line cleared to the end of the screen. The caller writes its line at once
 * and ends it before the command's output goes on.
 */
function freshLine(stream = process.stderr) {
  const after = outputSince
  outputSince = false
  if (!stream || !stream.isTTY) return after && !endedWithNewline ? '\n' : ''
  return terminalReset(stream) + (after ? '\r\n' : '') + ERASE_BELOW
}

module.exports = { terminalReset, freshLine, observe, RESET, COLOUR_RESET, ERASE_BELOW }
