'use strict'
// denyRead: files and directories the command can neither read nor list, outside and inside the
// workspace, whatever path it uses to reach them. The secrets' contents (and the names of files in
// a denied directory) must never appear in what the command prints; the host files stay intact.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { tempTree, treeSnapshot, show, sh, q, token, rmrf } = require('./helpers')
const { startSandboxed } = require('../..')

/**
 * Secrets: a file and a directory outside the workspace, a file and a directory inside it, and
 * symlinks to each planted in the workspace beforehand.
 */
function secrets(t) {
  const tree = tempTree(t)
  const s = {
    tree,
    outFile: path.join(tree.out, 'secret.txt'),
    outDir: path.join(tree.root, 'outdir'),
    inFile: path.join(tree.ws, 'secret.txt'),
    inDir: path.join(tree.ws, 'secretdir'),
    tokens: { outFile: token('S1'), outDir: token('S2'), outDirName: token('N2'), inFile: token('S3'), inDir: token('S4'), inDirName: token('N4') },
  }
  fs.writeFileSync(s.outFile, `${s.tokens.outFile}\n`)
  fs.mkdirSync(s.outDir)
  fs.writeFileSync(path.join(s.outDir, `${s.tokens.outDirName}.txt`), `${s.tokens.outDir}\n`)
  fs.writeFileSync(s.inFile, `${s.tokens.inFile}\n`)
  fs.mkdirSync(s.inDir)
  fs.writeFileSync(path.join(s.inDir, `${s.tokens.inDirName}.txt`), `${s.tokens.inDir}\n`)
  fs.symlinkSync(s.outFile, path.join(tree.ws, 'link-out'))
  fs.symlinkSync('secret.txt', path.join(tree.ws, 'link-in'))
  fs.symlinkSync(s.outDir, path.join(tree.ws, 'link-outdir'))
  fs.symlinkSync('secretdir', path.join(tree.ws, 'link-indir'))
  fs.writeFileSync(path.join(tree.ws, 'public.txt'), 'public\n')
  s.policy = { mode: 'workspace-write', denyRead: [s.outFile, s.outDir, s.inFile, s.inDir] }
  s.snap = () => ({ out: treeSnapshot(tree.out), outDir: treeSnapshot(s.outDir), inFile: treeSnapshot(s.inFile), inDir: treeSnapshot(s.inDir) })
  return s
}

function assertNoLeak(s, r) {
  for (const [name, tok] of Object.entries(s.tokens)) {
    for (const field of ['stdout', 'stderr', 'aggregatedOutput']) {
      assert.ok(!r[field].includes(tok), `secret ${name} leaked into ${field}\n${show(r)}`)
    }
  }
}

/** No file the command left in the workspace holds a secret (a copy made by cp, tar, ...). */
function assertNoCopies(s) {
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (p === s.inFile || p === s.inDir) continue
      if (e.isDirectory()) walk(p)
      else if (e.isFile()) {
        const text = fs.readFileSync(p, 'utf8')
        for (const [name, tok] of Object.entries(s.tokens)) assert.ok(!text.includes(tok), `secret ${name} was copied to ${p}`)
      }
    }
  }
  walk(s.tree.ws)
}

/** Each attempt must fail or print nothing secret; reads of a denied file must fail outright. */
/** A minimal git directory at `top` (`.git` with refs, HEAD and config): a repository the plan
 * carves out read-only. */
function gitDir(top) {
  fs.mkdirSync(path.join(top, '.git', 'refs'), { recursive: true })
  fs.writeFileSync(path.join(top, '.git', 'HEAD'), 'ref: refs/heads/main\n')
  fs.writeFileSync(path.join(top, '.git', 'config'), '[core]\n\trepositoryformatversion = 0\n')
}

function attempts(list) {
  return list.map(([label, cmd]) => `if ( ${cmd} ); then echo ${q(`SUCCEEDED ${label}`)}; else echo ${q(`failed ${label}`)}; fi`).join('\n')
}

