'use strict'
// Issue 28: nothing a run writes is executed by the host later. Each case is the attack as it was
// reproduced, run for real against real bwrap, then the host-side follow-up (the next `require`, the
// next spawn, `git status`) is checked to run nothing planted.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const os = require('node:os')
const crypto = require('node:crypto')
const { execFileSync, spawnSync } = require('node:child_process')
const { sh, show, tempTree, treeSnapshot, q, changeSetStore, sandspawn, removeTmpLeftovers } = require('./helpers')

const ROOT = path.resolve(__dirname, '../..')
const ADDON = fs.readdirSync(ROOT).find((f) => /^sandspawn\..+\.node$/.test(f))
const PACKAGE_FILES = ['package.json', 'index.js', 'index.mjs', 'binding.js', 'lib', 'bin', ADDON, 'sandspawn-helper', 'sandspawn-bwrap', 'sandspawn-bwrap.sha256']

/** sandspawn installed in `dir` (a copy of this checkout's package files). */
function install(dir) {
  fs.mkdirSync(dir, { recursive: true })
  for (const f of PACKAGE_FILES) {
    if (fs.existsSync(path.join(ROOT, f))) fs.cpSync(path.join(ROOT, f), path.join(dir, f), { recursive: true })
  }
}

/**
 * A workspace with sandspawn installed in its `node_modules`, and the package manager's bin link
 * to its command line: npm's symlink (`link`) or pnpm's shim file (`shim`).
 */
function installedWithBin(t, layout = 'link') {
  const tree = tempTree(t)
  const pkg = path.join(tree.ws, 'node_modules', 'sandspawn')
  install(pkg)
  const bin = path.join(tree.ws, 'node_modules', '.bin', 'sandspawn')
  fs.mkdirSync(path.dirname(bin))
  if (layout === 'link') fs.symlinkSync('../sandspawn/bin/sandspawn.js', bin)
  else fs.writeFileSync(bin, `#!/bin/sh\nexec node "$(dirname "$0")/../sandspawn/bin/sandspawn.js" "$@"\n`, { mode: 0o755 })
  return { tree, pkg, bin }
}

function digestTree(dir) {
  const h = crypto.createHash('sha256')
  for (const [rel, s] of Object.entries(treeSnapshot(dir)).sort(([a], [b]) => a.localeCompare(b))) h.update(`${rel} ${s.type} ${s.sha || ''} ${s.mode}\n`)
  return h.digest('hex')
}

