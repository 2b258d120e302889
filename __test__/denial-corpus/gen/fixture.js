'use strict'
// The scratch tree every corpus case starts from: a workspace (a git repository with a commit and a
// modified file, a C program, a Makefile, a Rust crate, a Node package, Python and Java files, and
// files whose *names* hold the classifier's keywords), a bare remote, a home directory, a pyenv
// root, a cargo home whose registry is the generator's own loopback server, and a local wheel.
// Everything lives under one temp dir; nothing outside it is written.

const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const sh = (cwd, cmd, args, env = {}) => execFileSync(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: 'pipe' })
const write = (file, text, mode) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  if (mode !== undefined) fs.chmodSync(file, mode)
}

const WORKSPACE_FILES = {
  'tracked.txt': 'line one\n',
  'sandbox.txt': 'sandbox notes: nothing here\n',
  'other.txt': 'other notes\n',
  'sandbox/test.txt': 'fixture\n',
  'sandbox/run.py': 'def main():\n    raise ValueError("bad input")\nmain()\n',
  'sandbox/fail.js': 'throw new Error("boom");\n',
  // Names a tool lists: a keyword in them is not a denial.
  'tests/sandbox-permission-denied.test.js':
    "const { test } = require('node:test')\nconst assert = require('node:assert')\ntest('sandbox permission denied is reported', () => assert.equal(1, 2))\n",
  'tests/test_read_only_file_system.py':
    'import unittest\nclass T(unittest.TestCase):\n    def test_operation_not_permitted_is_reported(self):\n        self.assertEqual(1, 2)\n',
  'docs/seccomp-landlock.md': '# seccomp and landlock notes\n',
  'logs/operation-not-permitted.log': 'old log\n',
  'secret/key': 'top secret\n',
  'vendor/lib.txt': 'vendored\n',
  'hello.c': '#include <stdio.h>\nint main(void) { puts("hi"); return 0; }\n',
  'broken.c': 'int main(void) { return undefined_name; }\n',
  'linkfail.c': 'void missing(void);\nint main(void) { missing(); return 0; }\n',
  Makefile:
    'out/app: hello.c\n\tmkdir -p out\n\tcc -o out/app hello.c\n\nbroken: broken.c\n\tcc -o broken broken.c\n\ninstall: out/app\n\tinstall -D out/app $(PREFIX)/bin/app\n',
  'crate/Cargo.toml': '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
  'crate/src/main.rs': 'fn main() { println!("hi"); }\n\n#[test]\nfn sandbox_is_fine() { assert_eq!(1, 2, "permission check"); }\n',
  'badcrate/Cargo.toml': '[package]\nname = "bad"\nversion = "0.1.0"\nedition = "2021"\n',
  'badcrate/src/main.rs': 'fn main() { let x: u32 = "no"; }\n',
  'depcrate/Cargo.toml': '[package]\nname = "dep"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\noorandom = "11"\n',
  'depcrate/src/main.rs': 'fn main() {}\n',
  'missingdep/Cargo.toml': '[package]\nname = "md"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nnosuchcrate-xyz = "1"\n',
  'missingdep/src/main.rs': 'fn main() {}\n',
  'package.json': JSON.stringify(
    {
      name: 'demo',
      version: '1.0.0',
      private: true,
      scripts: {
        build: "node -e \"require('fs').mkdirSync('dist', {recursive: true}); require('fs').writeFileSync('dist/out.js', '')\"",
        test: 'node --test tests/',
        lint: 'node -e "process.exit(3)"',
      },
    },
    null,
    2,
  ),
  'Hello.java': 'public class Hello { public static void main(String[] a) throws Exception { java.nio.file.Files.writeString(java.nio.file.Path.of("out.txt"), "x"); } }\n',
  'Broken.java': 'public class Broken { public static void main(String[] a) { int x = "s"; } }\n',
  'Throws.java': 'public class Throws { public static void main(String[] a) { throw new IllegalStateException("bad state"); } }\n',
  'syntax.py': 'def f(:\n    pass\n',
  'syntax.js': 'function (\n',
}

