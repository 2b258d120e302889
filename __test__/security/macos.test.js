'use strict'
// The security suite's macOS cases: real Seatbelt runs (sandbox-exec) of what the Linux cases attack
// (writes outside the writable set, .git and protected names, denyRead, the network off, host Unix
// sockets) and of what macOS does its own way: the allow-list's proxy on the host's loopback with a
// per-run credential, and private tool caches pointed at the store by variables. The macOS CI job
// (.github/workflows/ci.yml) runs this file on a Mac. Elsewhere every case is reported as skipped:
// they need Seatbelt, and the Linux side of the same code is covered by the Rust tests
// (network::tests_macos_wiring, plan::seatbelt_eval, tool_caches::tests_macos).

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')

const skip = process.platform === 'darwin' ? false : 'needs macOS Seatbelt (run by the macOS CI job)'
const { spawnSandboxed } = skip ? {} : require('../..')

/** A tree under /var/tmp (not $TMPDIR, which workspace-write makes writable): a repository
 * workspace with a secret, and a directory beside it. */
function tree(t) {
  const root = fs.realpathSync(fs.mkdtempSync('/var/tmp/sandspawn-macos-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const ws = path.join(root, 'ws')
  fs.mkdirSync(path.join(ws, '.git/hooks'), { recursive: true })
  fs.writeFileSync(path.join(ws, '.git/config'), '[core]\n')
  fs.writeFileSync(path.join(ws, '.git/HEAD'), 'ref: refs/heads/main\n')
  fs.writeFileSync(path.join(ws, 'secret'), 'top secret\n')
  fs.mkdirSync(path.join(root, 'out'))
  return { root, ws, out: path.join(root, 'out') }
}

const WS = (extra = {}) => ({ mode: 'workspace-write', tmp: 'read-only', ...extra })
const show = (r) => `exit ${r.exitCode}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`
const sh = (script, options) => spawnSandboxed(['/bin/sh', '-c', script], { timeout: 60_000, ...options })

/** `label: command` pairs run in subshells, each printing `ESCAPED label` or `denied label`. */
const attempts = (list) => list.map(([label, cmd]) => `if ( ${cmd} ) 2>/dev/null; then echo "ESCAPED ${label}"; else echo "denied ${label}"; fi`).join('\n')

function assertDenied(r, list) {
  for (const [label] of list) {
    assert.ok(!r.stdout.includes(`ESCAPED ${label}\n`), `"${label}" succeeded\n${show(r)}`)
    assert.ok(r.stdout.includes(`denied ${label}\n`), `"${label}" did not report\n${show(r)}`)
  }
}

/** A TCP server on 127.0.0.1 answering `hello <path>`; `paths` lists what it was asked. */
async function upstream(t) {
  const paths = []
  const server = net.createServer((s) => {
    s.once('data', (d) => {
      const p = String(d).split(' ')[1] || ''
      paths.push(p)
      const body = `hello ${p}`
      s.end(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`)
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => server.close())
  return { port: server.address().port, paths }
}

test('writes: the workspace yes; outside, .git, protected names and their creation no', { skip }, async (t) => {
  const { ws, out } = tree(t)
  const list = [
    ['outside', `echo x > ${out}/x`],
    ['git config', 'echo x >> .git/config'],
    ['git hook', 'echo x > .git/hooks/pre-commit'],
    ['new nested .git', 'mkdir -p sub && mkdir sub/.git'],
    ['.envrc at the top', 'echo x > .envrc'],
    ['.envrc deeper', 'mkdir -p a/b && echo x > a/b/.envrc'],
    ['rename .git away', 'mv .git git-moved'],
  ]
  const r = await sh(`echo ok > file && echo WROTE file\nmkdir -p node_modules/p/.vscode && echo x > node_modules/p/.vscode/s && echo WROTE nm\n${attempts(list)}`, { cwd: ws, sandbox: WS() })
  assert.equal(r.sandboxType, 'seatbelt')
  assertDenied(r, list)
  assert.match(r.stdout, /WROTE file\n/, show(r))
  assert.match(r.stdout, /WROTE nm\n/, 'protected names are not enforced inside node_modules')
  assert.equal(fs.readFileSync(path.join(ws, '.git/config'), 'utf8'), '[core]\n')
  assert.deepEqual(fs.readdirSync(out), [])
  assert.ok(!fs.existsSync(path.join(ws, '.envrc')))
})

test('read-only: nothing is writable; denyRead: the secret cannot be read', { skip }, async (t) => {
  const { ws } = tree(t)
  const list = [['write in the cwd', 'echo x > file'], ['read the secret', 'cat secret']]
  const r = await sh(attempts(list), { cwd: ws, sandbox: { mode: 'read-only', denyRead: [path.join(ws, 'secret')] } })
  assertDenied(r, list)
  assert.ok(!r.stdout.includes('top secret'), show(r))
})

test('network off: no connection, not even to a port of the host loopback', { skip }, async (t) => {
  const { ws } = tree(t)
  const up = await upstream(t)
  const r = await sh(`curl -s --max-time 5 http://127.0.0.1:${up.port}/off; echo " rc=$?"`, { cwd: ws, sandbox: WS() })
  assert.doesNotMatch(r.stdout, / rc=0$/m, show(r))
  assert.deepEqual(up.paths, [])
})

test('allow-list: the allowed host through the run proxy; no other host, no other loopback port, no proxy without the credential', { skip }, async (t) => {
  const { ws } = tree(t)
  const up = await upstream(t)
  const other = await upstream(t)
  const script = [
    `curl -s --max-time 10 http://127.0.0.1:${up.port}/via-proxy; echo " rc=$?"`,
    `curl -s --max-time 5 --noproxy '*' http://127.0.0.1:${up.port}/direct; echo " direct rc=$?"`,
    `curl -s --max-time 5 --noproxy '*' http://127.0.0.1:${other.port}/other-port; echo " other rc=$?"`,
    `curl -s --max-time 10 -o /dev/null -w '%{http_code}' http://evil.test/; echo " evil"`,
    // The proxy's address without the user name and password of the URLs the command was given.
    `curl -s --max-time 10 -o /dev/null -w '%{http_code}' --proxy "http://\${HTTP_PROXY##*@}" http://127.0.0.1:${up.port}/nocred; echo " nocred"`,
  ].join('\n')
  const network = { allowedDomains: ['127.0.0.1'], allowPrivateAddresses: ['127.0.0.1'] }
  const r = await sh(script, { cwd: ws, sandbox: WS({ network }) })
  assert.match(r.stdout, /^hello \/via-proxy rc=0$/m, show(r))
  assert.doesNotMatch(r.stdout, /^ ?direct rc=0$/m, show(r))
  assert.doesNotMatch(r.stdout, /^ ?other rc=0$/m, show(r))
  assert.match(r.stdout, /^403 evil$/m, show(r))
  assert.match(r.stdout, /^407 nocred$/m, show(r))
  assert.deepEqual(up.paths, ['/via-proxy'], 'only the proxied request reached the upstream')
  assert.deepEqual(other.paths, [])
  const seen = r.networkDenials.map((d) => [d.host, d.reason])
  assert.deepEqual(seen, [['evil.test', 'not_allowed'], ['127.0.0.1', 'unauthenticated']])
})

test("allow-list: another local process cannot use the run's proxy", { skip }, async (t) => {
  const { ws } = tree(t)
  const up = await upstream(t)
  // The command writes its proxy URL where the test reads it, then waits until the test is done.
  const run = sh('printf %s "$HTTP_PROXY" > proxy-url; i=0; while [ ! -e done ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done', {
    cwd: ws,
    sandbox: WS({ network: { allowedDomains: ['127.0.0.1'], allowPrivateAddresses: ['127.0.0.1'] } }),
  })
  const urlFile = path.join(ws, 'proxy-url')
  for (let i = 0; i < 300 && !(fs.existsSync(urlFile) && fs.readFileSync(urlFile, 'utf8')); i++) await new Promise((r) => setTimeout(r, 100))
  const url = new URL(fs.readFileSync(urlFile, 'utf8'))
  assert.equal(url.username, 'sandspawn')
  const ask = (auth) =>
    new Promise((resolve, reject) => {
      const s = net.connect(Number(url.port), '127.0.0.1', () => s.write(`CONNECT 127.0.0.1:${up.port} HTTP/1.1\r\n${auth}\r\n`))
      s.once('data', (d) => (resolve(String(d).split('\r\n')[0]), s.destroy()))
      s.once('error', reject)
    })
  const basic = (user, password) => `Proxy-Authorization: Basic ${Buffer.from(`${user}:${password}`).toString('base64')}\r\n`
  assert.match(await ask(''), /^HTTP\/1\.1 407/)
  assert.match(await ask(basic('sandspawn', '0'.repeat(32))), /^HTTP\/1\.1 407/)
  assert.match(await ask(basic(url.username, url.password)), /^HTTP\/1\.1 200/, 'the credential the command was given opens it')
  fs.writeFileSync(path.join(ws, 'done'), '')
  const r = await run
  assert.equal(r.exitCode, 0, show(r))
  assert.deepEqual(r.networkDenials.map((d) => [d.reason, d.count]), [['unauthenticated', 2]])
})

test('host Unix sockets: refused unless listed', { skip }, async (t) => {
  const { root, ws } = tree(t)
  const sock = path.join(root, 'agent.sock')
  const server = net.createServer((s) => s.end('hi'))
  await new Promise((resolve) => server.listen(sock, resolve))
  t.after(() => server.close())
  const connect = `python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print("CONNECTED")' ${sock}`
  const off = await sh(connect, { cwd: ws, sandbox: WS() })
  assert.doesNotMatch(off.stdout, /CONNECTED/, show(off))
  const listed = await sh(connect, { cwd: ws, sandbox: WS({ allowUnixSockets: [sock] }) })
  assert.match(listed.stdout, /CONNECTED/, show(listed))
})

test("tool caches: the workspace's store is written, the host's cache and another workspace's store are not", { skip }, async (t) => {
  const { root, ws } = tree(t)
  const home = path.join(root, 'home')
  fs.mkdirSync(path.join(home, '.npm/_cacache'), { recursive: true })
  fs.writeFileSync(path.join(home, '.npm/_cacache/index'), 'from the host\n')
  const ws2 = path.join(root, 'ws2')
  fs.mkdirSync(ws2)
  const env = { ...process.env, HOME: home, SANDSPAWN_TOOL_CACHE_DIR: path.join(root, 'store') }
  const list = [['the host cache', `echo x > ${home}/.npm/evil`]]
  const r = await sh(`cat "$npm_config_cache/_cacache/index"\necho mine > "$npm_config_cache/mine" && echo WROTE store\n${attempts(list)}`, { cwd: ws, env, sandbox: WS() })
  assertDenied(r, list)
  assert.match(r.stdout, /^from the host$/m, 'seeded from the host (an APFS clone)')
  assert.match(r.stdout, /WROTE store\n/, show(r))
  assert.equal(r.toolCaches.mode, 'private')
  assert.equal(r.toolCaches.hostContent, 'visible')
  const npm = r.toolCaches.caches.find((c) => c.name === 'npm')
  const dir = npm.variables.npm_config_cache
  assert.equal(fs.readFileSync(path.join(dir, 'mine'), 'utf8'), 'mine\n')
  assert.ok(!fs.existsSync(path.join(home, '.npm/evil')) && !fs.existsSync(path.join(home, '.npm/mine')), 'the host cache is unchanged')
  // A run in another workspace cannot plant anything in this workspace's store.
  const list2 = [["another workspace's store", `echo evil > ${dir}/planted`]]
  const r2 = await sh(`${attempts(list2)}\necho "$npm_config_cache"`, { cwd: ws2, env, sandbox: WS() })
  assertDenied(r2, list2)
  assert.notEqual(r2.stdout.trim().split('\n').pop(), dir, 'a store of its own')
})
