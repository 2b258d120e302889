'use strict'
// While the command runs in a pty of its own, our terminal shows bytes that pty's line discipline
// has already processed (its `\n` is `\r\n` by then). Node's raw mode keeps output processing on
// (ONLCR), which turned them into `\r\r\n`: invisible on a screen, but in a log of the terminal
// (script(1), asciinema, a CI log of a pty) every line ended in two carriage returns. So output
// processing is off for the run, as script and ssh have it, and the terminal's exact settings come
// back afterwards. Node has no termios API: stty(1) does it, given our terminal as its stdin.

const { spawnSync } = require('node:child_process')
const fs = require('node:fs')

// By absolute path, never looked up in PATH: the host runs it, and a PATH that names a directory a
// sandboxed run may write (`npm run` puts the workspace's node_modules/.bin first) would run an
// `stty` a run planted there, unsandboxed.
const STTY = ['/bin/stty', '/usr/bin/stty'].find((p) => fs.existsSync(p))

/**
 * Turn output processing off on the terminal at `fd`; returns the (idempotent) restore, also run
 * if the CLI exits first. Without a working stty the output stays processed (as before).
 */
function outputProcessingOff(fd) {
  if (!STTY) return () => {}
  const stty = (args) => spawnSync(STTY, args, { stdio: [fd, 'pipe', 'ignore'], encoding: 'utf8', timeout: 5000 })
  const saved = stty(['-g'])
  const settings = saved.status === 0 ? saved.stdout.trim() : ''
  if (!settings || stty(['-opost']).status !== 0) return () => {}
  let restored = false
  const restore = () => {
    if (restored) return
    restored = true
    process.off('exit', restore)
    stty([settings])
  }
  process.on('exit', restore)
  return restore
}

module.exports = { outputProcessingOff }