const ATTACKS = [
  {
    name: 'cat',
    mustFail: true,
    list: (s) => [
      ['outside file', `cat ${q(s.outFile)}`],
      ['outside dir file', `cat ${q(s.outDir)}/*.txt`],
      ['inside file', `cat ${q(s.inFile)}`],
      ['inside dir file', `cat ${q(s.inDir)}/*.txt`],
      ['python open', `python3 -c "print(open(${JSON.stringify(s.outFile)}).read())"`],
      ['dd', `dd if=${q(s.inFile)} status=none`],
      ['chmod then cat', `chmod 644 ${q(s.inFile)} 2>/dev/null; cat ${q(s.inFile)}`],
    ],
  },
  {
    name: 'ls',
    list: (s) => [
      ['ls outside dir', `ls -la ${q(s.outDir)}`],
      ['ls inside dir', `ls -la ${q(s.inDir)}`],
      ['ls glob', `echo ${q(s.outDir)}/* ${q(s.inDir)}/*`],
      ['ls -R workspace', 'ls -laR .'],
    ],
  },
  {
    name: 'find',
    list: (s) => [
      ['find root', `find ${q(s.tree.root)} -type f -exec cat {} +`],
      ['find workspace', 'find . -exec cat {} + 2>&1'],
      ['grep -r', `grep -r S ${q(s.tree.root)}`],
    ],
  },
  {
    name: 'cp',
    mustFail: true,
    list: (s) => [
      ['cp outside file', `cp ${q(s.outFile)} ./c1 && cat ./c1`],
      ['cp -r outside dir', `cp -r ${q(s.outDir)} ./c2 && cat ./c2/*`],
      ['cp inside file', `cp ${q(s.inFile)} ./c3 && cat ./c3`],
      ['cp -r inside dir', `cp -r ${q(s.inDir)} ./c4 && cat ./c4/*`],
      ['tar', `tar cf - ${q(s.inFile)} ${q(s.outFile)} > ./c5.tar && tar xOf ./c5.tar`],
    ],
  },
  {
    name: 'through /proc/self/root and /proc/1/root',
    mustFail: true,
    list: (s) => [
      ['self root outside', `cat /proc/self/root${s.outFile}`],
      ['self root inside', `cat /proc/self/root${s.inFile}`],
      ['self root dir', `cat /proc/self/root${s.outDir}/*.txt`],
      ['pid 1 root', `cat /proc/1/root${s.outFile}`],
      ['self root inside dir', `cat /proc/self/root${s.inDir}/*.txt`],
    ],
  },
  {
    name: 'through /proc/self/cwd',
    mustFail: true,
    list: () => [
      ['cwd inside file', 'cat /proc/self/cwd/secret.txt'],
      ['cwd inside dir', 'cat /proc/self/cwd/secretdir/*.txt'],
      ['cwd ../ outside', 'cat /proc/self/cwd/../out/secret.txt'],
      ['cwd ../ outside dir', 'cat /proc/self/cwd/../outdir/*.txt'],
    ],
  },
  {
    name: 'relative paths',
    mustFail: true,
    list: () => [
      ['relative inside', 'cat secret.txt'],
      ['relative ./', 'cat ./secretdir/../secret.txt'],
      ['relative dir', 'cat secretdir/*.txt'],
      ['relative ../', 'cat ../out/secret.txt'],
      ['relative ../ dir', 'cat ../outdir/*.txt'],
      ['cd into dir', 'cd ../outdir && cat *.txt'],
    ],
  },
  {
    name: 'symlinks planted in the workspace beforehand',
    mustFail: true,
    list: () => [
      ['link to outside file', 'cat link-out'],
      ['link to inside file', 'cat link-in'],
      ['link to outside dir', 'cat link-outdir/*.txt'],
      ['link to inside dir', 'cat link-indir/*.txt'],
    ],
  },
  {
    name: 'links and renames made inside the sandbox',
    mustFail: true,
    list: (s) => [
      ['new symlink', `ln -s ${q(s.outFile)} l1 && cat l1`],
      ['new hard link', 'ln secret.txt h1 && cat h1'],
      ['hard link outside', `ln ${q(s.outFile)} h2 && cat h2`],
      ['mv the denied file', 'mv secret.txt moved.txt && cat moved.txt'],
      ['mv the denied dir', 'mv secretdir moveddir && cat moveddir/*.txt'],
      ['rm and look underneath', 'rm -rf secretdir && cat secretdir/*.txt'],
    ],
  },
]

