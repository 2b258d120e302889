'use strict'
// A host FIFO outside every writable root: a read-only mount refuses writing regular files only,
// so the sandbox's read-only view let a command open a host FIFO for writing (feeding a host
// program's control pipe, e.g. /run/initctl) or O_RDWR (taking what host writers meant for its
// reader) until the helper's Landlock guard (found by an attacker's review). FIFOs in the
// workspace and the sandbox's own devices keep working.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { tempTree, show, sh, q } = require('./helpers')

/** A FIFO in `dir` with a host reader that never blocks (O_RDWR), and what reached it so far. */
function hostFifo(t, dir) {
  const fifo = path.join(dir, 'control.fifo')
  execFileSync('mkfifo', ['-m', '666', fifo])
  const fd = fs.openSync(fifo, fs.constants.O_RDWR | fs.constants.O_NONBLOCK)
  t.after(() => fs.closeSync(fd))
  const received = () => {
    const buf = Buffer.alloc(4096)
    try {
      return buf.subarray(0, fs.readSync(fd, buf)).toString()
    } catch (err) {
      if (err.code === 'EAGAIN') return ''
      throw err
    }
  }
  return { fifo, received }
}

for (const sandbox of ['read-only', 'workspace-write']) {
  describe(`host FIFOs (${sandbox})`, () => {
    test('a FIFO outside the writable roots opens neither for writing nor O_RDWR', async (t) => {
      const tree = tempTree(t)
      const { fifo, received } = hostFifo(t, tree.out)
      const script = [
        `if ( echo written-from-sandbox > ${q(fifo)} ); then echo ESCAPED write; else echo denied write; fi`,
        `if ( exec 3<> ${q(fifo)} ); then echo ESCAPED rdwr; else echo denied rdwr; fi`,
        // The sandbox's own devices and its stdio still open for writing by path.
        'echo null > /dev/null && echo ok null',
        'echo err > /dev/stderr && echo ok stderr',
      ].join('\n')
      const r = await sh(script, { cwd: tree.ws, sandbox })
      assert.equal(r.sandboxType, 'bwrap', show(r))
      assert.match(r.stdout, /denied write\n/, show(r))
      assert.match(r.stdout, /denied rdwr\n/, show(r))
      assert.match(r.stdout, /ok null\nok stderr\n/, show(r))
      assert.match(r.stderr, /Permission denied/, show(r))
      assert.equal(received(), '', 'nothing reaches the host reader')
      assert.ok(!r.sandboxDetails.notEnforced.some((s) => s.startsWith('host-fifos')), show(r))
    })
  })
}

// The guard is a Landlock domain, and every domain refuses reparenting (a rename or hard link into
// another directory) unless a rule grants it: the writable mounts do (found by the tool caches'
// `cp -al`, refused EXDEV at first).
test('FIFOs, renames and hard links across directories in the workspace and /tmp still work (workspace-write)', async (t) => {
  const tree = tempTree(t)
  const script = [
    'mkdir a b && touch a/f && mv a/f b/f && ln b/f a/g && echo moved',
    'd=$(mktemp -d /tmp/sandspawn-mv-XXXXXX) && mkdir "$d/a" "$d/b" && touch "$d/a/f" && mv "$d/a/f" "$d/b/" && ln "$d/b/f" "$d/a/g" && rm -rf "$d" && echo moved-tmp',
    'mkfifo ws.fifo && { cat ws.fifo & } && echo through-ws > ws.fifo && wait',
    'f=$(mktemp -u /tmp/sandspawn-fifo-XXXXXX) && mkfifo "$f" && { cat "$f" & } && echo through-tmp > "$f" && wait; rm -f "$f"',
  ].join('\n')
  const r = await sh(script, { cwd: tree.ws, sandbox: 'workspace-write' })
  assert.equal(r.exitCode, 0, show(r))
  assert.equal(r.stdout, 'moved\nmoved-tmp\nthrough-ws\nthrough-tmp\n', show(r))
})
