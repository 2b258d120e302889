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
// and G0 = ASCII invoked into GL undoes a line-drawing character set. Nothing here moves the cursor
// or changes the terminal's modes (a soft reset, DECSTR, would also turn off autowrap).

const RESET = '\x18\x1b\\\x1b[0m\x1b(B\x0f'

/** The reset to write before sandspawn's own text on `stream`: only where that is a terminal. */
function terminalReset(stream = process.stderr) {
  return stream && stream.isTTY ? RESET : ''
}

module.exports = { terminalReset, RESET }
