'use strict'
// Filesystem escapes: writing outside the writable set in the default read-only mode and in
// workspace-write (cwd = workspace). Each case checks what the command saw and the host afterwards.

const { describe, test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { tempTree, snapshot, treeSnapshot, show, sh, q, token, rmrf } = require('./helpers')

const HOME = os.homedir()
// EXDEV: a hard link cannot cross the sandbox's mount boundaries.
const DENIED = /Read-only file system|Permission denied|Operation not permitted|Invalid cross-device link/

/**
 * A script that runs every attempt in a subshell and prints `ESCAPED <label>` or `denied <label>`,
 * so one sandbox run covers several variants of an attack.
 */
function attempts(list) {
  return list.map(([label, cmd]) => `if ( ${cmd} ); then echo ${q(`ESCAPED ${label}`)}; else echo ${q(`denied ${label}`)}; fi`).join('\n')
}

function assertAllDenied(r, list) {
  for (const [label] of list) {
    assert.ok(!r.stdout.includes(`ESCAPED ${label}\n`), `attack "${label}" succeeded\n${show(r)}`)
    assert.ok(r.stdout.includes(`denied ${label}\n`), `attack "${label}" did not report\n${show(r)}`)
  }
  assert.equal(r.exitCode, 0, show(r))
  assert.match(r.stderr, DENIED, show(r))
  assert.equal(r.sandboxType, 'bwrap')
}

/** Host paths that no case may change, whatever it attacks. */
function hostState(tree, tok) {
  return {
    out: treeSnapshot(tree.out),
    rootEntries: fs.readdirSync(tree.root).sort(),
    bashrc: snapshot(path.join(HOME, '.bashrc')),
    ssh: snapshot(path.join(HOME, '.ssh')),
    homeNew: snapshot(path.join(HOME, `.${tok}`)),
    passwd: snapshot('/etc/passwd'),
    etcNew: snapshot(`/etc/${tok}`),
    optNew: snapshot(`/opt/${tok}`),
  }
}

/** Undo anything a successful escape left in shared places, so one failure does not litter the host. */
function cleanupShared(before, tok) {
  if (!before.ssh.exists) rmrf(path.join(HOME, '.ssh'))
  rmrf(path.join(HOME, `.${tok}`))
  rmrf(`/etc/${tok}`)
  rmrf(`/etc/${tok}.d`)
  rmrf(`/opt/${tok}`)
}

/** Each case: `setup(tree, tok)` on the host, `list(tree, tok)` of [label, shell command]. */
const CASES = [
  {
    name: 'absolute path outside',
    setup: (t) => fs.writeFileSync(path.join(t.out, 'existing.txt'), 'original\n'),
    list: (t) => [
      ['create', `echo pwned > ${q(path.join(t.out, 'abs.txt'))}`],
      ['overwrite', `echo pwned > ${q(path.join(t.out, 'existing.txt'))}`],
      ['append', `echo pwned >> ${q(path.join(t.out, 'existing.txt'))}`],
      ['truncate', `truncate -s 0 ${q(path.join(t.out, 'existing.txt'))}`],
      ['rm', `rm -f ${q(path.join(t.out, 'existing.txt'))}`],
    ],
  },
  {
    name: '../ from cwd',
    list: () => [
      ['../new', 'echo pwned > ../rel.txt'],
      ['../out/new', 'echo pwned > ../out/rel.txt'],
      ['../../', 'echo pwned > ../../sandspawn-sec-rel.txt'],
      ['./../', 'mkdir ./../newdir'],
    ],
  },
  {
    name: '$HOME dotfiles (~/.bashrc, ~/.ssh/authorized_keys, a new dotfile)',
    // Non-destructive attempts: if one escaped, ~/.bashrc keeps its content (mtime shows it).
    list: (t, tok) => [
      ['touch ~/.bashrc', 'touch ~/.bashrc'],
      ['append ~/.bashrc', "printf '' >> ~/.bashrc"],
      ['rewrite ~/.bashrc', 'c="$(cat ~/.bashrc)" && printf "%s\\n" "$c" > ~/.bashrc'],
      ['mkdir ~/.ssh', 'mkdir -p ~/.ssh'],
      ['authorized_keys', "echo '# sandspawn-security-test' >> ~/.ssh/authorized_keys"],
      ['new dotfile', `echo pwned > ~/.${tok}`],
      ['$HOME env', `echo pwned > "$HOME/.${tok}"`],
    ],
  },
  {
    name: '/etc',
    list: (t, tok) => [
      ['create', `echo pwned > /etc/${tok}`],
      ['mkdir', `mkdir /etc/${tok}.d`],
      ['append passwd', "printf '' >> /etc/passwd"],
      ['touch passwd', 'touch /etc/passwd'],
    ],
  },
  {
    name: 'cp',
    list: (t, tok) => [
      ['cp to outside', `cp /etc/hostname ${q(path.join(t.out, 'cp.txt'))}`],
      ['cp -r to outside', `cp -r /etc/default ${q(path.join(t.out, 'cpdir'))}`],
      ['cp to home', `cp /etc/hostname ~/.${tok}`],
      ['cp to /etc', `cp /etc/hostname /etc/${tok}`],
    ],
  },
  {
    name: 'mv',
    setup: (t) => {
      fs.writeFileSync(path.join(t.out, 'victim.txt'), 'victim\n')
      fs.writeFileSync(path.join(t.ws, 'inside.txt'), 'inside\n')
    },
    list: (t) => [
      ['mv within outside', `mv ${q(path.join(t.out, 'victim.txt'))} ${q(path.join(t.out, 'moved.txt'))}`],
      ['mv outside into cwd', `mv ${q(path.join(t.out, 'victim.txt'))} ./stolen.txt`],
      ['mv cwd file outside', `mv ./inside.txt ${q(path.join(t.out, 'inside.txt'))}`],
      ['mv outside dir away', `mv ${q(t.out)} ${q(t.out + '.moved')}`],
    ],
    check: (t, mode) => {
      assert.ok(fs.existsSync(path.join(t.out, 'victim.txt')))
      // (mv across mounts copies then unlinks: in workspace-write the copy into cwd may stay;
      // reading outside is allowed, what matters is that the source was not removed.)
      assert.ok(!fs.existsSync(t.out + '.moved'))
      if (mode === 'read-only') assert.ok(fs.existsSync(path.join(t.ws, 'inside.txt')))
    },
  },
  {
    name: 'tee',
    list: (t, tok) => [
      ['tee outside', `echo pwned | tee ${q(path.join(t.out, 'tee.txt'))} > /dev/null`],
      ['tee -a ~/.bashrc', 'tee -a ~/.bashrc < /dev/null > /dev/null'],
      ['tee /etc', `echo pwned | tee /etc/${tok} > /dev/null`],
    ],
  },
  {
    name: 'ln -s then write through the link',
    setup: (t) => fs.writeFileSync(path.join(t.out, 'target.txt'), 'original\n'),
    list: (t) => [
      ['file link, overwrite', `ln -sf ${q(path.join(t.out, 'target.txt'))} l1 && echo pwned > l1`],
      ['file link, append', `ln -sf ${q(path.join(t.out, 'target.txt'))} l2 && echo pwned >> l2`],
      ['dangling link, create', `ln -sf ${q(path.join(t.out, 'new.txt'))} l3 && echo pwned > l3`],
      ['dir link, create inside', `ln -sfn ${q(t.out)} l4 && echo pwned > l4/new2.txt`],
      ['link to ~/.bashrc', 'ln -sf ~/.bashrc l5 && printf "" >> l5'],
    ],
  },
  {
    name: 'symlink planted in the workspace beforehand, pointing out',
    setup: (t) => {
      fs.writeFileSync(path.join(t.out, 'target.txt'), 'original\n')
      fs.symlinkSync(t.out, path.join(t.ws, 'esc-dir'))
      fs.symlinkSync(path.join(t.out, 'target.txt'), path.join(t.ws, 'esc-file'))
      fs.symlinkSync(path.join(t.out, 'dangling.txt'), path.join(t.ws, 'esc-new'))
      fs.symlinkSync('../out', path.join(t.ws, 'esc-rel'))
    },
    list: () => [
      ['overwrite via file link', 'echo pwned > esc-file'],
      ['append via file link', 'echo pwned >> esc-file'],
      ['touch via file link', 'touch esc-file'],
      ['create via dangling link', 'echo pwned > esc-new'],
      ['create via dir link', 'echo pwned > esc-dir/new.txt'],
      ['mkdir via dir link', 'mkdir esc-dir/sub'],
      ['cp via dir link', 'cp /etc/hostname esc-dir/'],
      ['create via relative dir link', 'echo pwned > esc-rel/new3.txt'],
      ['rm via dir link', 'rm -f esc-dir/target.txt'],
    ],
  },
  {
    name: 'hard link of an outside file into the workspace, then write',
    setup: (t) => fs.writeFileSync(path.join(t.out, 'target.txt'), 'original\n'),
    list: (t) => [['ln then write', `ln ${q(path.join(t.out, 'target.txt'))} hard && echo pwned >> hard`]],
  },
  {
    name: 'mkdir -p of a new tree outside',
    list: (t, tok) => [
      ['absolute', `mkdir -p ${q(path.join(t.out, 'a/b/c'))}`],
      ['relative', 'mkdir -p ../newtree/x/y'],
      ['/opt', `mkdir -p /opt/${tok}/x`],
      ['home', `mkdir -p ~/.${tok}/x`],
    ],
  },
]

for (const mode of ['read-only', 'workspace-write']) {
  describe(`escapes in ${mode} (cwd = workspace)`, { concurrency: 4 }, () => {
    for (const c of CASES) {
      test(c.name, async (t) => {
        const tree = tempTree(t)
        const tok = token('sandspawn-sec')
        if (c.setup) c.setup(tree, tok)
        const list = c.list(tree, tok)
        const before = hostState(tree, tok)
        let r
        try {
          r = await sh(attempts(list), { cwd: tree.ws, sandbox: mode })
        } finally {
          var after = hostState(tree, tok)
          cleanupShared(before, tok)
        }
        assertAllDenied(r, list)
        assert.deepEqual(after, before, `host state changed\n${show(r)}`)
        if (c.check) c.check(tree, mode)
      })
    }

    if (mode === 'read-only') {
      test('the workspace itself is not writable either', async (t) => {
        const tree = tempTree(t)
        fs.writeFileSync(path.join(tree.ws, 'keep.txt'), 'keep\n')
        const before = treeSnapshot(tree.ws)
        const list = [
          ['create', 'echo x > new.txt'],
          ['overwrite', 'echo x > keep.txt'],
          ['rm', 'rm -f keep.txt'],
          ['mkdir', 'mkdir d'],
        ]
        const r = await sh(attempts(list), { cwd: tree.ws })
        assertAllDenied(r, list)
        assert.deepEqual(treeSnapshot(tree.ws), before)
      })
    } else {
      test('control: the workspace is writable', async (t) => {
        const tree = tempTree(t)
        const r = await sh('echo ok > inside.txt && mkdir -p a/b && cat inside.txt', { cwd: tree.ws, sandbox: mode })
        assert.equal(r.exitCode, 0, show(r))
        assert.equal(r.stdout, 'ok\n')
        assert.equal(fs.readFileSync(path.join(tree.ws, 'inside.txt'), 'utf8'), 'ok\n')
        assert.ok(fs.statSync(path.join(tree.ws, 'a/b')).isDirectory())
      })
    }
  })
}

describe('policy boundaries inside the writable set', { concurrency: 4 }, () => {
  test("tmp: 'private' keeps writes to /tmp off the host; read-only mode cannot write /tmp", async (t) => {
    const tree = tempTree(t)
    const tok = token('sandspawn-sec')
    const hostTmp = `/tmp/${tok}`
    t.after(() => rmrf(hostTmp))
    const priv = await sh(`echo private > ${hostTmp} && cat ${hostTmp} && ls -A /tmp | wc -l`, { cwd: tree.ws, sandbox: { mode: 'workspace-write', tmp: 'private' } })
    assert.equal(priv.exitCode, 0, show(priv))
    assert.match(priv.stdout, /^private\n1\n$/, show(priv))
    assert.equal(fs.existsSync(hostTmp), false, 'a private /tmp write reached the host')
    const ro = await sh(`echo x > ${hostTmp}`, { cwd: tree.ws })
    assert.notEqual(ro.exitCode, 0, show(ro))
    assert.match(ro.stderr, DENIED)
    assert.equal(fs.existsSync(hostTmp), false)
  })

  // Found by an attacker's review (mode32): the caller's TMPDIR elsewhere (a CI's _temp, a
  // per-user /run/user/N, /var/tmp/x) was left as the command's TMPDIR, read-only there (or, under
  // /tmp, absent from the private /tmp), so mktemp and every tool using TMPDIR failed, and the way
  // to make them work was the shared, writable /tmp.
  test("tmp: 'private' points a TMPDIR the command cannot write at its private /tmp; one in the workspace stays", async (t) => {
    const tree = tempTree(t)
    const elsewhere = fs.mkdtempSync('/var/tmp/ss-tmpdir-')
    t.after(() => rmrf(elsewhere))
    const script = 'echo "TMPDIR=$TMPDIR"; f=$(mktemp) && echo made "$f"'
    for (const tmpdir of [elsewhere, '/tmp/ss-not-in-the-private-tmp']) {
      const r = await sh(script, { cwd: tree.ws, env: { TMPDIR: tmpdir }, sandbox: { mode: 'workspace-write', tmp: 'private' } })
      assert.equal(r.exitCode, 0, `TMPDIR=${tmpdir}: ${show(r)}`)
      assert.match(r.stdout, /^TMPDIR=\/tmp\nmade \/tmp\/tmp\.\w+\n$/, show(r))
    }
    assert.deepEqual(fs.readdirSync(elsewhere), [])
    // A TMPDIR the command may write (in the workspace) is the caller's choice, kept.
    const own = path.join(tree.ws, 'tmp')
    fs.mkdirSync(own)
    const r = await sh(script, { cwd: tree.ws, env: { TMPDIR: own }, sandbox: { mode: 'workspace-write', tmp: 'private' } })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(r.stdout.split('\n')[0], `TMPDIR=${own}`, show(r))
  })

  // Found by an attacker's review (rfix32) of mode32's fix: a TMPDIR that is a symlink under /tmp
  // into the workspace (/tmp/x -> ws/tmp) was kept, its real path being in a writable root, but
  // the private /tmp has no such link: mktemp failed as before the fix.
  test("tmp: 'private' keeps a TMPDIR reached through a symlink under /tmp into the workspace usable", async (t) => {
    const tree = tempTree(t)
    const own = path.join(tree.ws, 'tmp')
    fs.mkdirSync(own)
    const link = path.join('/tmp', `ss-tmpdir-link-${process.pid}-${Date.now()}`)
    fs.symlinkSync(own, link)
    t.after(() => fs.rmSync(link, { force: true }))
    const r = await sh('f=$(mktemp) && echo made "$f"', { cwd: tree.ws, env: { TMPDIR: link }, sandbox: { mode: 'workspace-write', tmp: 'private' } })
    assert.equal(r.exitCode, 0, show(r))
    assert.equal(fs.readdirSync(own).length, 1, show(r))
  })

  test('readOnlyPaths inside the workspace stay read-only (write, rename, rm, symlink swap)', async (t) => {
    const tree = tempTree(t)
    const locked = path.join(tree.ws, 'locked')
    fs.mkdirSync(locked)
    fs.writeFileSync(path.join(locked, 'conf'), 'original\n')
    const lockedFile = path.join(tree.ws, 'locked.txt')
    fs.writeFileSync(lockedFile, 'original\n')
    const before = [treeSnapshot(locked), snapshot(lockedFile)]
    const list = [
      ['write file in dir', 'echo pwned > locked/conf'],
      ['new file in dir', 'echo pwned > locked/new'],
      ['write file', 'echo pwned > locked.txt'],
      ['rename dir', 'mv locked locked2'],
      ['rm file', 'rm -f locked.txt'],
      ['replace dir by symlink', 'rm -rf locked; ln -s /tmp locked && test -L locked'],
    ]
    const r = await sh(attempts(list), { cwd: tree.ws, sandbox: { mode: 'workspace-write', readOnlyPaths: [locked, lockedFile] } })
    for (const [label] of list) assert.ok(r.stdout.includes(`denied ${label}\n`), `attack "${label}" succeeded\n${show(r)}`)
    assert.deepEqual([treeSnapshot(locked), snapshot(lockedFile)], before, show(r))
  })

  // A path-based rule names where a file is. One run renames a directory above a nested read-only
  // or denied path (the path itself is a mount, the directory above it is not); the next run's
  // rules name the old path, and the file, at its new one, is open to it.
  test('a nested readOnlyPaths or denyRead entry cannot be moved away by renaming a directory above it', async (t) => {
    const tree = tempTree(t)
    fs.mkdirSync(path.join(tree.ws, 'cfg/sub'), { recursive: true })
    const settings = path.join(tree.ws, 'cfg/sub/settings.json')
    fs.writeFileSync(settings, 'original\n')
    fs.mkdirSync(path.join(tree.ws, 'keys/deep'), { recursive: true })
    const secret = path.join(tree.ws, 'keys/deep/secret.txt')
    fs.writeFileSync(secret, 'TOPSECRET\n')
    const sandbox = { mode: 'workspace-write', readOnlyPaths: [settings], denyRead: [secret] }
    const first = [
      ['rename the directory above the read-only file', 'mv cfg/sub cfg/moved'],
      ['rename the top directory above it', 'mv cfg cfg2'],
      ['rename the directory above the denied file', 'mv keys/deep keys/moved'],
      ['rename the top directory above it (denied)', 'mv keys keys2'],
    ]
    const r1 = await sh(attempts(first), { cwd: tree.ws, sandbox })
    for (const [label] of first) assert.ok(r1.stdout.includes(`denied ${label}\n`), `attack "${label}" succeeded\n${show(r1)}`)
    // Whatever the first run managed, the next one finds the files wherever they are now.
    const r2 = await sh('cat cfg*/*/settings.json keys*/*/secret.txt; echo pwned > cfg2/sub/settings.json; echo pwned > cfg/moved/settings.json; true', { cwd: tree.ws, sandbox })
    assert.ok(!r2.stdout.includes('TOPSECRET'), `the denied file was read in the next run\n${show(r2)}`)
    assert.equal(fs.readFileSync(settings, 'utf8'), 'original\n', show(r2))
    assert.equal(fs.readFileSync(secret, 'utf8'), 'TOPSECRET\n')
  })
})
