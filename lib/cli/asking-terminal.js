'use strict'
// Whether the CLI may ask the user something (--ask: run again without the sandbox, allow a host;
// --review: apply the change set). Its questions are written on stderr and their answers read from
// the terminal on stdin (or /dev/tty). Both must be the one terminal: with stderr elsewhere
// (`2>/dev/null`, `2>err.log`) the question and what it is about went where nobody saw them, while
// the keys typed on the terminal still answered it, and what the command printed on stdout was
// all there was to read. A command whose last words were its own prompt ("Type yes to
// continue:", "Continue? [y/N]", "[a]rchive or [d]elete?") had the answer meant for it run it
// again without the sandbox, allow a host, or apply a change set never shown (found by an
// attacker's review, mode29). The guard against keys typed before a question appeared
// (./type-ahead) counts on the question being on the screen.

const fs = require('node:fs')
const { isatty } = require('node:tty')

/** `/dev/tty`'s device number (5, 0) as fstat gives it: a descriptor of it names no terminal itself. */
const DEV_TTY = 5 << 8

/**
 * The controlling terminal's device number, as fstat gives a terminal's: Linux says it in
 * /proc/self/stat (`tty_nr`, after the command's name, which is in parentheses and may hold any
 * character). Null where that cannot be read, or there is none.
 */
function controllingTerminal() {
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8')
    const ttyNr = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[4])
    return ttyNr > 0 ? ttyNr : null
  } catch {
    return null
  }
}

/** The terminal behind descriptor `fd` (its device number; /dev/tty's is the controlling one), or null. */
function terminalOf(fd) {
  try {
    const st = fs.fstatSync(fd)
    if (!st.isCharacterDevice()) return null
    return st.rdev === DEV_TTY ? controllingTerminal() : st.rdev
  } catch {
    return null
  }
}

/**
 * Why the CLI cannot ask here, in words for its `not asking` line, or null when it can: stdin
 * (where the answer is read) and stderr (where the question is shown) are one terminal.
 */
function whyNotAsking() {
  if (!isatty(0)) return 'stdin is not a terminal'
  if (!isatty(2)) return 'stderr is not the terminal, so its question would not be seen'
  const shown = terminalOf(2)
  if (shown === null || terminalOf(0) !== shown) return 'stderr is not the terminal stdin is, so its question would not be seen there'
  return null
}

/**
 * Whether /dev/tty (where `--review`'s question reads its answer: stdin is gone by then) opens the
 * terminal stderr shows. Where the controlling terminal cannot be told (no /proc), stdin's
 * terminal stands for it (`whyNotAsking` checked that one).
 */
function controllingShowsOnStderr() {
  if (!isatty(2)) return false
  const ctty = controllingTerminal()
  return ctty === null ? whyNotAsking() === null : ctty === terminalOf(2)
}

module.exports = { whyNotAsking, controllingShowsOnStderr }
