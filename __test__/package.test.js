'use strict'
// The package as a consumer gets it: what `npm pack` ships, no install-time script, the full
// licence, and typings that work from both `require` (.ts, CommonJS) and `import` (.mts, ESM) in a
// project that installed the tarball. Also: index.d.ts declares every field sandboxCapabilities()
// returns.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const root = path.resolve(__dirname, '..')
const pkg = require('../package.json')
const HANG_MS = 120_000
const npm = (args, cwd) => spawnSync('npm', args, { cwd, encoding: 'utf8', timeout: HANG_MS, killSignal: 'SIGKILL', env: { ...process.env, npm_config_update_notifier: 'false' } })
const ctx = (r) => `status ${r.status} signal ${r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`

test('npm pack ships every file the shipped code requires, the CLI, both typings and the licence', () => {
  const r = npm(['pack', '--dry-run', '--json'], root)
  assert.equal(r.status, 0, ctx(r))
  const files = new Set(JSON.parse(r.stdout)[0].files.map((f) => f.path))
  for (const f of ['LICENSE', 'README.md', 'index.js', 'index.mjs', 'index.d.ts', 'index.d.mts', 'bin/sandspawn.js']) assert.ok(files.has(f), `${f} is not in the package`)
  // Every relative require/import of a shipped file resolves to a shipped file (binding.js, the
  // generated loader, tries a .node file per platform, which come from per-platform packages).
  for (const f of [...files].filter((p) => /\.(m?js|d\.m?ts)$/.test(p) && p !== 'binding.js')) {
    const text = fs.readFileSync(path.join(root, f), 'utf8')
    for (const m of text.matchAll(/(?:require\(|from |import\()\s*'(\.{1,2}\/[^']+)'/g)) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(f), m[1]))
      const candidates = [target, `${target}.js`, `${target}/index.js`].map((c) => c.replace(/^\.\//, ''))
      const mapped = target.endsWith('.js') && /\.d\.m?ts$/.test(f) ? [target.replace(/\.js$/, '.d.ts')] : []
      assert.ok([...candidates, ...mapped].some((c) => files.has(c) || c === '..' || c === '.'), `${f} needs ${m[1]}, which is not in the package`)
    }
  }
})

test('the published package.json runs nothing at install time (the checkout keeps `prepare`)', () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-manifest-')))
  try {
    const packed = npm(['pack', '--pack-destination', dir, '--json'], root)
    assert.equal(packed.status, 0, ctx(packed))
    const tarball = path.join(dir, JSON.parse(packed.stdout)[0].filename)
    const shipped = JSON.parse(spawnSync('tar', ['-xOzf', tarball, 'package/package.json'], { encoding: 'utf8' }).stdout)
    for (const hook of ['preinstall', 'install', 'postinstall', 'prepare']) {
      assert.equal(shipped.scripts[hook], undefined, `the shipped package.json has a "${hook}" script, which consumers would be asked to run`)
    }
    // The checkout is left as it was: `npm install` in a fresh clone still builds the addon.
    assert.equal(JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.prepare, 'node scripts/ensure-built.js')
    assert.equal(fs.existsSync(path.join(root, '.package.json.prepack')), false)
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('LICENSE is the full Apache License 2.0 text', () => {
  const text = fs.readFileSync(path.join(root, 'LICENSE'), 'utf8')
  assert.match(text, /^\s+Apache License\n\s+Version 2\.0, January 2004/)
  for (const section of ['TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION', '1. Definitions.', '4. Redistribution.', '9. Accepting Warranty or Additional Liability.', 'END OF TERMS AND CONDITIONS']) {
    assert.ok(text.includes(section), `LICENSE lacks "${section}"`)
  }
  assert.equal(pkg.license, 'Apache-2.0')
})

test('a consumer project that installs the tarball type-checks a CommonJS .ts and an ESM .mts, and runs both', () => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ss-consumer-')))
  try {
    const packed = npm(['pack', '--pack-destination', dir, '--json'], root)
    assert.equal(packed.status, 0, ctx(packed))
    const tarball = path.join(dir, JSON.parse(packed.stdout)[0].filename)
    const app = path.join(dir, 'app')
    fs.mkdirSync(app)
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }))
    const installed = npm(['install', '--offline', '--no-audit', '--no-fund', tarball], app)
    assert.equal(installed.status, 0, ctx(installed))
    assert.doesNotMatch(installed.stderr + installed.stdout, /install.?scripts?/i, 'npm reports an install script in sandspawn')

    fs.writeFileSync(
      path.join(app, 'cjs.ts'),
      `import sandspawn = require('sandspawn')
import { spawnSandboxed, SandboxError, type Capabilities, type SpawnResult } from 'sandspawn'
async function main(): Promise<void> {
  const r: SpawnResult = await spawnSandboxed(['echo', 'cjs'])
  const caps: Capabilities = await sandspawn.sandboxCapabilities()
  const stderr: string | null = caps.stderr
  const newer: boolean | undefined = caps.bwrap?.disableUserns
  console.log(r.stdout.trim(), caps.available, stderr === null, typeof newer, SandboxError.name)
}
void main()
`,
    )
    fs.writeFileSync(
      path.join(app, 'esm.mts'),
      `import sandspawn, { spawnSandboxed, type Capabilities } from 'sandspawn'
const r = await spawnSandboxed(['echo', 'esm'])
const caps: Capabilities = await sandspawn.sandboxCapabilities()
console.log(r.stdout.trim(), caps.available)
`,
    )
    fs.writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { strict: true, module: 'node16', moduleResolution: 'node16', target: 'ES2022', outDir: 'out', skipLibCheck: false, types: ['node'], typeRoots: [path.join(root, 'node_modules', '@types')] },
        files: ['cjs.ts', 'esm.mts'],
      }),
    )
    const tsc = spawnSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app, '--listFiles'], { cwd: app, encoding: 'utf8', timeout: HANG_MS })
    assert.equal(tsc.status, 0, ctx(tsc))
    // The ESM file got ESM typings, the CommonJS file CommonJS ones (arethetypeswrong's "masquerading as CJS" otherwise).
    const listed = tsc.stdout.split('\n')
    assert.ok(listed.some((l) => l.endsWith('node_modules/sandspawn/index.d.mts')), `index.d.mts was not used:\n${tsc.stdout}`)
    assert.ok(listed.some((l) => l.endsWith('node_modules/sandspawn/index.d.ts')), `index.d.ts was not used:\n${tsc.stdout}`)

    const cjs = spawnSync(process.execPath, [path.join(app, 'out', 'cjs.js')], { cwd: app, encoding: 'utf8', timeout: HANG_MS })
    assert.equal(cjs.status, 0, ctx(cjs))
    assert.match(cjs.stdout, /^cjs true true boolean SandboxError$/m)
    const esm = spawnSync(process.execPath, [path.join(app, 'out', 'esm.mjs')], { cwd: app, encoding: 'utf8', timeout: HANG_MS })
    assert.equal(esm.status, 0, ctx(esm))
    assert.match(esm.stdout, /^esm true$/m)
    const bin = spawnSync(path.join(app, 'node_modules', '.bin', 'sandspawn'), ['--version'], { cwd: app, encoding: 'utf8', timeout: HANG_MS })
    assert.equal(bin.stdout, `${pkg.version}\n`, ctx(bin))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

