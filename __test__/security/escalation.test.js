'use strict'
// runWithEscalation must never drop the sandbox when it should not: not for a denyRead policy,
// not for an ordinary failure or a timeout, and not when approve() throws or says anything but true.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { sandspawn, tempTree, token, show } = require('./helpers')

const { runWithEscalation } = sandspawn

/**
 * The `changes` approve is given for `command` in `cwd` (workspace-write), refused. Waits first, so
 * that what the test wrote is older than the 100 ms before the start that the walk also reports
 * (the coarse clock's slack).
 */
async function changesRefused(command, cwd) {
  await new Promise((resolve) => setTimeout(resolve, 300))
  let request
  const r = await runWithEscalation(command, {
    cwd,
    sandbox: 'workspace-write',
    approve: (req) => {
      request = req
      return false
    },
  })
  assert.equal(r.escalated, false, show(r))
  assert.ok(request, `approve was not asked: ${show(r)}`)
  assert.ok(request.changes, `approve got no changes: ${Object.keys(request)}`)
  return request.changes
}

describe('escalation', { concurrency: 4 }, () => {
  test('a denyRead policy is never escalated, even when approve says yes', async (t) => {
    const tree = tempTree(t)
    const secret = path.join(tree.out, 'secret.txt')
    const tok = token('ESC')
    fs.writeFileSync(secret, `${tok}\n`)
    let asked = 0
    const r = await runWithEscalation(['bash', '-c', `cat ${secret}; echo x > ${tree.out}/w`], {
      cwd: tree.ws,
      sandbox: { mode: 'workspace-write', denyRead: [secret] },
      approve: () => {
        asked++
        return true
      },
      timeout: 10000,
    })
    assert.equal(r.escalated, false)
    assert.equal(asked, 0, 'approve was called for a denyRead policy')
    assert.ok(!r.aggregatedOutput.includes(tok), `secret leaked\n${show(r)}`)
    assert.equal(fs.existsSync(path.join(tree.out, 'w')), false)
  })

  test('an ordinary failure and a timeout are not escalated', async (t) => {
    const tree = tempTree(t)
    let asked = 0
    const approve = () => {
      asked++
      return true
    }
    const fail = await runWithEscalation(['bash', '-c', 'echo nope >&2; exit 3'], { cwd: tree.ws, approve })
    assert.equal(fail.escalated, false)
    assert.equal(fail.exitCode, 3)
    const slow = await runWithEscalation(['bash', '-c', `echo x > ${tree.out}/timeout; sleep 5`], { cwd: tree.ws, approve, timeout: 200 })
    assert.equal(slow.escalated, false)
    assert.equal(slow.timedOut, true)
    assert.equal(asked, 0)
    assert.equal(fs.existsSync(path.join(tree.out, 'timeout')), false)
  })

  test('approve throwing, rejecting or answering a truthy non-true value is a refusal', async (t) => {
    const tree = tempTree(t)
    const target = path.join(tree.out, 'escalated')
    for (const approve of [
      () => {
        throw new Error('no')
      },
      () => Promise.reject(new Error('no')),
      () => 'yes',
      () => 1,
      () => ({}),
    ]) {
      const r = await runWithEscalation(['bash', '-c', `echo x > ${target}`], { cwd: tree.ws, approve })
      assert.equal(r.escalated, false, String(approve))
      assert.notEqual(r.exitCode, 0)
      assert.equal(fs.existsSync(target), false, `escalated with ${approve}`)
    }
  })

  test('control: a real denial with approve() === true runs unsandboxed once', async (t) => {
    const tree = tempTree(t)
    const target = path.join(tree.out, 'escalated')
    let request
    const r = await runWithEscalation(['bash', '-c', `echo x > ${target}`], {
      cwd: tree.ws,
      approve: (req) => {
        request = req
        return true
      },
    })
    assert.equal(r.escalated, true, show(r))
    assert.equal(r.sandboxType, 'none')
    assert.ok(request && request.denial, 'approve got no denial')
    assert.equal(fs.readFileSync(target, 'utf8'), 'x\n')
  })

  test('approve is told what the sandboxed attempt changed: a script that rewrote itself before a forged denial', async (t) => {
    // The first attempt of `sh build.sh` rewrites build.sh (its own code for the retry), prints a
    // plausible denial on a system path and fails; approved, the retry would run the new build.sh
    // as the user. The approver must see that build.sh changed, and that the command names it.
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'ran-unsandboxed')
    const script = path.join(tree.ws, 'build.sh')
    fs.writeFileSync(script, [
      '#!/bin/sh', 'echo building...',
      `cat > build.sh <<EOS`, '#!/bin/sh', `id > ${marker}`, 'echo build ok', 'EOS',
      "echo \"cp: cannot create regular file '/usr/local/lib/libfoo.so': Permission denied\" >&2", 'exit 1', '',
    ].join('\n'))
    fs.writeFileSync(path.join(tree.ws, 'untouched.txt'), 'x\n')
    const changes = await changesRefused(['sh', 'build.sh'], tree.ws)
    assert.deepEqual(changes.paths, [script], JSON.stringify(changes))
    assert.deepEqual(changes.commandFiles, [script])
    assert.equal(changes.truncated, false)
    assert.equal(fs.existsSync(marker), false)
  })

  // Found by an attacker's review: with `run.sh -> tools/run.sh` (a common layout), `sh run.sh`
  // rewrote tools/run.sh and forged a denial; approve was told tools/run.sh changed, but not that
  // the command runs it (the argv path was compared as typed), so the CLI gave no warning.
  test('approve is told that the command runs a file it changed through a symlink the argv names', async (t) => {
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'ran-unsandboxed')
    const target = path.join(tree.ws, 'tools', 'run.sh')
    fs.mkdirSync(path.dirname(target))
    fs.writeFileSync(target, [
      '#!/bin/sh', `printf '#!/bin/sh\nid > ${marker}\n' > tools/run.sh`,
      "echo \"cp: cannot create regular file '/usr/local/lib/libfoo.so': Permission denied\" >&2", 'exit 1', '',
    ].join('\n'))
    fs.symlinkSync('tools/run.sh', path.join(tree.ws, 'run.sh'))
    const changes = await changesRefused(['sh', 'run.sh'], tree.ws)
    assert.deepEqual(changes.paths, [target], JSON.stringify(changes))
    assert.deepEqual(changes.commandFiles, [target], JSON.stringify(changes))
    assert.equal(fs.existsSync(marker), false)
  })

  // Found by an attacker's review (mode34): `sh link/../build.sh` (link -> sub/deeper) runs
  // sub/build.sh, but the argv path was made absolute by path.resolve, which drops `link/..` as
  // text: the command's file was taken to be ws/build.sh, so approve (and the CLI's warning) was not
  // told that the command runs the sub/build.sh the attempt rewrote.
  test('approve is told that the command runs a file it changed, named with .. after a symlink', async (t) => {
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'ran-unsandboxed')
    const sub = path.join(tree.ws, 'sub')
    fs.mkdirSync(path.join(sub, 'deeper'), { recursive: true })
    fs.symlinkSync('sub/deeper', path.join(tree.ws, 'link'))
    const target = path.join(sub, 'build.sh')
    fs.writeFileSync(target, [
      '#!/bin/sh', `printf '#!/bin/sh\nid > ${marker}\n' > sub/build.sh`,
      "echo \"cp: cannot create regular file '/usr/local/lib/libfoo.so': Permission denied\" >&2", 'exit 1', '',
    ].join('\n'))
    // A plain ws/build.sh the attempt leaves alone: what the text's path names.
    fs.writeFileSync(path.join(tree.ws, 'build.sh'), 'echo top\n')
    const changes = await changesRefused(['sh', 'link/../build.sh'], tree.ws)
    assert.deepEqual(changes.paths, [target], JSON.stringify(changes))
    assert.deepEqual(changes.commandFiles, [target], JSON.stringify(changes))
    assert.equal(fs.existsSync(marker), false)
  })

  // Found by an attacker's review: a directory made unreadable to the user (root reads any) hid
  // what changed below it, and approve was told nothing changed.
  test('approve is told of a directory the attempt made unreadable, and that the list is incomplete', { skip: process.getuid() === 0 && 'root lists any directory: needs an ordinary user (the CI runs this suite as one)' }, async (t) => {
    const tree = tempTree(t)
    const lib = path.join(tree.ws, 'lib')
    fs.mkdirSync(lib)
    fs.writeFileSync(path.join(lib, 'helper.sh'), 'echo helper\n')
    fs.writeFileSync(path.join(tree.ws, 'build.sh'), '#!/bin/sh\n. ./lib/helper.sh\necho "echo rewritten" > lib/helper.sh\nchmod 300 lib\necho "cp: cannot create regular file \'/usr/local/lib/libfoo.so\': Permission denied" >&2\nexit 1\n')
    await new Promise((resolve) => setTimeout(resolve, 300))
    let request
    try {
      await runWithEscalation(['sh', 'build.sh'], {
        cwd: tree.ws,
        sandbox: 'workspace-write',
        approve: (req) => {
          request = req
          return false
        },
      })
    } finally {
      fs.chmodSync(lib, 0o700)
    }
    assert.ok(request && request.changes, 'approve was asked, with changes')
    assert.ok(request.changes.paths.includes(lib), JSON.stringify(request.changes))
    assert.equal(request.changes.truncated, true)
  })
})