/** In a fresh node process: load the package from `pkg` and run `script` with bash in `cwd`. */
function runWith(pkg, script, cwd, sandbox) {
  const js = `require(${JSON.stringify(pkg)}).spawnSandboxed(['bash', '-c', ${JSON.stringify(script)}], { cwd: ${JSON.stringify(cwd)}, timeout: 20000, sandbox: ${JSON.stringify(sandbox)} })
    .then((r) => process.stdout.write(JSON.stringify(r)), (e) => process.stdout.write(JSON.stringify({ error: e.code, message: e.message })))`
  const r = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8', timeout: 60000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

const ATTACKS = (pkg) =>
  [
    `echo 'require("fs").writeFileSync("/var/tmp/pwned-index", "x")' >> ${pkg}/index.js`,
    `echo 'x' >> ${pkg}/lib/process.js`,
    `printf '#!/bin/sh\\ntouch /var/tmp/pwned-helper\\nexec "$@"\\n' > ${pkg}/sandspawn-helper`,
    `rm -f ${pkg}/sandspawn-helper`,
    `mv ${pkg} ${pkg}.moved`,
    `mv ${path.dirname(pkg)} ${path.dirname(pkg)}.moved`,
    `mv ${pkg}/lib ${pkg}/lib.moved`,
    `echo '{"name":"sandspawn","main":"evil.js"}' > ${pkg}/package.json`,
  ].map((a) => `${a} 2>/dev/null && echo "DONE: ${a.replace(/"/g, '')}"`).join('; ') + '; true'

describe("sandspawn's own package cannot be changed by a run (issue 28)", () => {
  test('installed in the workspace\'s node_modules: every file and every rename is refused; the next require and spawn run the package as installed', (t) => {
    const tree = tempTree(t)
    const pkg = path.join(tree.ws, 'node_modules', 'sandspawn')
    install(pkg)
    const before = digestTree(pkg)
    const r = runWith(pkg, ATTACKS(pkg), tree.ws, 'workspace-write')
    assert.equal(r.error, undefined, r.message)
    assert.equal(r.exitCode, 0, show(r))
    assert.doesNotMatch(r.stdout, /DONE/, show(r))
    assert.equal(digestTree(pkg), before, 'the package is byte for byte as installed')
    // The host's next load and spawn of that package work and run nothing planted.
    const again = runWith(pkg, 'echo ok; touch created-by-the-run', tree.ws, 'workspace-write')
    assert.equal(again.stdout, 'ok\n', show(again))
    assert.ok(fs.existsSync(path.join(tree.ws, 'created-by-the-run')), 'the rest of the workspace stays writable')
    assert.ok(!fs.existsSync('/var/tmp/pwned-index') && !fs.existsSync('/var/tmp/pwned-helper'))
  })

  test('installed under a writable /tmp, used from another workspace: the same', (t) => {
    const tree = tempTree(t)
    const base = fs.mkdtempSync('/tmp/sandspawn-pkg-')
    t.after(() => fs.rmSync(base, { recursive: true, force: true }))
    const pkg = path.join(base, 'a', 'node_modules', 'sandspawn')
    install(pkg)
    const before = digestTree(pkg)
    const r = runWith(pkg, ATTACKS(pkg) + `; mv ${base}/a ${base}/a.moved 2>/dev/null && echo DONE-a`, tree.ws, 'workspace-write')
    assert.equal(r.error, undefined, r.message)
    assert.doesNotMatch(r.stdout, /DONE/, show(r))
    assert.equal(digestTree(pkg), before)
  })

  test('the published layout (the addon in a platform package beside it): no name the loader tries can be planted, and the platform package is kept whole', (t) => {
    // Found by an attacker's review: only entries that existed were kept, so the addon the loader
    // tries first beside binding.js (absent in this layout), a platform package nested in the
    // package's own node_modules (resolved before the sibling one) and the platform package's
    // package.json (which names the file to load) could all be planted or changed.
    const tree = tempTree(t)
    const nm = path.join(tree.ws, 'node_modules')
    const pkg = path.join(nm, 'sandspawn')
    const platform = path.join(nm, `sandspawn-${ADDON.split('.')[1]}`)
    install(pkg)
    fs.mkdirSync(platform)
    for (const f of [ADDON, 'sandspawn-helper', 'sandspawn-bwrap', 'sandspawn-bwrap.sha256']) fs.renameSync(path.join(pkg, f), path.join(platform, f))
    // As npm/<platform>/package.json has it (written here: the copy of the checkout another user
    // runs the suite from holds only the package's files).
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
    fs.writeFileSync(path.join(platform, 'package.json'), JSON.stringify({ name: path.basename(platform), version, main: ADDON }))
    const before = [digestTree(pkg), digestTree(platform)]
    const attacks = [
      `echo planted > ${pkg}/${ADDON}`,
      `mkdir -p ${pkg}/node_modules/${path.basename(platform)}`,
      `echo '{"main":"evil.js"}' > ${platform}/package.json`,
      `echo 'x' > ${platform}/evil.js`,
      `mv ${platform} ${platform}.moved`,
    ].map((a) => `${a} 2>/dev/null && echo "DONE: ${a.replace(/"/g, '')}"`).join('; ') + '; true'
    const r = runWith(pkg, attacks, tree.ws, 'workspace-write')
    assert.equal(r.error, undefined, r.message)
    assert.equal(r.exitCode, 0, show(r))
    assert.doesNotMatch(r.stdout, /DONE/, show(r))
    assert.deepEqual([digestTree(pkg), digestTree(platform)], before, 'both packages are byte for byte as installed')
    const again = runWith(pkg, 'echo ok; touch created-by-the-run', tree.ws, 'workspace-write')
    assert.equal(again.stdout, 'ok\n', show(again))
    assert.ok(fs.existsSync(path.join(tree.ws, 'created-by-the-run')), 'the rest of the workspace stays writable')
  })

  test("pnpm's layout: the link beside the package through which Node finds the platform package cannot be replaced", (t) => {
    // Found by a review of the whole-package rule: in pnpm's store the platform package is reached
    // through a symlink beside the package, in neither directory kept whole.
    const tree = tempTree(t)
    const store = path.join(tree.ws, 'node_modules', '.pnpm')
    const plat = `sandspawn-${ADDON.split('.')[1]}`
    const beside = path.join(store, 'sandspawn@0.1.0', 'node_modules')
    const pkg = path.join(beside, 'sandspawn')
    const platform = path.join(store, `${plat}@0.1.0`, 'node_modules', plat)
    install(pkg)
    fs.mkdirSync(platform, { recursive: true })
    for (const f of [ADDON, 'sandspawn-helper', 'sandspawn-bwrap', 'sandspawn-bwrap.sha256']) fs.renameSync(path.join(pkg, f), path.join(platform, f))
    const { version } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'))
    fs.writeFileSync(path.join(platform, 'package.json'), JSON.stringify({ name: plat, version, main: ADDON }))
    fs.symlinkSync(platform, path.join(beside, plat))
    const link = path.join(beside, plat)
    const attack = `rm ${link} 2>/dev/null && mkdir ${link} && echo '{"main":"evil.js"}' > ${link}/package.json && echo DONE`
    const r = runWith(pkg, `${attack}; mv ${link} ${link}.moved 2>/dev/null && echo DONE-mv; true`, tree.ws, 'workspace-write')
    assert.equal(r.error, undefined, r.message)
    assert.doesNotMatch(r.stdout, /DONE/, show(r))
    assert.equal(fs.readlinkSync(link), platform)
    const again = runWith(pkg, 'echo ok', tree.ws, 'workspace-write')
    assert.equal(again.stdout, 'ok\n', show(again))
  })

  // Found by an attacker's review (host28): the package was kept whole, but not the package
  // manager's link to its command line beside it, `node_modules/.bin/sandspawn`, which `npx
  // sandspawn` runs: `npx sandspawn --mode workspace-write ...` in a project that installs sandspawn
  // let the command repoint it (or write a script over it, or into pnpm's shim, a file), with
  // `hostRisks: []`, and the host's next `npx sandspawn echo hi` ran the planted script as the
  // user, with no sandbox at all.
  for (const [name, layout, attack] of [
    ['repointed', 'link', 'printf "#!/bin/sh\\ntouch /var/tmp/pwned-npx\\n" > node_modules/.evil; chmod +x node_modules/.evil; ln -sfn ../.evil node_modules/.bin/sandspawn'],
    ['replaced by a script', 'link', 'rm -f node_modules/.bin/sandspawn; printf "#!/bin/sh\\ntouch /var/tmp/pwned-npx\\n" > node_modules/.bin/sandspawn; chmod +x node_modules/.bin/sandspawn'],
    ["pnpm's shim rewritten in place", 'shim', 'echo "touch /var/tmp/pwned-npx" >> node_modules/.bin/sandspawn'],
    ['made a directory', 'link', 'rm -f node_modules/.bin/sandspawn; mkdir -p node_modules/.bin/sandspawn/x'],
  ]) {
    test(`the bin link npx runs (node_modules/.bin/sandspawn), ${name}: put back and reported; the next npx sandspawn runs sandspawn`, (t) => {
      const { tree, pkg, bin } = installedWithBin(t, layout)
      const before = layout === 'link' ? fs.readlinkSync(bin) : fs.readFileSync(bin, 'utf8')
      const r = runWith(pkg, `${attack}; echo ran`, tree.ws, 'workspace-write')
      assert.equal(r.error, undefined, r.message)
      assert.equal(r.stdout, 'ran\n', show(r))
      const now = layout === 'link' ? fs.readlinkSync(bin) : fs.readFileSync(bin, 'utf8')
      assert.equal(now, before, `the bin link is as installed: ${JSON.stringify(r.hostRisks)}`)
      assert.ok((r.hostRisks || []).some((h) => h.path === bin), `unreported: ${JSON.stringify(r.hostRisks)}`)
      // The host's next `npx sandspawn` (what npx runs: the bin link) runs sandspawn.
      const next = spawnSync(bin, ['--mode', 'read-only', 'echo', 'hi'], { cwd: tree.ws, encoding: 'utf8', timeout: 60000 })
      assert.equal(next.stdout, 'hi\n', next.stderr)
      assert.ok(!fs.existsSync('/var/tmp/pwned-npx'))
    })
  }

  // Found by an attacker's review (rfix28): the link itself was put back, but not the programs
  // `npx sandspawn` runs from the same `.bin` before sandspawn's code: npm runs a bin through `sh
  // -c` with `node_modules/.bin` first on PATH (so `.bin/sh` is the shell), the link's target
  // starts `#!/usr/bin/env node` (so `.bin/node` is the interpreter), and pnpm's shim runs
  // `$basedir/node` and `dirname` from there too. A run that planted one left the link as it was,
  // `hostRisks` said nothing, and the host's next `npx sandspawn` (checked with npm 11) ran the
  // planted program as the user, with no sandbox.
  for (const [name, layout] of [['node', 'link'], ['sh', 'link'], ['dirname', 'shim']]) {
    test(`a ${name} planted in the bin link's .bin (${layout}), which npx sandspawn runs first: removed and reported; the next npx sandspawn runs sandspawn`, (t) => {
      const { tree, pkg, bin } = installedWithBin(t, layout)
      const dotBin = path.dirname(bin)
      const mark = `/var/tmp/pwned-npx-${name}`
      fs.rmSync(mark, { force: true })
      t.after(() => fs.rmSync(mark, { force: true }))
      const planted = path.join(dotBin, name)
      const attack = `printf '#!/bin/sh\\ntouch ${mark}\\nexec /usr/bin/${name} "$@"\\n' > ${q(planted)}; chmod +x ${q(planted)}; echo ran`
      const r = runWith(pkg, attack, tree.ws, 'workspace-write')
      assert.equal(r.error, undefined, r.message)
      assert.equal(r.stdout, 'ran\n', show(r))
      assert.ok((r.hostRisks || []).some((h) => h.path === planted), `unreported: ${JSON.stringify(r.hostRisks)}`)
      // What npm's run-script does for `npx sandspawn ...`: `sh -c` with `.bin` first on PATH.
      const next = spawnSync('sh', ['-c', 'sandspawn --mode read-only echo hi'], { cwd: tree.ws, encoding: 'utf8', timeout: 60000, env: { ...process.env, PATH: `${dotBin}:${process.env.PATH}` } })
      assert.equal(next.stdout, 'hi\n', next.stderr)
      assert.ok(!fs.existsSync(mark), `the host ran the planted ${name}`)
    })
  }

  // Left open by host28's fix (README): the link was put back after the run, but a host `npx
  // sandspawn` started while the run went on (agents run several things at once) ran the script
  // the command had put there, with no sandbox.
  test('the bin link npx runs, repointed while the run goes on: put back at once; a host npx sandspawn meanwhile runs sandspawn', async (t) => {
    const { tree, pkg, bin } = installedWithBin(t)
    const mark = path.join(tree.out, 'PWNED-npx')
    const planted = path.join(tree.ws, 'PLANTED')
    const attack = `printf '#!/bin/sh\\ntouch ${mark}\\n' > node_modules/.evil; chmod +x node_modules/.evil; ln -s ../.evil node_modules/.tmp-link && mv -T node_modules/.tmp-link node_modules/.bin/sandspawn && touch PLANTED; sleep 4; echo ran`
    const js = `require(${JSON.stringify(pkg)}).spawnSandboxed(['bash', '-c', ${JSON.stringify(attack)}], { cwd: ${JSON.stringify(tree.ws)}, timeout: 30000, sandbox: 'workspace-write' })
      .then((r) => process.stdout.write(JSON.stringify(r)), (e) => process.stdout.write(JSON.stringify({ error: e.code, message: e.message })))`
    const child = require('node:child_process').spawn(process.execPath, ['-e', js], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const exited = new Promise((resolve) => child.on('close', resolve))
    const until = Date.now() + 20000
    while (!fs.existsSync(planted) && Date.now() < until) await new Promise((r) => setTimeout(r, 20))
    assert.ok(fs.existsSync(planted), 'the command planted nothing')
    await new Promise((r) => setTimeout(r, 300))
    // The host's `npx sandspawn` (the bin link) while the run goes on.
    const during = spawnSync(bin, ['--mode', 'read-only', 'echo', 'hi'], { cwd: tree.ws, encoding: 'utf8', timeout: 60000 })
    const stillRunning = child.exitCode === null
    await exited
    assert.ok(stillRunning, 'the run was still going on')
    assert.ok(!fs.existsSync(mark), 'the host ran the planted script during the run')
    assert.equal(during.stdout, 'hi\n', during.stderr)
    const r = JSON.parse(out)
    assert.equal(r.stdout, 'ran\n', show(r))
    assert.ok((r.hostRisks || []).some((h) => h.path === bin), `unreported: ${JSON.stringify(r.hostRisks)}`)
  })

  /**
   * `attack` (a bash script run in the workspace by a workspace-write run of the installed
   * package, `layout` its bin link's) plants, then touches PLANTED and goes on for 4 s; the host's
   * `npx sandspawn` (the bin link) while it goes on must run sandspawn, and the run must report
   * the bin link. `MARK` in the script's environment is what the planted script touches.
   */
  async function plantedWhileTheRunGoesOn(t, layout, attack) {
    const { tree, pkg, bin } = installedWithBin(t, layout)
    const mark = path.join(tree.out, 'PWNED-npx')
    const planted = path.join(tree.ws, 'PLANTED')
    const script = `export MARK=${q(mark)}; ${attack} && touch PLANTED; sleep 4; echo ran`
    const js = `require(${JSON.stringify(pkg)}).spawnSandboxed(['bash', '-c', ${JSON.stringify(script)}], { cwd: ${JSON.stringify(tree.ws)}, timeout: 30000, sandbox: 'workspace-write' })
      .then((r) => process.stdout.write(JSON.stringify(r)), (e) => process.stdout.write(JSON.stringify({ error: e.code, message: e.message })))`
    const child = require('node:child_process').spawn(process.execPath, ['-e', js], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    const exited = new Promise((resolve) => child.on('close', resolve))
    const until = Date.now() + 20000
    while (!fs.existsSync(planted) && Date.now() < until && child.exitCode === null) await new Promise((r) => setTimeout(r, 20))
    await new Promise((r) => setTimeout(r, 300))
    const during = spawnSync(bin, ['--mode', 'read-only', 'echo', 'hi'], { cwd: tree.ws, encoding: 'utf8', timeout: 60000 })
    const stillRunning = child.exitCode === null
    await exited
    const r = JSON.parse(out)
    assert.ok(fs.existsSync(planted), `the command planted nothing: ${show(r)}`)
    assert.ok(stillRunning, 'the run was still going on')
    assert.ok(!fs.existsSync(mark), `the host ran the planted script during the run: ${JSON.stringify(r.hostRisks)}`)
    assert.equal(during.stdout, 'hi\n', during.stderr)
    assert.equal(r.stdout, 'ran\n', show(r))
    assert.ok((r.hostRisks || []).some((h) => h.path === bin), `unreported: ${JSON.stringify(r.hostRisks)}`)
  }

  // Found by an attacker's review (fix29): the keeper watched `.bin` by its inode and watched it
  // again only after a put-back. A command that swapped `.bin` for a copy of it holding the same
  // link (RENAME_EXCHANGE: nothing to put back) left the watch on the old directory, then
  // repointed the link in the new one: no event came, and the host's `npx sandspawn` meanwhile ran
  // the planted script with no sandbox (the link was put back only after the run).
  test('the bin link npx runs, repointed in a copy of .bin swapped in first: put back at once; a host npx sandspawn meanwhile runs sandspawn', { skip: !require('./helpers').which('python3') && 'no python3' }, async (t) => {
    const py = [
      'import ctypes, os, time',
      "os.mkdir('node_modules/.bin2'); os.symlink('../sandspawn/bin/sandspawn.js', 'node_modules/.bin2/sandspawn')",
      "assert ctypes.CDLL(None).renameat2(-100, b'node_modules/.bin', -100, b'node_modules/.bin2', 2) == 0",
      'time.sleep(0.5)',
      "open('node_modules/.evil', 'w').write('#!/bin/sh\\ntouch ' + os.environ['MARK'] + '\\n'); os.chmod('node_modules/.evil', 0o755)",
      "os.symlink('../.evil', 'node_modules/.tmp-link'); os.rename('node_modules/.tmp-link', 'node_modules/.bin/sandspawn')",
    ].join('\n')
    await plantedWhileTheRunGoesOn(t, 'link', `python3 -c ${q(py)}`)
  })

  // Found by an attacker's review (fix29): a write through a shared mapping raises no inotify event
  // (IN_MODIFY comes from write(2) and its kin only), so pnpm's shim rewritten so in place was put
  // back only after the run, and the host's `npx sandspawn` meanwhile ran the planted script.
  test("pnpm's shim rewritten in place through a shared mapping while the run goes on: put back at once; a host npx sandspawn meanwhile runs sandspawn", { skip: !require('./helpers').which('python3') && 'no python3' }, async (t) => {
    const py = [
      'import mmap, os',
      "f = open('node_modules/.bin/sandspawn', 'r+b'); m = mmap.mmap(f.fileno(), 0)",
      "evil = b'#!/bin/sh\\ntouch ' + os.environ['MARK'].encode() + b'\\n#'",
      "m[:] = evil + b'x' * (len(m) - len(evil) - 1) + b'\\n'; m.flush()",
    ].join('\n')
    await plantedWhileTheRunGoesOn(t, 'shim', `python3 -c ${q(py)}`)
  })

  // Found by an attacker's review (fix30): each event of a bin entry npx runs had the keeper look at
  // every entry and watch every one again (a2a58e2), and pnpm's shim touched in a loop (IN_ATTRIB,
  // its content unchanged: nothing to put back, no move counted) raised one per touch: a 5 s run
  // cost the host 1.0 s of CPU, 20% of a core for the run's life, against 0.035 s for a file of
  // no entry. CPU time, not wall time (the machine is shared), and against the same loop on a file
  // of no entry in the same process after a warm-up run: the host's CPU for loading the addon and
  // the first run's walk, and the load of a shared machine, are in both (an absolute bound of
  // 250 ms on the whole process failed at 301 ms under a load of 10 with the fix in place).
  test("pnpm's shim touched in a loop for the run's life costs the host little CPU", { skip: !require('./helpers').which('python3') && 'no python3' }, async (t) => {
    const { tree, pkg } = installedWithBin(t, 'shim')
    const py = (file) => ['import os, time', `f = ${JSON.stringify(file)}`, "open(f, 'a').close() if f == 'plain' else None", 't = time.time() + 4', 'n = 0', 'while time.time() < t:', '  os.utime(f); n += 1', 'print(n)'].join('\n')
    const js = `const s = require(${JSON.stringify(pkg)})
      const opts = { cwd: ${JSON.stringify(tree.ws)}, timeout: 30000, sandbox: 'workspace-write' }
      const cpu = async (code) => { const before = process.cpuUsage(); const r = await s.spawnSandboxed(['python3', '-c', code], opts); const u = process.cpuUsage(before); return { ...r, hostCpuMs: (u.user + u.system) / 1000 } }
      ;(async () => {
        await s.spawnSandboxed(['true'], opts)
        const control = await cpu(${JSON.stringify(py('plain'))})
        const shim = await cpu(${JSON.stringify(py('node_modules/.bin/sandspawn'))})
        process.stdout.write(JSON.stringify({ control, shim }))
      })().catch((e) => process.stdout.write(JSON.stringify({ error: e.code, message: e.message })))`
    const out = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8', timeout: 90000 })
    const { control, shim, error, message } = JSON.parse(out.stdout)
    assert.equal(error, undefined, message)
    for (const r of [control, shim]) {
      assert.equal(r.exitCode, 0, show(r))
      assert.ok(Number(r.stdout) > 10000, `the command touched its file ${r.stdout} times`)
    }
    const extra = shim.hostCpuMs - control.hostCpuMs
    assert.ok(extra < 150, `the host process spent ${shim.hostCpuMs} ms of CPU on a 4 s run touching the shim ${shim.stdout.trim()} times, against ${control.hostCpuMs} ms for a file of no entry touched ${control.stdout.trim()} times`)
  })

  // Left open by host28's fix (README): in review mode a change to that bin link was an ordinary
  // entry of the change set, not a host risk and not held back, so `applyChangeSet` (here by
  // another copy of sandspawn than the one that ran: a global CLI's `review apply`) landed the
  // planted link, and the host's next `npx sandspawn` ran the planted script with no sandbox.
  for (const [name, attack] of [
    ['repointed', 'printf "#!/bin/sh\\ntouch $MARK\\n" > node_modules/.evil; chmod +x node_modules/.evil; ln -sfn ../.evil node_modules/.bin/sandspawn'],
    ['replaced by a script', 'rm -f node_modules/.bin/sandspawn; printf "#!/bin/sh\\ntouch $MARK\\n" > node_modules/.bin/sandspawn; chmod +x node_modules/.bin/sandspawn'],
    ['.bin swapped for a link to a directory of the run\'s', 'mkdir evil-bin; printf "#!/bin/sh\\ntouch $MARK\\n" > evil-bin/sandspawn; chmod +x evil-bin/sandspawn; mv node_modules/.bin node_modules/.bin-old; ln -s ../evil-bin node_modules/.bin'],
  ]) {
    test(`review mode: the bin link npx runs, ${name}: a host risk of the change set, held back by apply; the next npx sandspawn runs sandspawn`, async (t) => {
      const saved = process.env.SANDSPAWN_CHANGE_SET_DIR
      changeSetStore('sandspawn-own-link-')
      t.after(() => (saved === undefined ? delete process.env.SANDSPAWN_CHANGE_SET_DIR : (process.env.SANDSPAWN_CHANGE_SET_DIR = saved)))
      const { tree, pkg, bin } = installedWithBin(t)
      const mark = path.join(tree.out, 'PWNED-npx')
      const r = runWith(pkg, `MARK=${q(mark)}; ${attack}; echo ran`, tree.ws, { mode: 'workspace-write', workspace: 'review' })
      assert.equal(r.error, undefined, r.message)
      assert.equal(r.stdout, 'ran\n', show(r))
      assert.ok(r.changeSet, show(r))
      const out = await sandspawn.applyChangeSet(r.changeSet.id)
      // The host's next `npx sandspawn` runs sandspawn, not what the set planted.
      const next = spawnSync(bin, ['--mode', 'read-only', 'echo', 'hi'], { cwd: tree.ws, encoding: 'utf8', timeout: 60000 })
      assert.ok(!fs.existsSync(mark), `the host ran the planted script; applied: ${JSON.stringify(out.applied)}`)
      assert.equal(next.stdout, 'hi\n', next.stderr)
      assert.ok(fs.lstatSync(path.dirname(bin)).isDirectory(), '.bin is a directory')
      assert.equal(fs.readlinkSync(bin), '../sandspawn/bin/sandspawn.js')
      const risky = (risks) => (risks || []).filter((h) => h.path === bin || h.path === path.dirname(bin))
      assert.ok(risky(r.changeSet.hostRisks).length > 0, `not a host risk of the set: ${JSON.stringify(r.changeSet.hostRisks)}`)
      assert.ok(out.heldBack.some((h) => risky([h.risk]).length > 0), `not held back: ${JSON.stringify(out)}`)
      await sandspawn.discardChangeSet(r.changeSet.id)
    })
  }

  // Found by an attacker's review (fix29): a `sandspawn` written into any `node_modules/.bin` was
  // judged by name (what ran the set may be another copy, a global CLI), but not what `npx
  // sandspawn` runs from that `.bin` before sandspawn's code (`node`, `sh`, the shim's `dirname`,
  // `sed`, `uname`): guarded only beside the copy that ran the set. A set made by another copy
  // planted `.bin/sh` beside the project's bin link with hostRisks [], apply landed it, and the
  // host's next `npx sandspawn` there ran it with no sandbox.
  for (const name of ['sh', 'node']) {
    test(`review mode by another copy: a ${name} planted beside the project's bin link is a host risk held back by apply; the next npx sandspawn runs sandspawn`, async (t) => {
      const saved = process.env.SANDSPAWN_CHANGE_SET_DIR
      changeSetStore('sandspawn-own-link-')
      t.after(() => (saved === undefined ? delete process.env.SANDSPAWN_CHANGE_SET_DIR : (process.env.SANDSPAWN_CHANGE_SET_DIR = saved)))
      const { tree, bin } = installedWithBin(t)
      const dotBin = path.dirname(bin)
      const mark = path.join(tree.out, `PWNED-npx-${name}`)
      const planted = path.join(dotBin, name)
      const attack = `printf '#!/bin/sh\\ntouch ${mark}\\nexec /usr/bin/${name} "$@"\\n' > ${q(planted)}; chmod +x ${q(planted)}; echo ran`
      // This checkout is the other copy: its own bin entries are none of the workspace's.
      const r = await sandspawn.spawnSandboxed(['bash', '-c', attack], { cwd: tree.ws, timeout: 30000, sandbox: { mode: 'workspace-write', workspace: 'review' } })
      assert.equal(r.stdout, 'ran\n', show(r))
      assert.ok(r.changeSet, show(r))
      const out = await sandspawn.applyChangeSet(r.changeSet.id)
      t.after(() => sandspawn.discardChangeSet(r.changeSet.id).catch(() => {}))
      const next = spawnSync('sh', ['-c', 'sandspawn --mode read-only echo hi'], { cwd: tree.ws, encoding: 'utf8', timeout: 60000, env: { ...process.env, PATH: `${dotBin}:${process.env.PATH}` } })
      assert.ok(!fs.existsSync(mark), `the host ran the planted ${name}; applied: ${JSON.stringify(out.applied)}, set's risks: ${JSON.stringify(r.changeSet.hostRisks)}`)
      assert.equal(next.stdout, 'hi\n', next.stderr)
      assert.ok((r.changeSet.hostRisks || []).some((h) => h.path === planted), `not a host risk of the set: ${JSON.stringify(r.changeSet.hostRisks)}`)
      assert.ok(out.heldBack.some((h) => h.path === planted || (h.risk && h.risk.path === planted)), `not held back: ${JSON.stringify(out)}`)
    })
  }

  test('a writable root inside the package is refused, naming it', (t) => {
    const tree = tempTree(t)
    const pkg = path.join(tree.ws, 'node_modules', 'sandspawn')
    install(pkg)
    const r = runWith(pkg, 'true', tree.ws, { mode: 'workspace-write', writableRoots: [path.join(pkg, 'lib')] })
    assert.equal(r.error, 'ERR_SANDBOX_INVALID_OPTIONS', JSON.stringify(r))
    assert.match(r.message, /own files/)
  })
})

describe('the workspace cannot be swapped by renaming a directory above it (issue 28)', () => {
  test('cwd two levels below a writable root: the ancestors cannot be renamed; the host\'s git status runs nothing', async (t) => {
    const tree = tempTree(t)
    const ws = path.join(tree.root, 'a', 'b', 'ws')
    fs.mkdirSync(ws, { recursive: true })
    execFileSync('git', ['init', '-q', ws])
    const marker = path.join(tree.out, 'PWNED')
    const script = [
      `cd ${q(tree.root)}`,
      'mv a a.real && echo MOVED-a',
      'mv a/b a/b.real && echo MOVED-b',
      'mkdir -p a/b/ws && git init -q a/b/ws',
      `git -C a/b/ws config core.fsmonitor ${q(`touch ${marker}; false`)} && echo PLANTED`,
      'true',
    ].join('; ')
    const r = await sh(script, { cwd: ws, sandbox: { mode: 'workspace-write', writableRoots: [tree.root] } })
    assert.equal(r.exitCode, 0, show(r))
    assert.doesNotMatch(r.stdout, /MOVED|PLANTED/, show(r))
    assert.ok(fs.existsSync(path.join(ws, '.git', 'HEAD')))
    execFileSync('git', ['-C', ws, 'status', '--porcelain'])
    assert.ok(!fs.existsSync(marker), "the host's git status ran the planted fsmonitor")
  })
})

describe('a bwrap a run plants on the host\'s PATH is never run by the host (issue 28)', () => {
  test('planted in a writable root that is on PATH: the next process neither probes nor runs it', async (t) => {
    const tree = tempTree(t)
    const bin = path.join(tree.out, 'bin')
    fs.mkdirSync(bin)
    const marker = path.join(tree.out, 'RAN')
    const planted = `#!/bin/sh\ntouch ${marker}\nexec /usr/bin/bwrap "$@"\n`
    const r = await sh(`printf '%s' ${q(planted)} > ${q(bin)}/bwrap && chmod 755 ${q(bin)}/bwrap && echo PLANTED`, {
      cwd: tree.ws,
      sandbox: { mode: 'workspace-write', writableRoots: [tree.out] },
    })
    assert.match(r.stdout, /PLANTED/, show(r))
    const js = `const s = require(${JSON.stringify(ROOT)})
      ;(async () => {
        const caps = await s.sandboxCapabilities()
        const run = await s.spawnSandboxed(['echo', 'ran'], { cwd: ${JSON.stringify(tree.ws)} })
        process.stdout.write(JSON.stringify({ path: caps.bwrap && caps.bwrap.path, source: caps.sandboxDetails.bwrapSource, attempts: caps.attempts, out: run.stdout }))
      })()`
    const child = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8', timeout: 60000, env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, SANDSPAWN_BWRAP: '' } })
    assert.equal(child.status, 0, child.stderr)
    const got = JSON.parse(child.stdout)
    assert.equal(got.out, 'ran\n')
    assert.notEqual(got.path, path.join(bin, 'bwrap'))
    assert.ok(!fs.existsSync(marker), 'the planted bwrap ran on the host')
    if (got.source === 'bundled') {
      const system = got.attempts.find((a) => a.mechanism === 'bwrap-system')
      assert.ok(system.message.includes(path.join(bin, 'bwrap')), `attempts say why it was skipped: ${JSON.stringify(got.attempts)}`)
    }
  })
})

/** `runWith` in a host process whose environment is `env` (HOME, TMPDIR) instead of this one's. */
function runAs(env, script, cwd, sandbox) {
  const js = `require(${JSON.stringify(ROOT)}).spawnSandboxed(['bash', '-c', ${JSON.stringify(script)}], { cwd: ${JSON.stringify(cwd)}, timeout: 20000, sandbox: ${JSON.stringify(sandbox)} })
    .then((r) => process.stdout.write(JSON.stringify(r)), (e) => process.stdout.write(JSON.stringify({ error: e.code, message: e.message })))`
  const base = { ...process.env }
  delete base.XDG_CONFIG_HOME
  const r = spawnSync(process.execPath, ['-e', js], { encoding: 'utf8', timeout: 60000, env: { ...base, ...env } })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

// Found by an attacker's review (rfix23), beside opencode's plugins: configs of developer tools
// that run a command or load code at start (or on every use), not kept before.
const RFIX23 = [
  '.config/opencode/opencode.json', '.config/crush/crush.json', '.config/yazi/init.lua', '.config/broot/launcher/bash/br',
  '.config/xonsh/rc.xsh', '.config/elvish/rc.elv', '.config/vim/vimrc', '.config/micro/init.lua', '.config/vifm/vifmrc',
  '.config/doom/config.el', '.config/lazygit/config.yml', '.config/gh/config.yml', '.config/bat/config', '.config/ghostty/config',
  '.config/foot/foot.ini', '.config/containers/containers.conf', '.config/nix/nix.conf', '.config/nixpkgs/overlays/x.nix',
  '.config/home-manager/home.nix', '.config/composer/vendor/x.php', '.config/JetBrains/IDE/idea64.vmoptions',
  '.config/sublime-text/Packages/User/x.py', '.config/irb/irbrc', '.config/pry/pryrc', '.config/uv/.python-version',
  '.config/zsh/.zshrc', '.config/hypr/hyprland.conf', '.config/awesome/rc.lua', '.config/bspwm/bspwmrc',
  '.config/openbox/autostart', '.config/qtile/config.py',
  '.xonshrc', '.wezterm.lua', '.alacritty.toml', '.alacritty.yml', '.spacemacs', '.doom.d/config.el', '.spacemacs.d/init.el',
  '.irbrc', '.pryrc', '.pdbrc', '.gdbinit', '.lldbinit', '.npmrc', '.yarnrc', '.yarnrc.yml', '.tool-versions', '.python-version',
  '.cargo/config.toml', '.cargo/bin/cargo', '.claude/settings.json', '.gemini/settings.json', '.codex/config.toml',
  '.local/share/jupyter/kernels/x/kernel.json', '.local/share/JetBrains/IDE/x.jar',
]

// Found by an attacker's review (rfix23b) of that list: more configs of the same class, still
// created unreported. Kept now, and the class is closed beside the list (`CLASS` below).
const RFIX23B = [
  '.config/plasma-workspace/env/evil.sh', '.config/qutebrowser/config.py', '.config/river/init', '.config/labwc/autostart',
  '.config/waybar/config', '.config/polybar/config.ini', '.config/niri/config.kdl', '.config/ptpython/config.py',
  '.config/yt-dlp/config', '.muttrc', '.guile', '.sbclrc', '.lein/profiles.clj', '.irssi/scripts/autorun/evil.pl',
]

// Found by an attacker's review (rfix23c): code-running places two levels down in the XDG data and
// configuration directories and below a dot-directory at the home's top.
const HOMEDATA = [
  '.local/share/fish/vendor_conf.d/x.fish',
  '.local/share/fish/vendor_functions.d/ls.fish',
  '.local/share/nautilus/scripts/x',
  '.local/share/kio/servicemenus/x.desktop',
  '.local/share/kservices5/ServiceMenus/x.desktop',
  '.config/lxsession/LXDE-pi/autostart',
  '.config/google-chrome/NativeMessagingHosts/x.json',
  '.config/chromium/NativeMessagingHosts/x.json',
  '.config/BraveSoftware/Brave-Browser/NativeMessagingHosts/x.json',
  '.config/microsoft-edge/NativeMessagingHosts/x.json',
  '.config/vivaldi/NativeMessagingHosts/x.json',
  '.mozilla/native-messaging-hosts/x.json',
  '.librewolf/native-messaging-hosts/x.json',
  '.config/xfce4/xfconf/xfce-perchannel-xml/xfce4-keyboard-shortcuts.xml',
]

describe("the host user's home inside a writable root keeps what the host runs from it", () => {
  // Found by an attacker's review: with the cwd at $HOME (or HOME=TMPDIR), the protected names
  // (.bashrc, .gitconfig) were kept, but git's XDG config, ~/.ssh and ~/.local/bin were not: a
  // planted ~/.config/git/config ran its core.fsmonitor on the host's next git anywhere.
  const PLANT = (marker) =>
    [
      ['.config/git/config', `mkdir -p ~/.config/git && printf '[core]\\n\\tfsmonitor = "touch ${marker}; false"\\n' > ~/.config/git/config`],
      ['.ssh/authorized_keys', "mkdir -p ~/.ssh && echo 'ssh-ed25519 AAAAattacker' >> ~/.ssh/authorized_keys"],
      ['.local/bin/git', `mkdir -p ~/.local/bin && printf '#!/bin/sh\\ntouch ${marker}\\n' > ~/.local/bin/git && chmod +x ~/.local/bin/git`],
      ['.vimrc', `echo '!touch ${marker}' > ~/.vimrc`],
      ['.config/systemd/user/x.service', 'mkdir -p ~/.config/systemd/user && echo "[Service]" > ~/.config/systemd/user/x.service'],
      ['.config/autostart/x.desktop', 'mkdir -p ~/.config/autostart && echo "[Desktop Entry]" > ~/.config/autostart/x.desktop'],
      ['.gnupg/gpg-agent.conf', 'mkdir -p ~/.gnupg && echo "pinentry-program /x" > ~/.gnupg/gpg-agent.conf'],
      // Found by a second review of that list: each runs on the host (bin/git on a login shell's
      // PATH, tmux's run-shell and docker's CLI plugins were shown running).
      ['bin/git', `mkdir -p ~/bin && printf '#!/bin/sh\\ntouch ${marker}\\n' > ~/bin/git && chmod +x ~/bin/git`],
      ['.tmux.conf', `echo 'run-shell "touch ${marker}"' > ~/.tmux.conf`],
      ['.docker/cli-plugins/docker-compose', 'mkdir -p ~/.docker/cli-plugins && echo x > ~/.docker/cli-plugins/docker-compose'],
      ['.kube/config', 'mkdir -p ~/.kube && echo x > ~/.kube/config'],
      ['.aws/config', 'mkdir -p ~/.aws && echo x > ~/.aws/config'],
      ['.hgrc', 'echo x > ~/.hgrc'],
      ['.gradle/init.d/x.gradle', 'mkdir -p ~/.gradle/init.d && echo x > ~/.gradle/init.d/x.gradle'],
      ['.pam_environment', 'echo x > ~/.pam_environment'],
      ['.Rprofile', 'echo x > ~/.Rprofile'],
      ['.ipython/profile_default/startup/x.py', 'mkdir -p ~/.ipython/profile_default/startup && echo x > ~/.ipython/profile_default/startup/x.py'],
      ['.oh-my-zsh/custom/x.zsh', 'mkdir -p ~/.oh-my-zsh/custom && echo x > ~/.oh-my-zsh/custom/x.zsh'],
      ['.config/direnv/direnvrc', 'mkdir -p ~/.config/direnv && echo x > ~/.config/direnv/direnvrc'],
      ['.config/tmux/tmux.conf', 'mkdir -p ~/.config/tmux && echo x > ~/.config/tmux/tmux.conf'],
      ['.config/mise/config.toml', 'mkdir -p ~/.config/mise && echo x > ~/.config/mise/config.toml'],
      ['.config/Code/User/settings.json', 'mkdir -p ~/.config/Code/User && echo x > ~/.config/Code/User/settings.json'],
      // Found by a review of the macOS list: Python runs the .pth files of the user's site-packages
      // (and its usercustomize) at every start, and Neovim the plugins below its data directory.
      ['.local/lib/python3.11/site-packages/x.pth', 'mkdir -p ~/.local/lib/python3.11/site-packages && echo "import os" > ~/.local/lib/python3.11/site-packages/x.pth'],
      ['.local/share/nvim/site/plugin/x.lua', 'mkdir -p ~/.local/share/nvim/site/plugin && echo x > ~/.local/share/nvim/site/plugin/x.lua'],
      // Found by an attacker's review (rfix23): opencode's plugins and config, kakoune's kakrc, lf's
      // lfrc, zellij's config, and the same class found next (`RFIX23` below).
      ['.config/opencode/plugins/evil.js', `mkdir -p ~/.config/opencode/plugins && echo 'require("fs").writeFileSync("${marker}", "")' > ~/.config/opencode/plugins/evil.js`],
      ['.config/kak/kakrc', `mkdir -p ~/.config/kak && echo 'nop %sh{ touch ${marker} }' > ~/.config/kak/kakrc`],
      ['.config/lf/lfrc', `mkdir -p ~/.config/lf && echo '&touch ${marker}' > ~/.config/lf/lfrc`],
      ['.config/zellij/config.kdl', `mkdir -p ~/.config/zellij && echo 'default_shell "/tmp/x"' > ~/.config/zellij/config.kdl`],
      ...RFIX23.map((rel) => [rel, `mkdir -p ~/${q(path.dirname(rel))} && echo x > ~/${q(rel)}`]),
      ...RFIX23B.map((rel) => [rel, `mkdir -p ~/${q(path.dirname(rel))} && echo x > ~/${q(rel)}`]),
      // Found by an attacker's review (plant22): user-level configs of agents, bun, pnpm and VS Code
      // forks that start MCP servers, preload scripts or load extensions, created unreported.
      ['.claude.json', `echo '{"mcpServers":{"x":{"command":"sh","args":["-c","touch ${marker}"]}}}' > ~/.claude.json`],
      ['.bunfig.toml', `echo 'preload = ["${marker}.ts"]' > ~/.bunfig.toml`],
      ['.config/.bunfig.toml', `echo 'preload = ["${marker}.ts"]' > ~/.config/.bunfig.toml`],
      ['.config/pnpm/rc', `mkdir -p ~/.config/pnpm && echo 'node-options=--require=${marker}.js' > ~/.config/pnpm/rc`],
      ['.codeium/windsurf/mcp_config.json', 'mkdir -p ~/.codeium/windsurf && echo "{}" > ~/.codeium/windsurf/mcp_config.json'],
      ['.copilot/mcp-config.json', 'mkdir -p ~/.copilot && echo "{}" > ~/.copilot/mcp-config.json'],
      ['.config/goose/config.yaml', 'mkdir -p ~/.config/goose && echo "extensions: {}" > ~/.config/goose/config.yaml'],
      ['.config/Code - Insiders/User/settings.json', 'mkdir -p ~/".config/Code - Insiders/User" && echo "{}" > ~/".config/Code - Insiders/User/settings.json"'],
      ['.config/Code - OSS/User/settings.json', 'mkdir -p ~/".config/Code - OSS/User" && echo "{}" > ~/".config/Code - OSS/User/settings.json"'],
      ['.config/Windsurf/User/settings.json', 'mkdir -p ~/.config/Windsurf/User && echo "{}" > ~/.config/Windsurf/User/settings.json'],
      ['.vscode-insiders/extensions/x/package.json', 'mkdir -p ~/.vscode-insiders/extensions/x && echo "{}" > ~/.vscode-insiders/extensions/x/package.json'],
      ['.vscode-oss/extensions/x/package.json', 'mkdir -p ~/.vscode-oss/extensions/x && echo "{}" > ~/.vscode-oss/extensions/x/package.json'],
      ['.cursor/extensions/x/package.json', 'mkdir -p ~/.cursor/extensions/x && echo "{}" > ~/.cursor/extensions/x/package.json'],
      ['.windsurf/extensions/x/package.json', 'mkdir -p ~/.windsurf/extensions/x && echo "{}" > ~/.windsurf/extensions/x/package.json'],
      // Found by a review of those fixes (rfix22): Amp's and Claude Desktop's MCP server lists.
      ['.config/amp/settings.json', 'mkdir -p ~/.config/amp && echo "{}" > ~/.config/amp/settings.json'],
      ['.config/Claude/claude_desktop_config.json', 'mkdir -p ~/.config/Claude && echo "{}" > ~/.config/Claude/claude_desktop_config.json'],
      // Found by an attacker's review (rfix23c): fish's vendor_conf.d in the XDG data directory,
      // lxsession's autostart, the browsers' native messaging hosts, xfce's keyboard shortcuts.
      ...HOMEDATA.map((rel) => [rel, `mkdir -p ~/${q(path.dirname(rel))} && echo x > ~/${q(rel)}`]),
    ]

  /** Each planted path is gone (refused, or moved aside and reported), and the host's git runs nothing. */
  function assertNothingLanded(r, home, marker, plant) {
    assert.equal(r.error, undefined, r.message)
    for (const [rel] of plant) {
      const p = path.join(home, rel)
      assert.equal(fs.existsSync(p), false, `${rel} landed in the host's home\n${show(r)}\n${JSON.stringify(r.hostRisks)}`)
    }
    const repo = path.join(home, 'later-repo')
    execFileSync('git', ['init', '-q', repo], { env: { ...process.env, HOME: home } })
    spawnSync('git', ['status'], { cwd: repo, env: { ...process.env, HOME: home, XDG_CONFIG_HOME: '' } })
    assert.ok(!fs.existsSync(marker), "the host's git ran what the run planted")
  }

  test('cwd = $HOME: .config/git, .ssh, .local/bin, .vimrc, systemd and autostart, .gnupg cannot be planted; what the run creates is moved aside and reported', (t) => {
    const tree = tempTree(t)
    const home = path.join(tree.root, 'home')
    fs.mkdirSync(path.join(home, '.config'), { recursive: true })
    fs.mkdirSync(path.join(home, '.ssh'))
    fs.writeFileSync(path.join(home, '.ssh', 'authorized_keys'), 'ssh-ed25519 AAAAmine me\n')
    const marker = path.join(tree.out, 'PWNED')
    const plant = PLANT(marker)
    const r = runAs({ HOME: home }, plant.map(([, cmd]) => `( ${cmd} ) 2>/dev/null`).join('; ') + '; echo ran', home, 'workspace-write')
    assert.equal(r.stdout, 'ran\n', show(r))
    assert.equal(fs.readFileSync(path.join(home, '.ssh', 'authorized_keys'), 'utf8'), 'ssh-ed25519 AAAAmine me\n', 'authorized_keys was changed')
    for (const rel of ['.config/git', '.local/bin', '.vimrc', '.config/systemd', 'bin', '.tmux.conf', '.claude.json', '.config/pnpm', '.config/Windsurf/User', '.vscode-insiders/extensions']) {
      assert.ok(r.hostRisks.some((h) => h.path === path.join(home, rel) && /moved aside/.test(h.detail) && /host user's home/.test(h.detail)), `${rel}: ${JSON.stringify(r.hostRisks)}`)
    }
    for (const rel of ['.config/opencode', '.config/kak', '.config/lf', '.config/zellij', '.config/crush', '.xonshrc', '.npmrc', '.local/share/jupyter']) {
      assert.ok(r.hostRisks.some((h) => h.path === path.join(home, rel) && /moved aside/.test(h.detail)), `${rel}: ${JSON.stringify(r.hostRisks)}`)
    }
    for (const rel of ['.config/waybar', '.config/plasma-workspace', '.muttrc', '.lein/profiles.clj', '.irssi']) {
      assert.ok(r.hostRisks.some((h) => h.path === path.join(home, rel) && /moved aside/.test(h.detail)), `${rel}: ${JSON.stringify(r.hostRisks)}`)
    }
    assertNothingLanded(r, home, marker, plant.filter(([rel]) => rel !== '.ssh/authorized_keys'))
  })

  // The same review (rfix23b): a fixed list always misses the next tool. Whatever else a run
  // creates or replaces in the home's XDG config and data directories (three levels down), below a
  // dot-directory at its top (two levels down), or as a dotfile at its top is reported (not
  // blocked: sandboxed tools save their own settings).
  test('cwd = $HOME: any other entry made in ~/.config or ~/.local/share (three levels down), a dot-directory (two) or as a dotfile at the home\'s top is reported, not blocked', (t) => {
    const tree = tempTree(t)
    const home = path.join(tree.root, 'home')
    // Two levels below ~/.config and ~/.local/share, one below a dot-directory at the top (rfix23c:
    // lxsession's autostart, a browser's native messaging host); not deeper.
    for (const d of ['.config/oldtool/deep/deeper', '.olddot/sub/deeper', '.local/share/oldapp/sub/deeper']) fs.mkdirSync(path.join(home, d), { recursive: true })
    fs.writeFileSync(path.join(home, '.config', 'oldtool', 'kept.conf'), 'mine\n')
    fs.writeFileSync(path.join(home, '.oldrc'), 'mine\n')
    const made = ['.config/newtool/init.lua', '.config/oldtool/plugin.lua', '.config/newtool.conf', '.newtoolrc', '.newtool/config',
      '.config/oldtool/deep/x.lua', '.olddot/sub/x', '.olddot/new.conf', '.local/share/oldapp/sub/x', '.local/share/newapp/x']
    const quiet = ['notes.txt', '.config/oldtool/deep/deeper/x.lua', '.olddot/sub/deeper/x', '.local/share/oldapp/sub/deeper/x']
    const script = [...made, ...quiet].map((rel) => `mkdir -p ~/${q(path.dirname(rel))} && echo x > ~/${q(rel)}`).join(' && ') + ' && echo ran'
    const r = runAs({ HOME: home }, script, home, 'workspace-write')
    assert.equal(r.error, undefined, r.message)
    assert.equal(r.stdout, 'ran\n', show(r))
    const at = (rel) => r.hostRisks.find((h) => h.path === path.join(home, rel))
    for (const rel of ['.config/newtool', '.config/oldtool/plugin.lua', '.config/newtool.conf', '.newtoolrc', '.newtool',
      '.config/oldtool/deep/x.lua', '.olddot/sub/x', '.olddot/new.conf', '.local/share/oldapp/sub/x', '.local/share/newapp']) {
      assert.equal(at(rel)?.kind, 'protected-name-created', `${rel}: ${JSON.stringify(r.hostRisks)}`)
      assert.match(at(rel).detail, /host user's home/)
    }
    for (const rel of [...made, ...quiet]) assert.ok(fs.existsSync(path.join(home, rel)), `${rel} was not blocked`)
    for (const rel of [...quiet, '.config/oldtool/kept.conf', '.oldrc', '.config', '.config/oldtool', '.olddot', '.olddot/sub', '.local', '.local/share']) {
      assert.equal(at(rel), undefined, `${rel} is not reported: ${JSON.stringify(r.hostRisks)}`)
    }
    // A second run that changes nothing there reports nothing.
    const again = runAs({ HOME: home }, 'echo x > notes2.txt && echo ran', home, 'workspace-write')
    assert.deepEqual(again.hostRisks.filter((h) => h.path.startsWith(home + '/.')), [], JSON.stringify(again.hostRisks))
  })

  // Found by an attacker's review (rfix25, config_nm.js): the walk never lists a node_modules, and
  // the look above only entered what the walk listed, so a package a run put in an existing
  // ~/.config/<tool>/node_modules or ~/.<tool>/node_modules (Node-RED's, yarn's global dir, coc's
  // extensions: tools load them) went unreported. Its own listing is looked at, not the packages.
  test('cwd = $HOME: a package made in a node_modules within those levels is reported', (t) => {
    const tree = tempTree(t)
    const home = path.join(tree.root, 'home')
    const dirs = ['.config/tool25/node_modules', '.tool25/node_modules', '.config/node_modules']
    for (const d of dirs) fs.mkdirSync(path.join(home, d, 'old'), { recursive: true })
    const script = dirs.map((d) => `mkdir -p ~/${d}/evil && echo x > ~/${d}/evil/index.js && echo x > ~/${d}/old/deeper.js`).join(' && ') + ' && echo ran'
    const r = runAs({ HOME: home }, script, home, 'workspace-write')
    assert.equal(r.error, undefined, r.message)
    assert.equal(r.stdout, 'ran\n', show(r))
    const at = (rel) => r.hostRisks.find((h) => h.path === path.join(home, rel))
    for (const d of dirs) {
      assert.equal(at(d + '/evil')?.kind, 'protected-name-created', `${d}/evil: ${JSON.stringify(r.hostRisks)}`)
      assert.equal(at(d), undefined, `${d} itself is not: ${JSON.stringify(r.hostRisks)}`)
    }
    const again = runAs({ HOME: home }, 'echo x > notes2.txt && echo ran', home, 'workspace-write')
    assert.deepEqual(again.hostRisks.filter((h) => h.path.startsWith(home + '/.')), [], JSON.stringify(again.hostRisks))
  })

  // Found by an attacker's review (rfix23c): 10,001 links at the home's top put the walk's link
  // bound behind one scan-incomplete at $HOME, which was taken as having reported every entry
  // below it already: ~/.config/newtool and ~/.evilrc went unnamed.
  test('cwd = $HOME: a scan-incomplete at the home (more links than the walk judges) does not stand in for the entries named there', (t) => {
    const tree = tempTree(t)
    const home = path.join(tree.root, 'home')
    fs.mkdirSync(path.join(home, '.config'), { recursive: true })
    const script = "mkdir -p ~/.config/newtool && echo x > ~/.config/newtool/init.lua && echo x > ~/.evilrc && perl -e 'symlink \"x\", \"l$_\" for 1..10001' && echo ran"
    const r = runAs({ HOME: home }, script, home, 'workspace-write')
    assert.equal(r.error, undefined, r.message)
    assert.equal(r.stdout, 'ran\n', show(r))
    assert.ok(r.hostRisks.some((h) => h.path === home && h.kind === 'scan-incomplete'), `the bound is said: ${JSON.stringify(r.hostRisks)}`)
    for (const rel of ['.config/newtool', '.evilrc']) {
      const at = r.hostRisks.find((h) => h.path === path.join(home, rel))
      assert.equal(at?.kind, 'protected-name-created', `${rel}: ${JSON.stringify(r.hostRisks)}`)
    }
  })

  // Found by an attacker's review (rfix23c): with those places already there (a fish user's
  // ~/.local/share/fish, a browser's NativeMessagingHosts), and after a first run made sandspawn's
  // state directory in ~/.local, a run wrote into each unreported. Each is read-only now.
  test('cwd = $HOME: fish\'s vendor_conf.d, lxsession\'s autostart, native messaging hosts and xfce\'s shortcuts that exist are read-only', (t) => {
    const tree = tempTree(t)
    const home = path.join(tree.root, 'home')
    for (const rel of HOMEDATA) fs.mkdirSync(path.join(home, path.dirname(rel)), { recursive: true })
    const first = runAs({ HOME: home }, 'echo first > notes.txt', home, 'workspace-write')
    assert.equal(first.error, undefined, first.message)
    const r = runAs({ HOME: home }, HOMEDATA.map((rel) => `(echo x > ~/${q(rel)}) 2>/dev/null && echo "WROTE ${rel}"`).join('; ') + '; echo ran', home, 'workspace-write')
    assert.equal(r.error, undefined, r.message)
    assert.equal(r.stdout, 'ran\n', show(r))
    for (const rel of HOMEDATA) assert.equal(fs.existsSync(path.join(home, rel)), false, `${rel} landed\n${JSON.stringify(r.hostRisks)}`)
  })

  // Found by a later attacker's review (later16): the home's files that host tools run beside
  // those above. Each was shown running on the host: mvn sources ~/.mavenrc, gdb runs
  // ~/.gdbearlyinit and ~/.config/gdb/gdbinit, less applies ~/.lesskey's `#env LESSOPEN`, lesspipe
  // runs ~/.lessfilter, `perl -d` ~/.perldb, `pyenv exec` sources ~/.pyenv/pyenv.d/exec/*.bash, and
  // Debian's ~/.bashrc sources ~/.bash_aliases.
  const TOOL_RC = (marker) => [
    ['.mavenrc', `echo 'touch ${marker}' > ~/.mavenrc`],
    ['.gdbearlyinit', `echo 'shell touch ${marker}' > ~/.gdbearlyinit`],
    ['.config/gdb/gdbinit', `mkdir -p ~/.config/gdb && echo 'shell touch ${marker}' > ~/.config/gdb/gdbinit`],
    ['.lesskey', `printf '#env\\nLESSOPEN=|touch ${marker}; cat %%s\\n' > ~/.lesskey`],
    ['.lessfilter', `printf '#!/bin/sh\\ntouch ${marker}\\n' > ~/.lessfilter && chmod +x ~/.lessfilter`],
    ['.perldb', `echo 'open(F, ">", "${marker}"); 1;' > ~/.perldb`],
    ['.pyenv/pyenv.d/exec/zz.bash', `echo 'touch ${marker}' > ~/.pyenv/pyenv.d/exec/zz.bash`],
    ['.bash_aliases', `echo 'touch ${marker}' > ~/.bash_aliases`],
    ['.nvm/nvm.sh', `mkdir -p ~/.nvm && echo 'touch ${marker}' > ~/.nvm/nvm.sh`],
    ['.psqlrc', `echo '\\! touch ${marker}' > ~/.psqlrc`],
  ]
  /** A home as a host user's with pyenv installed: its hook directory exists, and a .bashrc. */
  function toolHome(home) {
    fs.mkdirSync(path.join(home, '.pyenv', 'pyenv.d', 'exec'), { recursive: true })
    fs.mkdirSync(path.join(home, '.config'))
    fs.writeFileSync(path.join(home, '.bashrc'), '[ -f ~/.bash_aliases ] && . ~/.bash_aliases\n')
  }

  test('cwd = $HOME: the host tools\' rc files and version managers cannot be planted (refused, or moved aside and reported)', (t) => {
    const tree = tempTree(t)
    const home = path.join(tree.root, 'home')
    toolHome(home)
    const marker = path.join(tree.out, 'PWNED')
    const plant = TOOL_RC(marker)
    const r = runAs({ HOME: home }, plant.map(([rel, cmd]) => `( ${cmd} ) 2>/dev/null && echo "WROTE ${rel}"`).join('; ') + '; echo ran', home, 'workspace-write')
    assert.equal(r.error, undefined, r.message)
    assert.match(r.stdout, /ran\n$/, show(r))
    assert.doesNotMatch(r.stdout, /WROTE \.pyenv/, `the existing .pyenv is read-only\n${show(r)}`)
    for (const [rel] of plant) assert.equal(fs.existsSync(path.join(home, rel)), false, `${rel} landed in the host's home\n${show(r)}\n${JSON.stringify(r.hostRisks)}`)
    for (const rel of ['.mavenrc', '.gdbearlyinit', '.config/gdb', '.lesskey', '.perldb', '.bash_aliases', '.nvm']) {
      assert.ok(r.hostRisks.some((h) => h.path === path.join(home, rel) && /moved aside/.test(h.detail) && /host user's home/.test(h.detail)), `${rel}: ${JSON.stringify(r.hostRisks)}`)
    }
    assert.equal(fs.existsSync(marker), false)
  })

  // The same review: with the host's HOME=/tmp (CI runners, services), the default writable /tmp
  // holds the home, so a run from any workspace planted /tmp/.mavenrc and the like, unreported.
  test('HOME = /tmp, cwd elsewhere: /tmp/.mavenrc, .gdbearlyinit, .perldb, .lesskey are moved aside and reported', (t) => {
    const names = ['.mavenrc', '.gdbearlyinit', '.perldb', '.lesskey']
    if (names.some((n) => fs.existsSync(path.join('/tmp', n)))) return t.skip('one of them exists in this host\'s /tmp already')
    // sandspawn keeps its state in $HOME/.local/state/sandspawn: with HOME=/tmp the run made
    // /tmp/.local, which stayed on the host after the suite (found in /tmp hours later).
    const local = path.join('/tmp', '.local')
    const hadLocal = fs.existsSync(local)
    t.after(() => {
      removeTmpLeftovers(names)
      if (!hadLocal) fs.rmSync(local, { recursive: true, force: true })
    })
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'PWNED')
    const plant = TOOL_RC(marker).filter(([rel]) => names.includes(rel))
    const r = runAs({ HOME: '/tmp' }, plant.map(([, cmd]) => `( ${cmd} ) 2>/dev/null`).join('; ') + '; echo ran', tree.ws, 'workspace-write')
    assert.equal(r.error, undefined, r.message)
    assert.equal(r.stdout, 'ran\n', show(r))
    for (const n of names) {
      assert.equal(fs.existsSync(path.join('/tmp', n)), false, `/tmp/${n} was left\n${JSON.stringify(r.hostRisks)}`)
      assert.ok(r.hostRisks.some((h) => h.path === path.join('/tmp', n) && /moved aside/.test(h.detail)), `${n}: ${JSON.stringify(r.hostRisks)}`)
    }
  })

  test('HOME = TMPDIR (a writable root), cwd elsewhere: git\'s XDG config and .ssh cannot be planted there either', (t) => {
    const tree = tempTree(t)
    const home = path.join(tree.root, 'home')
    fs.mkdirSync(home)
    const marker = path.join(tree.out, 'PWNED')
    const plant = PLANT(marker).slice(0, 3)
    const r = runAs({ HOME: home, TMPDIR: home }, plant.map(([, cmd]) => `( ${cmd} ) 2>/dev/null`).join('; ') + '; echo ran', tree.ws, 'workspace-write')
    assert.equal(r.stdout, 'ran\n', show(r))
    assertNothingLanded(r, home, marker, plant)
  })
})

describe("the host's tool caches in a home a writable root holds stay the host's", () => {
  // Found by an attacker's review: with HOME = TMPDIR (a writable root), toolCaches 'private' left
  // ~/.npm as it was (a cache inside a writable root was taken for one the user made writable), and
  // the run wrote the host's own ~/.npm/_npx, which the host's next npx runs from.
  for (const [name, where] of [['HOME = TMPDIR, cwd elsewhere', 'tmpdir'], ['cwd = $HOME', 'cwd']]) {
    test(`${name}: the run writes its private copy of ~/.npm, not the host's`, (t) => {
      const tree = tempTree(t)
      const home = path.join(tree.root, 'home')
      fs.mkdirSync(path.join(home, '.npm', '_npx'), { recursive: true })
      fs.writeFileSync(path.join(home, '.npm', '_npx', 'kept'), 'host\n')
      const env = where === 'tmpdir' ? { HOME: home, TMPDIR: home } : { HOME: home }
      const r = runAs(env, 'echo poisoned > ~/.npm/_npx/planted && echo poisoned > ~/.npm/_npx/kept && cat ~/.npm/_npx/planted', where === 'cwd' ? home : tree.ws, 'workspace-write')
      assert.equal(r.error, undefined, r.message)
      assert.equal(r.stdout, 'poisoned\n', `the cache stays writable inside the sandbox\n${show(r)}`)
      assert.ok(r.toolCaches.caches.some((c) => c.path === path.join(home, '.npm')), JSON.stringify(r.toolCaches))
      assert.equal(fs.existsSync(path.join(home, '.npm', '_npx', 'planted')), false, "the run wrote the host's npm cache")
      assert.equal(fs.readFileSync(path.join(home, '.npm', '_npx', 'kept'), 'utf8'), 'host\n')
    })
  }

  // Found by an attacker's review: a held home's cache that gets no private copy was left writable,
  // with no host risk and nothing in `notEnforced`: under `toolCaches: 'none'` (which says "caches
  // read-only"), and when a `readOnlyPaths` or `denyRead` entry inside `~/.npm` made the whole npm
  // cache uncovered (a stricter rule took a protection away).
  const PLANT_CACHES = ['.npm/_npx/planted', '.cache/pip/planted', '.cargo/registry/src/planted']
  function cachedHome(tree) {
    const home = path.join(tree.root, 'home')
    for (const d of ['.npm/_npx', '.npm/_cacache', '.cache/pip', '.cargo/registry/src']) fs.mkdirSync(path.join(home, d), { recursive: true })
    fs.writeFileSync(path.join(home, '.npm', '_cacache', 'secret'), 'secret\n')
    return home
  }
  const plantCaches = PLANT_CACHES.map((rel) => `( echo poisoned > ~/${rel} ) 2>/dev/null && echo wrote ${rel}`).join('; ') + '; echo ran'
  function assertCachesKept(r, home, plant = PLANT_CACHES) {
    assert.equal(r.error, undefined, r.message)
    for (const rel of plant) assert.equal(fs.existsSync(path.join(home, rel)), false, `the run wrote the host's ~/${rel}\n${show(r)}\n${JSON.stringify(r.toolCaches)}`)
  }

  test("cwd = $HOME, toolCaches 'none': the host's caches stay read-only", (t) => {
    const tree = tempTree(t)
    const home = cachedHome(tree)
    const r = runAs({ HOME: home }, plantCaches, home, { mode: 'workspace-write', toolCaches: 'none' })
    assert.equal(r.stdout, 'ran\n', show(r))
    assert.equal(r.toolCaches.mode, 'none')
    assertCachesKept(r, home)
  })

  for (const rule of ['readOnlyPaths', 'denyRead']) {
    test(`cwd = $HOME, a ${rule} entry inside ~/.npm: the rest of the npm cache stays the host's, the entry as asked`, (t) => {
      const tree = tempTree(t)
      const home = cachedHome(tree)
      const script = `${plantCaches}; cat ~/.npm/_cacache/secret 2>/dev/null || echo unread; echo x > ~/.npm/_cacache/new 2>/dev/null && echo wrote-rule`
      const r = runAs({ HOME: home }, script, home, { mode: 'workspace-write', [rule]: [path.join(home, '.npm', '_cacache')] })
      assert.equal(r.error, undefined, r.message)
      assert.ok(!r.toolCaches.caches.some((c) => c.name === 'npm'), 'the overlay would undo the rule inside')
      assertCachesKept(r, home, ['.npm/_npx/planted'])
      const expected = rule === 'denyRead' ? 'unread\n' : 'secret\n'
      assert.ok(r.stdout.endsWith(`ran\n${expected}`), `the ${rule} entry holds as asked\n${show(r)}`)
      assert.equal(fs.existsSync(path.join(home, '.npm', '_cacache', 'new')), false)
    })
  }

  // Found by an attacker's review of the read-only carve-out: only the caches that existed were
  // kept; in an empty home the run created ~/.npm/_npx/<hash>/node_modules (the host's next npx
  // runs from it), ~/.cache/pip and Go's module cache on the host, and reported none of them.
  for (const toolCaches of ['none', 'private']) {
    test(`cwd = an empty $HOME, toolCaches '${toolCaches}': the caches the run creates work during it, then are moved aside and reported`, (t) => {
      const tree = tempTree(t)
      const home = path.join(tree.root, 'home')
      fs.mkdirSync(home)
      const plant = ['.npm/_npx/abc/node_modules/p', '.cache/pip/p', 'go/pkg/mod/p']
      const script = plant.map((rel) => `mkdir -p ~/${path.dirname(rel)} && echo planted > ~/${rel} && cat ~/${rel}`).join(' && ')
      const r = runAs({ HOME: home, XDG_CACHE_HOME: undefined, XDG_DATA_HOME: undefined, GOPATH: undefined, GOMODCACHE: undefined }, script, home, { mode: 'workspace-write', toolCaches })
      assert.equal(r.error, undefined, r.message)
      assert.equal(r.stdout, 'planted\n'.repeat(plant.length), `the tools' caches stay creatable in the run\n${show(r)}`)
      for (const rel of plant) assert.equal(fs.existsSync(path.join(home, rel)), false, `the run left ~/${rel} on the host\n${JSON.stringify(r.hostRisks)}`)
      for (const top of ['.npm', '.cache', 'go']) {
        const risk = r.hostRisks.find((h) => h.path === path.join(home, top))
        assert.ok(risk && risk.kind === 'protected-name-created' && /tool cache/.test(risk.detail) && /moved aside/.test(risk.detail), `${top}: ${JSON.stringify(r.hostRisks)}`)
        const moved = risk.detail.match(/moved aside to (\S+)$/)[1]
        assert.ok(fs.existsSync(moved), 'nothing of it is lost')
      }
    })
  }
})

describe('a toolchain file a run writes selects nothing on the host', () => {
  // Found by an attacker's review: rust-toolchain.toml was neither protected nor reported, and its
  // `path =` toolchain made the host's next `cargo --version` there run the run's own cargo.
  test('rust-toolchain.toml naming a toolchain the run made: moved aside and reported; the host\'s cargo runs its own', async (t) => {
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'RAN')
    const fake = `#!/bin/sh\ntouch ${marker}\necho "cargo 1.99.0 (planted)"\n`
    const script = [
      'mkdir -p target/tc/bin',
      `printf '%s' ${q(fake)} > target/tc/bin/cargo && cp target/tc/bin/cargo target/tc/bin/rustc && chmod +x target/tc/bin/*`,
      `printf '[toolchain]\\npath = "%s/target/tc"\\n' "$PWD" > rust-toolchain.toml`,
      'printf "[toolchain]\\npath = \\"$PWD/target/tc\\"\\n" > rust-toolchain',
      'echo PLANTED',
    ].join(' && ')
    const r = await sh(script, { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
    for (const n of ['rust-toolchain.toml', 'rust-toolchain']) {
      assert.equal(fs.existsSync(path.join(tree.ws, n)), false, `${n} was left where cargo looks for it`)
      assert.ok(r.hostRisks.some((h) => h.path === path.join(tree.ws, n) && /rustup/.test(h.detail)), JSON.stringify(r.hostRisks))
    }
    const cargo = spawnSync('cargo', ['--version'], { cwd: tree.ws, encoding: 'utf8' })
    if (!cargo.error) assert.doesNotMatch(cargo.stdout, /planted/)
    assert.ok(!fs.existsSync(marker), "the host's cargo ran the run's program")
  })
})

describe('the CLI prints what a run reports without letting it write to the terminal (issue 28)', () => {
  test('a repository planted under a name with CR and ANSI codes: the warning shows them escaped', (t) => {
    const tree = tempTree(t)
    const CLI = path.join(ROOT, 'bin', 'sandspawn.js')
    const script = `d="$(printf 'x\\r\\033[2Ksandspawn: all clear\\033[8m')" && mkdir -p "$d/r" && git init -q "$d/r" && git -C "$d/r" config core.fsmonitor 'echo hi'`
    const r = spawnSync(process.execPath, [CLI, '--mode', 'workspace-write', '--', 'bash', '-c', script], { cwd: tree.ws, encoding: 'utf8', timeout: 60000 })
    assert.equal(r.status, 0, r.stderr)
    const warning = r.stderr.split('\n').find((l) => l.includes('warning: repository-created'))
    assert.ok(warning, r.stderr)
    assert.doesNotMatch(r.stderr, /[\r\u001b]/, 'no raw CR or ESC reaches the terminal')
    assert.ok(warning.includes('x\\r\\e[2Ksandspawn: all clear\\e[8m/r/.git'), warning)
  })

  test('printable() escapes controls, bidi overrides and backslashes, and nothing else', () => {
    const { printable } = require('../../lib/cli/printable')
    assert.equal(printable('/w/a b/é/日本'), '/w/a b/é/日本')
    assert.equal(printable('a\r\nb\t\u001b[0m\u0007\u009b\\'), 'a\\r\\nb\\t\\e[0m\\x07\\x9b\\\\')
    assert.equal(printable('x\u202egnp.exe\u2066\u200b'), 'x\\u202egnp.exe\\u2066\\u200b')
  })

  // Found by an attacker's review: the pattern was a hand list without the `u` flag, so a bidi
  // mark (U+061C), blank fillers (U+3164 HANGUL FILLER draws as a space-wide nothing), a soft
  // hyphen or astral tag characters reached the terminal and could hide or disguise a name.
  test('printable() escapes every invisible, format, bidi, unassigned and lone-surrogate character', () => {
    const { printable } = require('../../lib/cli/printable')
    const hidden = ['\u00ad', '\u034f', '\u061c', '\u115f', '\u1160', '\u180e', '\u200b', '\u200e', '\u2028', '\u2029',
      '\u202a', '\u202e', '\u2060', '\u2066', '\u2069', '\u3164', '\ufe0f', '\ufeff', '\uffa0', '\ufff9', '\ufffb', '\u0378', '\ud800', '\udfff']
    for (const c of hidden) {
      const code = c.charCodeAt(0)
      const escape = code <= 0xff ? `\\x${code.toString(16)}` : `\\u${code.toString(16).padStart(4, '0')}`
      assert.equal(printable(`a${c}b`), `a${escape}b`, `U+${code.toString(16)}`)
    }
    // astral: the form bash's $'...' reads too (explain quotes with it)
    for (const cp of [0xe0001, 0xe0041, 0xe007f, 0xe0100, 0x1d173, 0x10ffff]) {
      assert.equal(printable(`a${String.fromCodePoint(cp)}b`), `a\\U${cp.toString(16).padStart(8, '0')}b`, cp.toString(16))
    }
    // visible text, astral included, stays as it is
    assert.equal(printable('/w/\u{1f600} \u{10400}/\u00e9/\u05d0\u05d1/\u0627'), '/w/\u{1f600} \u{10400}/\u00e9/\u05d0\u05d1/\u0627')
  })
})

describe('what the mounts cannot prevent is reported by the same run (issue 28)', () => {
  const kinds = (r) => r.hostRisks.map((h) => `${h.kind} ${h.path}`)

  test('a folder turned into a git directory: git-directory-created, naming core.fsmonitor', async (t) => {
    const tree = tempTree(t, { git: true })
    fs.mkdirSync(path.join(tree.ws, 'src'))
    fs.writeFileSync(path.join(tree.ws, 'src', 'main.c'), 'int main(){}\n')
    const marker = path.join(tree.out, 'PWNED')
    const script = [
      'cd src',
      'printf "ref: refs/heads/main\\n" > HEAD',
      'mkdir -p objects refs/heads',
      `printf '[core]\\n\\tbare = false\\n\\tworktree = ..\\n\\tfsmonitor = touch ${marker}; false\\n' > config`,
    ].join(' && ')
    const r = await sh(script, { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
    const risk = r.hostRisks.find((h) => h.kind === 'git-directory-created')
    assert.ok(risk, kinds(r).join('\n'))
    assert.equal(risk.path, path.join(tree.ws, 'src'))
    assert.match(risk.detail, /core\.fsmonitor/)
  })

  test('a nested repository swapped by renaming its parent: repository-created', async (t) => {
    const tree = tempTree(t)
    const repo = path.join(tree.ws, 'libs', 'dep')
    fs.mkdirSync(repo, { recursive: true })
    execFileSync('git', ['init', '-q', repo])
    const marker = path.join(tree.out, 'PWNED')
    const script = `mv libs libs.real && mkdir -p libs/dep && git init -q libs/dep && git -C libs/dep config core.fsmonitor ${q(`touch ${marker}; false`)}`
    const r = await sh(script, { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
    const risk = r.hostRisks.find((h) => h.kind === 'repository-created' && h.path === path.join(repo, '.git'))
    assert.ok(risk, kinds(r).join('\n'))
    assert.match(risk.detail, /core\.fsmonitor/)
  })

  test('a repository planted deeper than the walk goes (32 levels): scan-incomplete names the area', async (t) => {
    const tree = tempTree(t)
    const deep = Array.from({ length: 34 }, (_, i) => `d${i}`).join('/')
    const r = await sh(`mkdir -p ${deep} && git init -q ${deep} && git -C ${deep} config core.fsmonitor x`, { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
    const risk = r.hostRisks.find((h) => h.kind === 'scan-incomplete')
    assert.ok(risk, `hostRisks: ${kinds(r).join('\n')}`)
    assert.ok(path.join(tree.ws, deep).startsWith(risk.path), risk.path)
  })
})

describe('a workspace entry made a symlink to a git directory planted in the writable /tmp (found by an attacker\'s review)', () => {
  // The run makes /tmp/x a git directory (core.worktree=., core.fsmonitor), then `rm -rf lib && ln
  // -s /tmp/x lib`: the host's `cd lib && git status` runs git in /tmp/x. The walk never follows
  // links, and never walks /tmp: the link itself is judged.
  const plantInTmp = (evil, ws, marker, link = 'lib') =>
    [
      `mkdir -p ${q(evil)} && cd ${q(evil)} && git init -q --bare . && git config core.bare false && git config core.worktree .`,
      `git config core.fsmonitor ${q(`touch ${marker}; false`)}`,
      `cd ${q(ws)} && rm -rf ${link} && ln -s ${q(evil)} ${link}`,
    ].join(' && ')

  test('a link to it: git-directory-created at the link, naming its target and core.fsmonitor', async (t) => {
    const tree = tempTree(t, { git: true })
    fs.mkdirSync(path.join(tree.ws, 'lib'))
    fs.writeFileSync(path.join(tree.ws, 'lib', 'a.js'), 'x\n')
    const evil = fs.mkdtempSync('/tmp/sandspawn-link-')
    t.after(() => fs.rmSync(evil, { recursive: true, force: true }))
    const r = await sh(plantInTmp(evil, tree.ws, path.join(tree.out, 'PWNED')), { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
    const risk = r.hostRisks.find((h) => h.path === path.join(tree.ws, 'lib'))
    assert.ok(risk, `hostRisks: ${JSON.stringify(r.hostRisks)}`)
    assert.equal(risk.kind, 'git-directory-created')
    assert.match(risk.detail, /symlink/)
    assert.ok(risk.detail.includes(evil), risk.detail)
    assert.match(risk.detail, /core\.fsmonitor/)
  })

  test('a link below it, and a link to a place in /tmp that does not exist yet: reported too', async (t) => {
    const tree = tempTree(t, { git: true })
    const evil = fs.mkdtempSync('/tmp/sandspawn-link-')
    t.after(() => fs.rmSync(evil, { recursive: true, force: true }))
    // Not made yet: the next run (or any process on the host) can make it a repository.
    const notYet = `${evil}-not-yet/x`
    const script = `${plantInTmp(evil, tree.ws, path.join(tree.out, 'PWNED'))} && mkdir -p ${q(evil)}/deep/er && ln -s ${q(evil)}/deep/er below && ln -s ${q(notYet)} later`
    const r = await sh(script, { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
    const at = (p) => r.hostRisks.find((h) => h.path === path.join(tree.ws, p))
    assert.equal(at('below')?.kind, 'git-directory-created', JSON.stringify(r.hostRisks))
    assert.equal(at('later')?.kind, 'link-to-shared-directory', JSON.stringify(r.hostRisks))
  })

  // Found by an attacker's review: `lib -> /proc/self/cwd/../../tmp/x` (as many `..` as the
  // workspace's parent is deep). The judge followed `/proc/self/cwd` in the host Node process,
  // whose cwd was the workspace (the usual agent setup): from there it led nowhere, `hostRisks: []`.
  // A shell in the workspace's parent then ran `cd ws/lib && git status`, landed in /tmp/x, and git
  // ran the planted fsmonitor. A link through /proc's links leads wherever the process following
  // it is: it cannot be judged, and says so.
  test("a link through /proc/self/cwd, judged from the host process's own cwd: reported, not judged by where it leads from there", (t) => {
    const tree = tempTree(t, { git: true })
    const evil = fs.mkdtempSync('/tmp/sandspawn-link-')
    t.after(() => fs.rmSync(evil, { recursive: true, force: true }))
    const ups = '../'.repeat(tree.root.split('/').filter(Boolean).length)
    const magic = `/proc/self/cwd/${ups}${evil.slice(1)}`
    const script = plantInTmp(evil, tree.ws, path.join(tree.out, 'PWNED')).replace(`ln -s ${q(evil)} lib`, `ln -s ${q(magic)} lib`)
    // The host process's cwd is the workspace, as an agent's is.
    const js = `require(${JSON.stringify(ROOT)}).spawnSandboxed(['bash', '-c', ${JSON.stringify(script)}], { cwd: '.', timeout: 20000, sandbox: 'workspace-write' })
      .then((r) => process.stdout.write(JSON.stringify(r)), (e) => process.stdout.write(JSON.stringify({ error: e.code, message: e.message })))`
    const ran = spawnSync(process.execPath, ['-e', js], { cwd: tree.ws, encoding: 'utf8', timeout: 60000 })
    assert.equal(ran.status, 0, ran.stderr)
    const r = JSON.parse(ran.stdout)
    assert.equal(r.exitCode, 0, show(r))
    // What the host's shell in the workspace's parent finds there: the planted repository.
    const from = spawnSync('sh', ['-c', 'cd ws/lib && pwd -P'], { cwd: tree.root, encoding: 'utf8' })
    assert.equal(from.stdout.trim(), fs.realpathSync(evil), 'the link leads to the planted repository from the parent')
    const risk = r.hostRisks.find((h) => h.path === path.join(tree.ws, 'lib'))
    assert.ok(risk, `hostRisks: ${JSON.stringify(r.hostRisks)}`)
    assert.equal(risk.kind, 'scan-incomplete')
    assert.match(risk.detail, /\/proc/)
    assert.ok(risk.detail.includes(magic), risk.detail)
  })

  test('links inside the workspace, and links made before the run, are not reported', async (t) => {
    const tree = tempTree(t, { git: true })
    fs.mkdirSync(path.join(tree.ws, 'dist', 'v1'), { recursive: true })
    fs.symlinkSync('/tmp', path.join(tree.ws, 'old-tmp'))
    await new Promise((resolve) => setTimeout(resolve, 100))
    const r = await sh('ln -s dist/v1 latest && ln -s . self && ln -s /usr/lib usrlib', { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
    assert.deepEqual(r.hostRisks, [])
  })
})

test('a link into sandspawn\'s own state directory (the tool caches a run writes) is reported like one into /tmp (found by a fixer)', async (t) => {
  // What a run writes in its ~/.npm lands in the tool-cache store on the host (a slot's upper, then
  // the workspace's base): a repository planted there, and a workspace entry made a link to it,
  // made the host's `cd lib && git status` run its core.fsmonitor. The store's path can be worked
  // out from the workspace; a link to a place there that does not exist yet is judged by where it
  // will lead, as one into /tmp is.
  const tree = tempTree(t, { git: true })
  const caches = process.env.SANDSPAWN_TOOL_CACHE_DIR || path.join(os.homedir(), '.local', 'state', 'sandspawn', 'tool-caches')
  const state = path.join(process.env.XDG_STATE_HOME || path.join(os.homedir(), '.local', 'state'), 'sandspawn')
  const script = `ln -s ${q(path.join(caches, 'workspaces', 'ws-0-0', 'npm', 'base', 'evil'))} lib && ln -s ${q(path.join(state, 'runs', 'x'))} other`
  const r = await sh(script, { cwd: tree.ws, sandbox: 'workspace-write' })
  assert.equal(r.exitCode, 0, show(r))
  const at = (p) => r.hostRisks.find((h) => h.path === path.join(tree.ws, p))
  assert.equal(at('lib')?.kind, 'link-to-shared-directory', JSON.stringify(r.hostRisks))
  assert.equal(at('other')?.kind, 'link-to-shared-directory', JSON.stringify(r.hostRisks))
})

describe('a repository disguised as a placeholder is still undone (found merging #31)', () => {
  // Placeholders (mode 1500 directories, symlinks to /dev/null/sandspawn-held) are a plan's own and
  // are left alone; a command can give its own .git that mode (sticky bit and all, as its owner)
  // after filling it.
  const plant = (top, marker) =>
    [
      `cd ${q(top)}`,
      'mkdir -m 1500 .git && chmod u+w .git',
      'printf "ref: refs/heads/main\\n" > .git/HEAD',
      'mkdir -p .git/objects .git/refs/heads',
      `printf '[core]\\n\\tfsmonitor = touch ${marker}; false\\n' > .git/config`,
      'chmod 1500 .git',
      'sleep 0.2',
    ].join(' && ')

  test('at the workspace top (kept absent): moved aside and reported; git status runs nothing', async (t) => {
    const tree = tempTree(t)
    const marker = path.join(tree.out, 'PWNED')
    const r = await sh(plant(tree.ws, marker), { cwd: tree.ws, sandbox: 'workspace-write' })
    // The keeper looks again at an entry in a placeholder's shape when its mode changes (dfa9142),
    // so the `chmod u+w` has it moved aside, and whichever later step of the script comes first
    // after the move (the write of HEAD on a quiet machine, `mkdir -p` or the `chmod` on a loaded
    // one: stop 53's CI) fails on the missing .git: earlier, stricter, and what matters is below.
    assert.ok(r.exitCode === 0 || /\.git(\/[\w/]+)?.?: No such file or directory/.test(r.stderr), show(r))
    const risk = r.hostRisks.find((h) => h.path === path.join(tree.ws, '.git'))
    assert.ok(risk, `hostRisks: ${JSON.stringify(r.hostRisks)}`)
    assert.match(risk.detail, /moved aside/)
    assert.equal(fs.existsSync(path.join(tree.ws, '.git')), false, 'no .git is left where the host runs git')
    spawnSync('git', ['status'], { cwd: tree.ws, encoding: 'utf8' })
    assert.equal(fs.existsSync(marker), false, 'the host ran the planted fsmonitor')
  })

  test('in a subdirectory (a mount cannot prevent it): reported as a repository, naming core.fsmonitor', async (t) => {
    const tree = tempTree(t)
    const dep = path.join(tree.ws, 'dep')
    fs.mkdirSync(dep)
    const r = await sh(plant(dep, path.join(tree.out, 'PWNED')), { cwd: tree.ws, sandbox: 'workspace-write' })
    assert.equal(r.exitCode, 0, show(r))
    const risk = r.hostRisks.find((h) => h.path === path.join(dep, '.git') && h.kind === 'repository-created')
    assert.ok(risk, `hostRisks: ${JSON.stringify(r.hostRisks)}`)
    assert.match(risk.detail, /core\.fsmonitor/)
  })
})

test('a link whose way goes out of a directory not made yet and back through the host\'s link into /tmp is reported (found by an attacker\'s review, mode28)', async (t) => {
  // `b.sh -> later/../cache/b.sh`, `cache` the host's link into /tmp, `later` missing: judged by
  // taking `later/..` away lexically, the way was `ws/cache/b.sh`, in the workspace, and nothing
  // was said. Once a later run (or the host) makes `later`, the link leads into /tmp.
  const tree = tempTree(t)
  const shared = fs.mkdtempSync('/tmp/sandspawn-via-')
  t.after(() => fs.rmSync(shared, { recursive: true, force: true }))
  fs.symlinkSync(shared, path.join(tree.ws, 'cache'))
  const r = await sh('ln -s later/../cache/b.sh b.sh', { cwd: tree.ws, sandbox: 'workspace-write' })
  assert.equal(r.exitCode, 0, show(r))
  const at = (p) => r.hostRisks.find((h) => h.path === path.join(tree.ws, p))
  assert.equal(at('b.sh')?.kind, 'link-to-shared-directory', JSON.stringify(r.hostRisks))
})