const WHEEL_PY = [
  'import sys, zipfile',
  "z = zipfile.ZipFile(sys.argv[1], 'w')",
  "z.writestr('corpus_pkg/__init__.py', '')",
  "z.writestr('corpus_pkg-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: corpus-pkg\\nVersion: 1.0\\n')",
  "z.writestr('corpus_pkg-1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\\nGenerator: corpus\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n')",
  "z.writestr('corpus_pkg-1.0.dist-info/RECORD', '')",
  'z.close()',
].join('\n')

/** Builds the template under `t` (once); `fresh(t)` copies it for a case. */
function buildTemplate(t, port) {
  const tpl = path.join(t, 'template')
  const ws = path.join(tpl, 'ws')
  for (const [rel, text] of Object.entries(WORKSPACE_FILES)) write(path.join(ws, rel), text)
  write(path.join(ws, 'noexec.sh'), '#!/bin/sh\necho hi\n', 0o644)
  write(path.join(ws, 'private.txt'), 'private\n', 0o600)
  fs.chownSync(path.join(ws, 'private.txt'), 65534, 65534)

  const home = path.join(tpl, 'home')
  write(path.join(home, '.gitconfig'), '[user]\n\tname = Corpus\n\temail = corpus@example.invalid\n[init]\n\tdefaultBranch = main\n[advice]\n\tdetachedHead = false\n')
  write(path.join(home, '.ssh/id_rsa'), 'ssh-secret\n', 0o600)
  fs.mkdirSync(path.join(tpl, 'outside'), { recursive: true })

  const env = { HOME: home }
  sh(ws, 'git', ['init', '-q', '.'], env)
  sh(ws, 'git', ['add', '-A'], env)
  sh(ws, 'git', ['commit', '-qm', 'initial'], env)
  // A bare remote, and a modification for `git stash` / `git checkout --`.
  sh(tpl, 'git', ['clone', '-q', '--bare', ws, 'remote.git'], env)
  sh(ws, 'git', ['remote', 'add', 'origin', path.join(tpl, 'remote.git')], env)
  fs.appendFileSync(path.join(ws, 'tracked.txt'), 'line two\n')
  sh(ws, 'tar', ['-cf', 'archive.tar', 'sandbox', 'docs', 'logs'])
  // A local wheel, so pip installs without any index.
  fs.mkdirSync(path.join(tpl, 'wheels'))
  sh(ws, 'python3', ['-c', WHEEL_PY, path.join(tpl, 'wheels/corpus_pkg-1.0-py3-none-any.whl')])

  // A pyenv root with no versions (its shims dir is what `pyenv rehash` writes).
  fs.mkdirSync(path.join(tpl, 'pyenv/shims'), { recursive: true })
  fs.mkdirSync(path.join(tpl, 'pyenv/versions'), { recursive: true })

  // cargo: crates.io replaced by a sparse registry on the generator's loopback server.
  write(
    path.join(tpl, 'cargo-home/config.toml'),
    `[source.crates-io]\nreplace-with = "corpus"\n\n[source.corpus]\nregistry = "sparse+http://127.0.0.1:${port}/cargo/index/"\n\n[net]\nretry = 0\n`,
  )
  return tpl
}

/** A fresh copy of the template for one case. */
function fresh(t, tpl) {
  const dir = path.join(t, 'run')
  fs.rmSync(dir, { recursive: true, force: true })
  fs.cpSync(tpl, dir, { recursive: true, preserveTimestamps: true, verbatimSymlinks: true })
  // cpSync does not keep ownership; the foreign-owned file is part of the fixture.
  fs.chownSync(path.join(dir, 'ws/private.txt'), 65534, 65534)
  return {
    t: dir,
    ws: path.join(dir, 'ws'),
    home: path.join(dir, 'home'),
    outside: path.join(dir, 'outside'),
    pyenv: path.join(dir, 'pyenv'),
    cargoHome: path.join(dir, 'cargo-home'),
    remote: path.join(dir, 'remote.git'),
    wheels: path.join(dir, 'wheels'),
  }
}

module.exports = { buildTemplate, fresh }