describe('denyRead (workspace-write, secrets outside and inside the workspace)', { concurrency: 4 }, () => {
  for (const a of ATTACKS) {
    test(a.name, async (t) => {
      const s = secrets(t)
      const before = s.snap()
      const list = a.list(s)
      const r = await sh(attempts(list), { cwd: s.tree.ws, sandbox: s.policy })
      assertNoLeak(s, r)
      assert.equal(r.exitCode, 0, show(r))
      if (a.mustFail) {
        for (const [label] of list) assert.ok(r.stdout.includes(`failed ${label}\n`), `"${label}" did not fail\n${show(r)}`)
      }
      assert.deepEqual(s.snap(), before, `a secret changed on the host\n${show(r)}`)
      assertNoCopies(s)
    })
  }

  test('control: other files in the workspace stay readable', async (t) => {
    const s = secrets(t)
    const r = await sh('cat public.txt', { cwd: s.tree.ws, sandbox: s.policy })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(r.stdout, 'public\n')
  })

  test('denyRead given as a symlink or a non-normalized path denies the real target', async (t) => {
    const s = secrets(t)
    const policy = { mode: 'workspace-write', denyRead: [path.join(s.tree.ws, 'link-out'), `${s.tree.ws}/../outdir/`, `${s.tree.ws}//./secret.txt`] }
    const list = [
      ['real path of the link', `cat ${q(s.outFile)}`],
      ['the link', 'cat link-out'],
      ['dir', `cat ${q(s.outDir)}/*.txt`],
      ['inside', 'cat secret.txt'],
    ]
    const r = await sh(attempts(list), { cwd: s.tree.ws, sandbox: policy })
    for (const tok of [s.tokens.outFile, s.tokens.outDir, s.tokens.outDirName, s.tokens.inFile]) {
      assert.ok(!r.aggregatedOutput.includes(tok), `secret leaked\n${show(r)}`)
    }
    for (const [label] of list) assert.ok(r.stdout.includes(`failed ${label}\n`), `"${label}" did not fail\n${show(r)}`)
  })

  // A missing denyRead path was skipped, and the next run resolved it through whatever the last run
  // had put there: a link to a directory with a non-UTF-8 name made every later run fail
  // (ERR_SANDBOX_UNSUPPORTED, "not valid UTF-8") until someone removed it, and a link to another
  // directory moved the mask there, off the path the caller named. Found by an attacker's review.
  for (const [what, plant] of [
    ['a link to a non-UTF-8 directory', `mkdir "$(printf 'd\\377')" && ln -s "$(printf 'd\\377')" cfg`],
    ['a link to another directory', 'mkdir other && echo public > other/f && ln -s other cfg'],
    ['a file', 'echo planted > cfg'],
  ]) {
    test(`a missing denyRead path: ${what} the run plants there is moved aside and reported; the next run starts and the path stays denied`, async (t) => {
      const tree = tempTree(t)
      const cfg = path.join(tree.ws, 'cfg')
      const policy = { mode: 'workspace-write', denyRead: [cfg] }
      const r1 = await sh(`${plant} && echo planted`, { cwd: tree.ws, sandbox: policy })
      assert.equal(r1.stdout, 'planted\n', show(r1))
      const risk = r1.hostRisks.find((h) => h.path === cfg)
      assert.ok(risk && risk.kind === 'protected-name-created' && /moved aside/.test(risk.detail) && /denyRead/.test(risk.detail), JSON.stringify(r1.hostRisks))
      assert.throws(() => fs.lstatSync(cfg), /ENOENT/, 'what the run planted is still at the denied path')
      // The host puts its secret there now; the next runs start, and cannot read it.
      const secret = token('S5')
      fs.writeFileSync(cfg, `${secret}\n`)
      const r2 = await sh('cat cfg; ls -A cfg; cat other/f 2>/dev/null; echo ran', { cwd: tree.ws, sandbox: policy })
      assert.equal(r2.exitCode, 0, show(r2))
      assert.match(r2.stdout, /ran\n$/, show(r2))
      assert.ok(!r2.aggregatedOutput.includes(secret), `the denied path was read in the next run\n${show(r2)}`)
      assert.ok(!r2.hostRisks.some((h) => h.path.startsWith(tree.ws)), JSON.stringify(r2.hostRisks))
    })
  }

  /** `ws/real/key` holds a secret; `ws/cfg -> real` is the host's link a denyRead path goes through. */
  function secretBehindLink(t, tag) {
    const tree = tempTree(t)
    const secret = token(tag)
    fs.mkdirSync(path.join(tree.ws, 'real'))
    fs.writeFileSync(path.join(tree.ws, 'real/key'), `${secret}\n`)
    fs.symlinkSync('real', path.join(tree.ws, 'cfg'))
    return { tree, secret, cfg: path.join(tree.ws, 'cfg') }
  }

  const REUSE_INODE = `my $was = (lstat "cfg")[1]; mkdir "other"; open(my $f, ">", "other/key"); print $f "decoy\\n"; close $f;
    unlink "cfg"; my @set_aside;
    for my $n (0 .. 19999) { symlink "other", "cfg"; if ((lstat "cfg")[1] == $was) { print "reused\\n"; last } push @set_aside, ".fill$n"; rename "cfg", $set_aside[-1] }
    unlink @set_aside`
  // A denyRead path given through the host's symlink in the workspace (`cfg -> real`) was masked at
  // the link's target only: a run replaced or removed the link, and the next run's mask landed
  // wherever the run pointed it, leaving `real` readable. Found by an attacker's review.
  for (const [what, plant] of [
    ['replaced by a link to another directory', 'rm cfg && mkdir other && ln -s other cfg'],
    ['removed', 'rm cfg'],
    ['replaced by a directory', 'rm cfg && mkdir cfg'],
    // Made again at once, the new link gets the inode the old one freed (the file system hands out
    // the lowest free one: links are set aside until it does), and the check after the run, which
    // compared the inode alone, saw the same link. Found by an attacker's review.
    ['replaced by a link to another directory on the inode it freed', `perl -e ${q(REUSE_INODE)} | grep -qx reused`],
  ]) {
    test(`the host's symlink a denyRead path is resolved through, ${what} by a run: put back and reported; the next run still cannot read its target`, async (t) => {
      const { tree, secret, cfg } = secretBehindLink(t, 'S6')
      const policy = { mode: 'workspace-write', denyRead: [cfg] }
      const r1 = await sh(`cat cfg/key real/key; ${plant} && echo planted`, { cwd: tree.ws, sandbox: policy })
      assert.equal(r1.stdout, 'planted\n', show(r1))
      const risk = r1.hostRisks.find((h) => h.path === cfg)
      assert.ok(risk && /denyRead/.test(risk.detail) && /undone: the link was made again/.test(risk.detail), JSON.stringify(r1.hostRisks))
      assert.equal(fs.readlinkSync(cfg), 'real')
      const r2 = await sh('cat real/key cfg/key; ls -A real; echo ran', { cwd: tree.ws, sandbox: policy })
      assert.match(r2.stdout, /ran\n$/, show(r2))
      assert.ok(!r2.aggregatedOutput.includes(secret), `the denied directory was read in the next run\n${show(r2)}`)
      assert.equal(fs.readFileSync(path.join(tree.ws, 'real/key'), 'utf8'), `${secret}\n`)
    })
  }

  // A run that swapped the link while it lived sent the mask of a run started meanwhile (the same
  // policy) to the link's new target, and that run read the old one; the first run's putting the
  // link back after it came too late. Found by an attacker's review.
  test("the host's symlink a denyRead path is resolved through, swapped by a run that is still going on: a run started meanwhile masks both targets and says so", async (t) => {
    const { tree, secret, cfg } = secretBehindLink(t, 'S7')
    const policy = { mode: 'workspace-write', denyRead: [path.join(cfg, 'key')] }
    const swap = 'mkdir other && echo decoy > other/key && rm cfg && ln -s other cfg && echo swapped > swapped.txt; sleep 30'
    const a = await startSandboxed(['sh', '-c', swap], { cwd: tree.ws, sandbox: policy, timeout: 40000 })
    t.after(() => a.kill('SIGKILL'))
    for (let i = 0; i < 200 && !fs.existsSync(path.join(tree.ws, 'swapped.txt')); i++) await new Promise((r) => setTimeout(r, 50))
    assert.equal(fs.readlinkSync(cfg), 'other', 'run A swapped the link')
    const c = await sh('cat real/key; cat cfg/key; echo ran', { cwd: tree.ws, sandbox: policy })
    assert.match(c.stdout, /ran\n$/, show(c))
    assert.ok(!c.aggregatedOutput.includes(secret), `the run started while the link was swapped read the denied file\n${show(c)}`)
    assert.ok(!c.aggregatedOutput.includes('decoy'), `the link's new target was not masked\n${show(c)}`)
    const said = c.hostRisks.find((h) => h.path === cfg)
    assert.ok(said && /denyRead/.test(said.detail) && /both/.test(said.detail), JSON.stringify(c.hostRisks))
    a.kill('SIGKILL')
    const ra = await a.wait()
    assert.ok(ra.hostRisks.some((h) => h.path === cfg && /denyRead/.test(h.detail)), `the run that swapped the link says so\n${JSON.stringify(ra.hostRisks)}`)
    assert.equal(fs.readlinkSync(cfg), 'real')
    const next = await sh('cat real/key cfg/key; echo ran', { cwd: tree.ws, sandbox: policy })
    assert.ok(!next.aggregatedOutput.includes(secret), show(next))
    assert.ok(!next.hostRisks.some((h) => h.path === cfg), JSON.stringify(next.hostRisks))
  })

  test('a secret under /tmp (writable in workspace-write) and in an extra writable root', async (t) => {
    const s = secrets(t)
    const tmpDir = fs.mkdtempSync('/tmp/sandspawn-sec-')
    t.after(() => rmrf(tmpDir))
    const tmpSecret = path.join(tmpDir, 'secret.txt')
    const tok1 = token('S5')
    fs.writeFileSync(tmpSecret, `${tok1}\n`)
    const extra = path.join(s.tree.root, 'extra')
    fs.mkdirSync(extra)
    const extraSecret = path.join(extra, 'secret.txt')
    const tok2 = token('S6')
    fs.writeFileSync(extraSecret, `${tok2}\n`)
    const policy = { mode: 'workspace-write', writableRoots: [extra], denyRead: [tmpSecret, extraSecret] }
    const list = [
      ['/tmp secret', `cat ${q(tmpSecret)}`],
      ['/tmp secret via /proc/self/root', `cat /proc/self/root${tmpSecret}`],
      ['writable root secret', `cat ${q(extraSecret)}`],
      ['mv /tmp secret', `mv ${q(tmpSecret)} ${q(tmpSecret + '.x')} && cat ${q(tmpSecret + '.x')}`],
    ]
    const r = await sh(`echo ok > ${q(path.join(tmpDir, 'w'))} && echo ok > ${q(path.join(extra, 'w'))}\n${attempts(list)}`, { cwd: s.tree.ws, sandbox: policy })
    assert.ok(!r.aggregatedOutput.includes(tok1), `the /tmp secret leaked\n${show(r)}`)
    assert.ok(!r.aggregatedOutput.includes(tok2), `the writable-root secret leaked\n${show(r)}`)
    for (const [label] of list) assert.ok(r.stdout.includes(`failed ${label}\n`), `"${label}" did not fail\n${show(r)}`)
    assert.equal(fs.readFileSync(path.join(tmpDir, 'w'), 'utf8'), 'ok\n', 'control: /tmp was not writable')
    assert.equal(fs.readFileSync(tmpSecret, 'utf8'), `${tok1}\n`)
    assert.equal(fs.readFileSync(extraSecret, 'utf8'), `${tok2}\n`)
  })

  test('a secret inside a read-only carve-out (a nested repository, a readOnlyPaths directory) stays denied, among many carve-outs', async (t) => {
    // The helper copies each carve-out with the mounts below it only where there are some (a
    // denyRead mask, made by bwrap before it): a copy without them would show what the mask hides.
    // Twenty repositories beside it make the other carve-outs the copies could be confused with.
    const s = secrets(t)
    const ws = s.tree.ws
    for (let i = 0; i < 20; i++) gitDir(path.join(ws, 'deps', `r${i}`))
    const nested = path.join(ws, 'deps', 'r7', '.git')
    const tokens = [token('G1'), token('G2'), token('R1')]
    fs.writeFileSync(path.join(nested, 'secret'), `${tokens[0]}\n`)
    fs.mkdirSync(path.join(nested, 'secret-dir'))
    fs.writeFileSync(path.join(nested, 'secret-dir', 'x'), `${tokens[1]}\n`)
    const ro = path.join(ws, 'frozen')
    fs.mkdirSync(path.join(ro, 'deep'), { recursive: true })
    fs.writeFileSync(path.join(ro, 'deep', 'secret.txt'), `${tokens[2]}\n`)
    fs.writeFileSync(path.join(ro, 'public.txt'), 'public\n')
    // A repository inside the read-only directory: its carve-out lies over the directory's.
    gitDir(path.join(ro, 'inner'))
    tokens.push(token('I1'))
    fs.writeFileSync(path.join(ro, 'inner', '.git', 'secret'), `${tokens[3]}\n`)
    const policy = {
      mode: 'workspace-write',
      readOnlyPaths: [ro],
      denyRead: [path.join(nested, 'secret'), path.join(nested, 'secret-dir'), path.join(ro, 'deep', 'secret.txt'), path.join(ro, 'inner', '.git', 'secret')],
    }
    const list = [
      ['file in a nested .git', 'cat deps/r7/.git/secret'],
      ['dir in a nested .git', 'cat deps/r7/.git/secret-dir/x'],
      ['file in a readOnlyPaths dir', 'cat frozen/deep/secret.txt'],
      ['file in a repository inside it', 'cat frozen/inner/.git/secret'],
      ['write in that repository', 'echo x > frozen/inner/.git/config'],
      ['write in the nested .git', 'echo x > deps/r7/.git/config'],
      ['write in the readOnlyPaths dir', 'echo x > frozen/public.txt'],
    ]
    const r = await sh(`cat frozen/public.txt deps/r3/.git/HEAD frozen/inner/.git/HEAD\n${attempts(list)}\ngrep -r . deps frozen 2>/dev/null`, { cwd: ws, sandbox: policy })
    for (const tok of tokens) assert.ok(!r.aggregatedOutput.includes(tok), `a secret leaked\n${show(r)}`)
    for (const [label] of list) assert.ok(r.stdout.includes(`failed ${label}\n`), `"${label}" did not fail\n${show(r)}`)
    assert.ok(r.stdout.startsWith('public\nref: refs/heads/main\nref: refs/heads/main\n'), `control: the carve-outs stay readable\n${show(r)}`)
  })

  test('a writable root inside a read-only carve-out stays writable, a carve-out without mounts below is read-only whole, among many carve-outs', async (t) => {
    // Linux 6.15+: a carve-out with no mount below it is copied read-only in one call
    // (open_tree_attr), whose attribute goes to every mount of the copy; one with a mount below
    // (a writable root, a denyRead mask) is made read-only at its top alone, so what lies below
    // keeps its flags.
    const s = secrets(t)
    const ws = s.tree.ws
    for (let i = 0; i < 20; i++) gitDir(path.join(ws, 'deps', `r${i}`))
    const ro = path.join(ws, 'frozen')
    fs.mkdirSync(path.join(ro, 'out'), { recursive: true })
    fs.mkdirSync(path.join(ws, 'deps', 'r4', '.git', 'hooks', 'out'), { recursive: true })
    const tok = token('M1')
    fs.writeFileSync(path.join(ws, 'deps', 'r9', '.git', 'secret'), `${tok}\n`)
    const policy = {
      mode: 'workspace-write',
      readOnlyPaths: [ro],
      writableRoots: [path.join(ro, 'out')],
      denyRead: [path.join(ws, 'deps', 'r9', '.git', 'secret')],
    }
    const list = [
      ['write in the readOnlyPaths dir', 'echo x > frozen/f'],
      ['write in a nested .git', 'echo x > deps/r3/.git/config'],
      ['write in the .git with a mask', 'echo x > deps/r9/.git/config'],
      ['read the mask', 'cat deps/r9/.git/secret'],
      ['write below a .git', 'echo x > deps/r4/.git/hooks/out/pre-commit'],
    ]
    const r = await sh(`echo w > frozen/out/w && echo wrote-out\n${attempts(list)}`, { cwd: ws, sandbox: policy })
    assert.ok(r.stdout.startsWith('wrote-out\n'), `the writable root inside the carve-out was not writable\n${show(r)}`)
    for (const [label] of list) assert.ok(r.stdout.includes(`failed ${label}\n`), `"${label}" did not fail\n${show(r)}`)
    assert.ok(!r.aggregatedOutput.includes(tok), `the masked file was read\n${show(r)}`)
    assert.equal(fs.readFileSync(path.join(ro, 'out', 'w'), 'utf8'), 'w\n')
    assert.ok(!fs.existsSync(path.join(ws, 'deps', 'r4', '.git', 'hooks', 'out', 'pre-commit')))
  })

  test('denyRead in read-only mode (a secret in $HOME-like dir)', async (t) => {
    const s = secrets(t)
    const policy = { mode: 'read-only', denyRead: [s.outFile, s.inDir] }
    const list = [
      ['file', `cat ${q(s.outFile)}`],
      ['dir', `cat ${q(s.inDir)}/*.txt`],
      ['via link', 'cat link-out'],
    ]
    const r = await sh(attempts(list), { cwd: s.tree.ws, sandbox: policy })
    for (const tok of [s.tokens.outFile, s.tokens.inDir, s.tokens.inDirName]) assert.ok(!r.aggregatedOutput.includes(tok), `secret leaked\n${show(r)}`)
    for (const [label] of list) assert.ok(r.stdout.includes(`failed ${label}\n`), `"${label}" did not fail\n${show(r)}`)
  })
})
