#!/usr/bin/env node
'use strict'
// Build the bundled bubblewrap: a standalone, statically linked `sandspawn-bwrap` next to the
// addon, used only when the host has no usable bwrap (see README "Hosts without bubblewrap").
//
// Source: bubblewrap v0.12.0, unmodified, from the crates.io package pinned in
// bundled-bwrap/Cargo.toml. `cargo metadata` downloads it and checks it against the checksum in
// bundled-bwrap/Cargo.lock; every file compiled here is then checked again against the SHA-256 of
// the same file in upstream's v0.12.0 release tarball (which is Debian's
// bubblewrap_0.12.0.orig.tar.xz, sha256 9760d007363e3abba7c747489910f9f82d9fca53ba3bd3282e396fa3c97a3314),
// so a changed crate cannot change what we build. Nothing of bubblewrap is copied into this
// repository.
//
// Build: only a C compiler (`$CC`, default `cc`) and the C library's static archive. No meson, no
// libcap (bundled-bwrap/shim provides the few libcap declarations bubblewrap uses). Static so that
// one binary runs on any Linux of its architecture, including older glibc than the build host's.
//
// Outputs (in the repository root, beside the .node file; all listed in the npm linux packages):
//   sandspawn-bwrap           the executable
//   sandspawn-bwrap.sha256    its digest; build.rs bakes it into the addon, which refuses a binary
//                             that does not match
//   sandspawn-bwrap.COPYING   bubblewrap's licence (LGPL-2.1-or-later)
//   sandspawn-bwrap.SOURCE.md where the corresponding source is and how it was built
//
// Usage: node scripts/build-bwrap.js [--force]. Skips (exit 0) off Linux, and when the outputs are
// newer than every input.

const fs = require('node:fs')
const path = require('node:path')
const crypto = require('node:crypto')
const { spawnSync } = require('node:child_process')

const root = path.resolve(__dirname, '..')
const pinDir = path.join(root, 'bundled-bwrap')
const outName = 'sandspawn-bwrap'
const out = (suffix = '') => path.join(root, outName + suffix)

const UPSTREAM = { version: '0.12.0', commit: '014a04330642e5c870418beb621532cb896e0002' }
const CARRIER = { name: 'cageforge-bwrap', version: '0.7.1', dir: 'vendor/bubblewrap' }
// SHA-256 of each file as released upstream (bubblewrap-0.12.0 tarball).
const PINNED = {
  'bubblewrap.c': '3f17ee26057cae9d660801ca8d9ba84722f1bafdcd072d5151ee1c64eeeb15f4',
  'bind-mount.c': 'b14a8adfe22a45fb2e02a81bccfd14500c42a07452fb94664ba5ec16ae7ba744',
  'network.c': '1cfe04fcc38d33d5197feb96fc503d3fd51d234fb9392699a00bf4780ed6e9f0',
  'utils.c': 'b53c73465e0188259a8438396e25531f6b6ae7e2fb88d37bf13cee29acedd222',
  'chroot_realpath.c': '71c0f7fe88bada2393b63508a8a81c9d7942266468db7edb650a0d3076fd92b6',
  'safe_openat.c': '0338ec8e8fbc08caf20c6a3480506f60f510e7e43abacbd40d17cd6d562970d2',
  'bind-mount.h': '3c46bfd19a6c2313791dd74e0cb0bc0963d4c2e06bae54f4a03f4b2114a733ea',
  'network.h': '10a8c88c647de85f4c60574355f9d530c06d568afbeb096611f4c8e85b9a5598',
  'utils.h': 'a62180bf1cecc785e3cebc7957ea73f7e016395d6fce6bdc55fcec865396152d',
  COPYING: 'dc626520dcd53a22f727af3ee42c770e56c97a64fe3adb063799d8ab032fe551',
}
// The sources meson.build lists for the `bwrap` executable, in its order.
const SOURCES = ['bubblewrap.c', 'bind-mount.c', 'network.c', 'utils.c', 'chroot_realpath.c', 'safe_openat.c']

function fail(msg) {
  console.error(`sandspawn: building the bundled bwrap failed: ${msg}`)
  process.exit(1)
}

const sha256 = (file) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex')

function inputs() {
  const files = [__filename, path.join(pinDir, 'Cargo.toml'), path.join(pinDir, 'Cargo.lock')]
  const shim = path.join(pinDir, 'shim')
  const visit = (p) => {
    if (fs.statSync(p).isDirectory()) for (const e of fs.readdirSync(p)) visit(path.join(p, e))
    else files.push(p)
  }
  visit(shim)
  return files
}

function upToDate() {
  const outs = ['', '.sha256', '.COPYING', '.SOURCE.md'].map(out)
  if (!outs.every((f) => fs.existsSync(f))) return false
  const built = Math.min(...outs.map((f) => fs.statSync(f).mtimeMs))
  if (inputs().some((f) => fs.statSync(f).mtimeMs > built)) return false
  // The digest beside it must still describe it (a hand-edited or half-written binary rebuilds).
  return fs.readFileSync(out('.sha256'), 'utf8').split(/\s/)[0] === sha256(out())
}

