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

/** The terminal device behind descriptor `fd` (its rdev), or null when it cannot be told. */
function terminalOf(fd) {
  try {
    const st = fs.fstatSync(fd)
    return st.isCharacterDevice() ? st.rdev : null
  } catch {
    return null
  }
}

/** Whether descriptor `fd` (the terminal the answer is read from) is the terminal stderr shows. */
function showsOnStderr(fd) {
  const here = terminalOf(fd)
  return here !== null && isatty(2) && here === terminalOf(2)
}

/**
 * Whether the controlling terminal (what /dev/tty opens: a descriptor of it stats as /dev/tty
 * itself, 5:0) is the terminal stderr shows. Linux tells it in /proc/self/stat (`tty_nr`, the
 * device number as fstat gives it); where that cannot be read, stdin's terminal stands for it
 * (`whyNotAsking` checked that one).
 */
function controllingShowsOnStderr() {
  let stat
  try {
    stat = fs.readFileSync('/proc/self/stat', 'utf8')
  } catch {
    return showsOnStderr(0)
  }
  // The fields after the command's name, which is in parentheses and may hold any character.
  const ttyNr = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[4])
  return isatty(2) && ttyNr !== 0 && ttyNr === terminalOf(2)
}

/**
 * Why the CLI cannot ask here, in words for its `not asking` line, or null when it can: stdin
 * (where the answer is read) and stderr (where the question is shown) are one terminal.
 */
function whyNotAsking() {
  if (!isatty(0)) return 'stdin is not a terminal'
  if (!isatty(2)) return 'stderr is not the terminal, so its question would not be seen'
  if (!showsOnStderr(0)) return 'stderr is not the terminal stdin is, so its question would not be seen there'
  return null
}

module.exports = { whyNotAsking, controllingShowsOnStderr }
