'use strict'
// Found by an attacker's review (root host user): the host followed a run-planted link into the
// host's tracefs and read `trace_pipe`, consuming the host's trace buffer, a read the kernel masks
// stop the command itself from doing: a `pyproject.toml` beside a `.venv` (read by the next run's
// setup, for uv's caches) and a nested repository's `.git/config` (read by the walk after the
// run). A file on a kernel filesystem is never read by the host now (`small_file`). The buffer
// here is a trace instance of the test's own, on a tracefs mounted at a temporary directory, so
// the host's own buffer is never touched; its `trace` file shows the marker without consuming it.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const { execFileSync } = require('node:child_process')
const { tempTree, show, sh, q } = require('./helpers')

const skip = process.getuid() !== 0 && 'mounting a tracefs needs root'

/** A trace instance of its own under a tracefs mounted in `tree.root`, with a marker written. */
function instance(t, tree, name) {
  const mnt = `${tree.root}/tracefs`
  fs.mkdirSync(mnt)
  execFileSync('mount', ['-t', 'tracefs', 'nodev', mnt])
  const dir = `${mnt}/instances/sandspawn-test-${process.pid}-${name}`
  fs.mkdirSync(dir)
  t.after(() => {
    fs.rmdirSync(dir)
    execFileSync('umount', ['-l', mnt])
    // The tree's own removal (`tempTree`, registered first, so run first) stopped at the mount.
    fs.rmSync(tree.root, { recursive: true, force: true })
  })
  const marker = `sandspawn-marker-${process.pid}-${name}`
  fs.writeFileSync(`${dir}/trace_marker`, marker)
  const kept = () => fs.readFileSync(`${dir}/trace`, 'utf8').includes(marker)
  assert.ok(kept(), 'the marker is in the instance before the runs')
  return { pipe: `${dir}/trace_pipe`, kept }
}

describe('the host reads no planted link into a kernel filesystem', { skip, concurrency: 1 }, () => {
  test("a pyproject.toml beside a .venv, read by the next run's setup", async (t) => {
    const tree = tempTree(t)
    const { pipe, kept } = instance(t, tree, 'uv')
    const planted = await sh(`mkdir -p .venv && ln -s ${q(pipe)} pyproject.toml`, { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(planted.exitCode, 0, show(planted))
    const next = await sh('true', { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(next.exitCode, 0, show(next))
    assert.ok(kept(), `the instance's buffer was consumed by the host\n${show(next)}`)
  })

  test("a nested repository's .git/config, read by the walk after the run", async (t) => {
    const tree = tempTree(t)
    const { pipe, kept } = instance(t, tree, 'git')
    const script = `mkdir -p sub/.git/objects sub/.git/refs && echo 'ref: refs/heads/main' > sub/.git/HEAD && ln -s ${q(pipe)} sub/.git/config`
    const r = await sh(script, { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
    assert.ok(kept(), `the instance's buffer was consumed by the host\n${show(r)}`)
    // Reported as a FIFO there is: not judged, and why.
    assert.ok(r.hostRisks.some((h) => h.detail.includes('on tracefs, a kernel filesystem')), show(r))
  })
})