function sourceDir() {
  const r = spawnSync(
    'cargo',
    ['metadata', '--format-version', '1', '--locked', '--manifest-path', path.join(pinDir, 'Cargo.toml')],
    { cwd: pinDir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'inherit'] },
  )
  if (r.error) fail(`cargo metadata could not run: ${r.error.message} (building sandspawn needs Rust: https://rustup.rs)`)
  if (r.status !== 0) fail('cargo metadata failed (see above); it downloads the pinned bubblewrap sources from crates.io')
  const pkg = JSON.parse(r.stdout).packages.find((p) => p.name === CARRIER.name && p.version === CARRIER.version)
  if (!pkg) fail(`cargo metadata did not list ${CARRIER.name} ${CARRIER.version}`)
  return path.join(path.dirname(pkg.manifest_path), CARRIER.dir)
}

function verifySources(dir) {
  for (const [file, want] of Object.entries(PINNED)) {
    const p = path.join(dir, file)
    if (!fs.existsSync(p)) fail(`${p} is missing`)
    const got = sha256(p)
    if (got !== want) fail(`${p} has SHA-256 ${got}, expected upstream bubblewrap ${UPSTREAM.version}'s ${want}`)
  }
}

function compile(src, tmpOut) {
  const buildDir = path.join(root, 'target', 'bundled-bwrap')
  fs.mkdirSync(buildDir, { recursive: true })
  // What meson would generate for this configuration (no SELinux, no assumed kernel).
  fs.writeFileSync(path.join(buildDir, 'config.h'), `#define PACKAGE_STRING "bubblewrap ${UPSTREAM.version}"\n`)
  // CC may carry arguments (a cross compiler such as `zig cc -target aarch64-linux-musl`).
  const [cc, ...ccArgs] = (process.env.CC || 'cc').trim().split(/\s+/)
  const common = [
    '-std=gnu99', '-O2', '-g0', '-D_GNU_SOURCE', '-D_FORTIFY_SOURCE=2', '-fstack-protector-strong',
    '-Wall', '-Werror=implicit-function-declaration', '-Werror=incompatible-pointer-types',
    `-I${buildDir}`, `-I${path.join(pinDir, 'shim')}`, `-I${src}`,
    ...SOURCES.map((f) => path.join(src, f)), path.join(pinDir, 'shim', 'cap_from_name.c'),
    '-Wl,-z,relro,-z,now', '-s', '-o', tmpOut,
  ]
  // Static PIE keeps address-space randomisation; plain -static where the toolchain lacks it.
  const attempts = [['-fPIE', '-static-pie'], ['-static']]
  let last
  for (const flags of attempts) {
    last = spawnSync(cc, [...ccArgs, ...flags, ...common], { encoding: 'utf8' })
    if (last.error) fail(`the C compiler ${cc} could not run: ${last.error.message} (install gcc or clang, or set CC)`)
    if (last.status === 0) return flags.join(' ')
  }
  fail(`${cc} failed:\n${last.stderr}`)
}

// ELF e_machine values of the architectures sandspawn ships.
const HOST_MACHINE = { x64: 0x3e, arm64: 0xb7 }
const elfMachine = (file) => fs.readFileSync(file).readUInt16LE(18)

function main() {
  if (process.platform !== 'linux') return
  const force = process.argv.includes('--force')
  if (!force && upToDate()) return
  const started = process.hrtime.bigint()
  const src = sourceDir()
  verifySources(src)
  const tmpOut = out(`.tmp-${process.pid}`)
  try {
    const how = compile(src, tmpOut)
    // A binary for this machine must run; a cross-compiled one (other ELF machine) cannot be run here.
    if (elfMachine(tmpOut) === HOST_MACHINE[process.arch]) {
      const v = spawnSync(tmpOut, ['--version'], { encoding: 'utf8' })
      if (v.status !== 0 || v.stdout.trim() !== `bubblewrap ${UPSTREAM.version}`) {
        fail(`the built binary does not run: ${v.error ? v.error.message : JSON.stringify(v.stdout + v.stderr)}`)
      }
    }
    fs.chmodSync(tmpOut, 0o755)
    const digest = sha256(tmpOut)
    fs.copyFileSync(path.join(src, 'COPYING'), out('.COPYING'))
    fs.writeFileSync(out('.SOURCE.md'), sourceNotice(how))
    fs.renameSync(tmpOut, out())
    // Written last: build.rs bakes this digest into the addon.
    fs.writeFileSync(out('.sha256'), `${digest}  ${outName}\n`)
    const secs = Number(process.hrtime.bigint() - started) / 1e9
    console.error(`sandspawn: built ${outName} (bubblewrap ${UPSTREAM.version}, ${how}) in ${secs.toFixed(1)} s, sha256 ${digest}`)
  } finally {
    fs.rmSync(tmpOut, { force: true })
  }
}

function sourceNotice(how) {
  return `# sandspawn-bwrap

\`sandspawn-bwrap\` is bubblewrap ${UPSTREAM.version} (https://github.com/containers/bubblewrap, tag
v${UPSTREAM.version}, commit ${UPSTREAM.commit}), compiled from unmodified upstream sources.
It is licensed under the GNU Lesser General Public License, version 2.1 or later: see
\`sandspawn-bwrap.COPYING\`. sandspawn runs it as a separate program; it is not linked into sandspawn.

Corresponding source: the upstream release above; the exact files are also in the crates.io package
${CARRIER.name} ${CARRIER.version} (${CARRIER.dir}/), from which this binary was built by
\`scripts/build-bwrap.js\` in sandspawn's source repository, together with
\`bundled-bwrap/shim/\` (a replacement for the one libcap function bubblewrap uses, cap_from_name).
Build: \`cc ${how} -O2 -D_GNU_SOURCE\` over ${SOURCES.join(', ')}.
`
}

main()
