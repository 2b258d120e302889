'use strict'
// Environment: variables reach the child; loader variables (LD_PRELOAD) given in `env` apply to
// the command inside the sandbox but never to bwrap itself on the host.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')
const { show, run, sh, token, tempTree, which } = require('./helpers')

const PRELOAD_ERROR = /ERROR: ld\.so: object '[^']*' from LD_PRELOAD cannot be preloaded/g
const count = (s, re) => (s.match(re) || []).length
const HAS_CC = which('cc') !== null

describe('environment', { concurrency: 4 }, () => {
  test('a variable set with env reaches the child (extendEnv true and false)', async () => {
    const tok = token('VAL')
    const r = await sh('printf "%s|%s\\n" "$SANDSPAWN_SEC_VAR" "$SANDSPAWN_SANDBOX"', { env: { SANDSPAWN_SEC_VAR: tok } })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(r.stdout, `${tok}|bwrap\n`)
    const r2 = await run(['/usr/bin/env'], { env: { SANDSPAWN_SEC_VAR: tok, PATH: '/usr/bin:/bin' }, extendEnv: false })
    assert.equal(r2.exitCode, 0, show(r2))
    assert.match(r2.stdout, new RegExp(`^SANDSPAWN_SEC_VAR=${tok}$`, 'm'))
    assert.doesNotMatch(r2.stdout, /^HOME=/m, 'extendEnv: false leaked the host environment')
  })

  test('LD_PRELOAD (nonexistent .so) applies inside but not to bwrap', async () => {
    const so = `/nonexistent/${token('sandspawn-sec')}.so`
    // /bin/true is one program: exactly one loader complaint. A second one would be bwrap's.
    const one = await run(['/bin/true'], { env: { LD_PRELOAD: so } })
    assert.equal(one.exitCode, 0, show(one))
    assert.equal(count(one.stderr, PRELOAD_ERROR), 1, `expected exactly one ld.so message (from true), got:\n${show(one)}`)
    assert.ok(one.stderr.includes(so))

    // Three programs (sh, true, true) → three messages; and the child sees the variable.
    const three = await run(['/bin/sh', '-c', '/bin/true; /bin/true; echo "preload=$LD_PRELOAD"'], { env: { LD_PRELOAD: so } })
    assert.equal(three.exitCode, 0, show(three))
    assert.equal(three.stdout, `preload=${so}\n`)
    assert.equal(count(three.stderr, PRELOAD_ERROR), 3, show(three))

    // Without LD_PRELOAD in env, nothing complains (the host environment of the test has none).
    const none = await run(['/bin/true'])
    assert.equal(count(none.stderr, PRELOAD_ERROR), 0, show(none))

    // extendEnv: false too.
    const bare = await run(['/bin/true'], { env: { LD_PRELOAD: so }, extendEnv: false })
    assert.equal(bare.exitCode, 0, show(bare))
    assert.equal(count(bare.stderr, PRELOAD_ERROR), 1, show(bare))
  })

  test(`LD_PRELOAD of a real .so runs in the command, never in bwrap${HAS_CC ? '' : ' (SKIPPED: no C compiler)'}`, { skip: !HAS_CC && 'no C compiler' }, async (t) => {
    const tree = tempTree(t)
    const src = path.join(tree.out, 'probe.c')
    const so = path.join(tree.out, 'probe.so')
    const log = path.join(tree.ws, 'preload.log')
    fs.writeFileSync(
      src,
      `#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void probe(void) {
  const char *log = getenv("SANDSPAWN_SEC_LOG");
  char exe[4096] = {0};
  if (!log || readlink("/proc/self/exe", exe, sizeof exe - 1) < 0) return;
  FILE *f = fopen(log, "a");
  if (f) { fprintf(f, "%s\\n", exe); fclose(f); }
}
`,
    )
    execFileSync('cc', ['-shared', '-fPIC', '-o', so, src], { stdio: 'pipe' })
    const r = await run(['/bin/sh', '-c', '/bin/true'], { cwd: tree.ws, sandbox: 'workspace-write', env: { LD_PRELOAD: so, SANDSPAWN_SEC_LOG: log } })
    assert.equal(r.exitCode, 0, show(r))
    const seen = fs.readFileSync(log, 'utf8').trim().split('\n')
    assert.ok(!seen.some((e) => /bwrap/.test(e)), `LD_PRELOAD ran inside bwrap on the host: ${seen}`)
    assert.ok(seen.some((e) => /\/(dash|sh)$/.test(e)), `LD_PRELOAD did not apply to the command: ${seen}`)
    assert.ok(seen.some((e) => /\/true$/.test(e)), `LD_PRELOAD did not apply to the command's children: ${seen}`)
  })

  test('other loader variables (LD_LIBRARY_PATH, LD_AUDIT) do not reach bwrap either', async () => {
    const so = `/nonexistent/${token('sandspawn-sec')}.so`
    const r = await run(['/bin/true'], { env: { LD_AUDIT: so, LD_LIBRARY_PATH: '/nonexistent' } })
    assert.equal(r.exitCode, 0, show(r))
    // ld.so prints one "cannot be loaded as audit interface" line per affected program.
    assert.equal(count(r.stderr, /cannot be loaded as audit interface/g), 1, show(r))
  })
})