test('index.d.ts declares every field sandboxCapabilities() returns', async () => {
  const ts = require('typescript')
  const source = ts.createSourceFile('index.d.ts', fs.readFileSync(path.join(root, 'index.d.ts'), 'utf8'), ts.ScriptTarget.Latest)
  const declared = (name) => {
    const node = source.statements.find((s) => ts.isInterfaceDeclaration(s) && s.name.text === name)
    assert.ok(node, `index.d.ts has no interface ${name}`)
    return node.members.map((m) => m.name.text).sort()
  }
  const caps = await require('..').sandboxCapabilities()
  assert.deepEqual(declared('Capabilities'), Object.keys(caps).sort())
  if (caps.bwrap) assert.deepEqual(declared('BwrapInfo'), Object.keys(caps.bwrap).sort())
})

test("every package in the lockfile accepts this Node (contributors' npm ci warns EBADENGINE otherwise)", () => {
  // The project supports Node >= 20; package.json's `overrides` pin the dev dependencies' own
  // dependencies that moved to Node 22 (@napi-rs/lzma, content-type) to versions that run on 20.
  // semver is npm's own range logic (here through jest's dependencies).
  const semver = require('semver')
  const lock = require('../package-lock.json')
  const refused = Object.entries(lock.packages)
    .filter(([, p]) => p.engines && typeof p.engines.node === 'string' && !semver.satisfies(process.version, p.engines.node))
    .map(([name, p]) => `${name}@${p.version} wants node ${p.engines.node}`)
  assert.deepEqual(refused, [], `on ${process.version}`)
  assert.ok(semver.satisfies(process.version, pkg.engines.node), `this Node is not one the project supports: ${pkg.engines.node}`)
})
