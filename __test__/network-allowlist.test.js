'use strict'
// The network allow-list on the real bwrap, offline: test upstreams listen on the host at 127.0.0.2,
// reachable only because each test lists that address in allowPrivateAddresses (the real carve-out);
// hosts that must not resolve use the .test and .invalid names, which the proxy refuses before any
// lookup. No traffic leaves loopback.

const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const net = require('node:net')
const fs = require('node:fs')
const path = require('node:path')
const { execFileSync } = require('node:child_process')

const { spawnSandboxed, startSandboxed, buildSandboxCommand, classifySandboxDenial } = require('..')

const UPSTREAM_HOST = '127.0.0.2'
let upstream
let seen = []

before(async () => {
  upstream = http.createServer((req, res) => {
    seen.push(req.url)
    res.end(`hello from upstream ${req.url} host=${req.headers.host}`)
  })
  await new Promise((resolve) => upstream.listen(0, UPSTREAM_HOST, resolve))
})
after(() => upstream.close())

const port = () => upstream.address().port
const url = (p) => `http://${UPSTREAM_HOST}:${port()}${p}`
const allowUpstream = (extra = {}) => ({ network: { allowedDomains: [UPSTREAM_HOST], allowPrivateAddresses: [UPSTREAM_HOST], ...extra } })
const sh = (script, sandbox, options = {}) => spawnSandboxed(['sh', '-c', script], { sandbox, timeout: 60000, ...options })

test('allowed host: plain HTTP, CONNECT and SOCKS5 (curl), and Python urllib through the proxy variables', async () => {
  seen = []
  const script = [
    `curl -sS ${url('/plain')}; echo`,
    `curl -sS -p ${url('/tunnel')}; echo`,
    `curl -sS --proxy "socks5h://127.0.0.1:\${HTTP_PROXY##*:}" ${url('/socks')}; echo`,
    `python3 -c "import urllib.request; print(urllib.request.urlopen('${url('/python')}').read().decode())"`,
    'echo "SANDSPAWN_NETWORK=$SANDSPAWN_NETWORK NO_PROXY=$NO_PROXY DISABLED=${SANDSPAWN_NETWORK_DISABLED:-unset}"',
  ].join('; ')
  const r = await sh(script, allowUpstream())
  assert.equal(r.exitCode, 0, r.stderr)
  for (const p of ['/plain', '/tunnel', '/socks', '/python']) {
    assert.match(r.stdout, new RegExp(`hello from upstream ${p} host=${UPSTREAM_HOST}:${port()}`))
  }
  assert.match(r.stdout, /SANDSPAWN_NETWORK=proxy NO_PROXY=localhost,127.0.0.1,::1 DISABLED=unset/)
  assert.deepEqual(r.networkDenials, [])
  assert.deepEqual(seen.sort(), ['/plain', '/python', '/socks', '/tunnel'])
})

test('a host not on the list: 403 naming sandspawn, counted in networkDenials, classified network_denied', async () => {
  const r = await sh('curl -sS -i http://evil.test/x; curl -sS http://evil.test/y; curl -sS https://evil.test/', allowUpstream())
  assert.notEqual(r.exitCode, 0)
  assert.match(r.stdout, /HTTP\/1.1 403 Forbidden/)
  assert.match(r.stdout, /x-sandspawn-denied: not_allowed/i)
  assert.match(r.stdout, /sandspawn: evil.test:80 blocked by the network policy \(not_allowed\)/)
  assert.match(r.stderr, /CONNECT tunnel failed, response 403/)
  assert.deepEqual(r.networkDenials, [
    { host: 'evil.test', port: 80, via: 'http', reason: 'not_allowed', count: 2 },
    { host: 'evil.test', port: 443, via: 'connect', reason: 'not_allowed', count: 1 },
  ])
  assert.equal(r.denial.reason, 'network_denied')
  assert.equal(r.denial.kind, 'network')
  assert.equal(r.denial.host, 'evil.test')
  assert.equal(r.sandboxDenied, true)
  assert.equal(classifySandboxDenial(r).reason, 'network_denied', 'the public classifier agrees')
})

test('deniedDomains wins over a wildcard; SOCKS5 refusals are reply 0x02; a private name is refused', async () => {
  const r = await sh(
    [
      'curl -sS https://bad.example.test/ 2>&1',
      'curl -sS --proxy "socks5h://127.0.0.1:${HTTP_PROXY##*:}" http://other.invalid/ 2>&1',
      // localhost is allowed by name but resolves to loopback, which is not in allowPrivateAddresses.
      // (--noproxy '' overrides NO_PROXY, which keeps localhost direct, i.e. the sandbox's own.)
      `curl -sS --noproxy '' -p http://localhost:${port()}/ 2>&1`,
      'true',
    ].join('; '),
    { network: { allowedDomains: ['*.example.test', 'localhost'], deniedDomains: ['bad.example.test'] } },
  )
  assert.match(r.stdout, /CONNECT tunnel failed, response 403/)
  assert.match(r.stdout, /Can't complete SOCKS5 connection to other.invalid/)
  assert.deepEqual(
    r.networkDenials.map((d) => [d.host, d.via, d.reason]),
    [
      ['bad.example.test', 'connect', 'denied'],
      ['other.invalid', 'socks5', 'not_allowed'],
      ['localhost', 'connect', 'private_address'],
    ],
  )
  assert.equal(r.exitCode, 0)
  assert.equal(r.denial, null, 'a run that succeeded is not a denial')
})

test('host.sandspawn.internal reaches the host loopback when listed exactly; localhost stays the sandbox\'s own', async () => {
  const hits = []
  const local = http.createServer((req, res) => {
    hits.push(req.url)
    res.end(`host service ${req.url}`)
  })
  await new Promise((resolve) => local.listen(0, '127.0.0.1', resolve))
  try {
    const p = local.address().port
    const script = [
      `curl -sS http://host.sandspawn.internal:${p}/alias; echo`,
      `curl -sS -p http://host.sandspawn.internal:${p}/tunnel; echo`,
      `curl -sS --noproxy '*' http://localhost:${p}/own; echo "own=$?"`,
    ].join('; ')
    const r = await sh(script, { network: { allowedDomains: ['host.sandspawn.internal'] } })
    assert.match(r.stdout, /host service \/alias/)
    assert.match(r.stdout, /host service \/tunnel/)
    assert.match(r.stdout, /own=7/, 'localhost inside is the sandbox\'s own loopback')
    assert.deepEqual(hits, ['/alias', '/tunnel'])
    assert.deepEqual(r.networkDenials, [])

    const w = await sh(`curl -sS http://host.sandspawn.internal:${p}/wild`, { network: { allowedDomains: ['*.sandspawn.internal'] } })
    assert.match(w.stdout, /add exactly 'host.sandspawn.internal'/)
    assert.deepEqual(w.networkDenials.map((d) => [d.host, d.reason]), [['host.sandspawn.internal', 'not_allowed']])
    assert.deepEqual(hits, ['/alias', '/tunnel'], 'a wildcard never reaches the host')
  } finally {
    local.close()
  }
})

const pip = require('node:child_process').spawnSync('python3', ['-m', 'pip', '--version'], { encoding: 'utf8' })
test('pip gives up on a host the proxy refused after one retry, not five; a PIP_RETRIES of the caller wins', { skip: pip.status !== 0 && 'pip is not installed here' }, async () => {
  // Each attempt is one refused CONNECT, so the denial's count is pip's attempts (a count, not a time).
  const cmd = 'TMPDIR=/dev/shm python3 -m pip download --no-cache-dir --no-deps -d /dev/shm/dl --index-url https://index.test/simple sandspawn-probe 2>&1'
  const attempts = async (env) => {
    const r = await sh(cmd, { network: { allowedDomains: ['pypi.org'] } }, { env })
    assert.notEqual(r.exitCode, 0)
    assert.match(r.stdout, /Tunnel connection failed: 403/)
    return r.networkDenials.filter((d) => d.host === 'index.test').reduce((n, d) => n + d.count, 0)
  }
  assert.equal(await attempts({}), 2, 'one attempt and one retry')
  assert.equal(await attempts({ PIP_RETRIES: '2' }), 3, "the caller's setting is kept")
})

test('a connection that ignores the proxy fails without reaching the host; Unix sockets stay blocked', async () => {
  seen = []
  const r = await sh(
    `curl -sS --noproxy '*' ${url('/direct')}; echo "curl=$?"; python3 -c "import socket; socket.socket(socket.AF_UNIX)" 2>&1 | tail -1`,
    allowUpstream(),
  )
  assert.match(r.stdout, /curl=7/)
  assert.match(r.stdout, /PermissionError: \[Errno 1\] Operation not permitted/)
  assert.deepEqual(seen, [], 'the upstream saw nothing')
})

test('malformed requests are refused without crashing or hanging the host', async () => {
  const py = `
import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
def talk(data):
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(30); s.sendall(data)
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b: break
            out += b
    except Exception as e:
        out += repr(e).encode()
    s.close(); return out
print("garbage", talk(b"\\x16\\x03\\x01\\x00\\xff garbage\\r\\n\\r\\n")[:12])
print("long", talk(b"GET http://x.test/" + b"a" * 100000 + b" HTTP/1.1\\r\\n\\r\\n")[:12])
print("socks4", talk(bytes([4, 1, 0, 80, 127, 0, 0, 1, 0])))
print("port0", talk(b"CONNECT ${UPSTREAM_HOST}:0 HTTP/1.1\\r\\nConnection: close\\r\\n\\r\\n")[:12])
`
  const r = await spawnSandboxed(['python3', '-c', py], { sandbox: allowUpstream(), timeout: 60000 })
  assert.equal(r.exitCode, 0, r.stderr)
  assert.match(r.stdout, /garbage b'HTTP\/1.1 400'/)
  assert.match(r.stdout, /long b'(HTTP\/1.1 4\d\d)?'/)
  assert.match(r.stdout, /socks4 b'\\x00\[\\x00\\x00\\x00\\x00\\x00\\x00'/)
  assert.match(r.stdout, /port0 b'HTTP\/1.1 403'/)
  assert.deepEqual(r.networkDenials.map((d) => [d.host, d.port, d.reason]), [[UPSTREAM_HOST, 0, 'malformed']])
  // The host process still serves the next run.
  assert.equal((await sh(`curl -sS ${url('/after')}`, allowUpstream())).exitCode, 0)
})

test('a failed run whose only refusals are its own malformed requests is no network_denied: no --allow-domain advice, no rerun offered', async () => {
  // An allowed host asked for on port 0, then a made-up failure: the policy refused nothing it could allow.
  const py = (also) => `
import os, socket, sys
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
def connect(target):
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(30)
    s.sendall(b"CONNECT " + target + b" HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n"); s.recv(100); s.close()
connect(b"${UPSTREAM_HOST}:0")
${also}
print("npm error code E403", file=sys.stderr); sys.exit(1)`
  const own = await spawnSandboxed(['python3', '-c', py('')], { sandbox: allowUpstream(), timeout: 60000 })
  assert.deepEqual(own.networkDenials.map((d) => [d.host, d.reason]), [[UPSTREAM_HOST, 'malformed']])
  assert.notEqual(own.denial?.reason, 'network_denied', JSON.stringify(own.denial))
  assert.deepEqual(classifySandboxDenial(own), own.denial)
  // A refusal of the policy after it decides, though the malformed one came first.
  const both = await spawnSandboxed(['python3', '-c', py('connect(b"evil.test:443")')], { sandbox: allowUpstream(), timeout: 60000 })
  assert.deepEqual(both.networkDenials.map((d) => [d.host, d.reason]), [[UPSTREAM_HOST, 'malformed'], ['evil.test', 'not_allowed']])
  assert.equal(both.denial.reason, 'network_denied')
  assert.equal(both.denial.host, 'evil.test')
  assert.deepEqual(classifySandboxDenial(both), both.denial)
  // The CLI does not tell the caller that the policy refused an allowed host.
  const bin = path.join(__dirname, '..', 'bin', 'sandspawn.js')
  const cli = require('node:child_process').spawnSync(process.execPath, [bin, '--allow-domain', UPSTREAM_HOST, '--allow-private', UPSTREAM_HOST, '--', 'python3', '-c', py('')], { encoding: 'utf8', timeout: 60000 })
  assert.equal(cli.status, 1, cli.stderr)
  assert.doesNotMatch(cli.stderr, /network policy refused|--allow-domain/, cli.stderr)
  // Nor does escalation offer to rerun it without the sandbox.
  const { runWithEscalation } = require('..')
  let offered = 0
  const esc = await runWithEscalation(['python3', '-c', py('')], { sandbox: allowUpstream(), timeout: 60000, approve: () => (offered++, false) })
  assert.equal(offered, 0, JSON.stringify(esc.denial))
})

test('networkDenials lists at most 256 distinct refusals; networkDenialsOmitted counts the refused requests past them', async () => {
  const py = `
import os, socket
port = int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])
for i in range(300):
    s = socket.create_connection(("127.0.0.1", port)); s.settimeout(30)
    s.sendall(b"CONNECT h%d.test:443 HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" % i); s.recv(100); s.close()
`
  const r = await spawnSandboxed(['python3', '-c', py], { sandbox: allowUpstream(), timeout: 60000 })
  assert.equal(r.exitCode, 0, r.stderr)
  assert.equal(r.networkDenials.length, 256)
  assert.equal(r.networkDenialsOmitted, 44)
  const none = await sh(`curl -sS ${url('/fine')}`, allowUpstream())
  assert.equal(none.networkDenialsOmitted, 0)
})

test('the proxy port is not reachable from other host processes, and is gone after the run', async () => {
  let out = ''
  const child = await startSandboxed(['sh', '-c', 'echo "port=${HTTP_PROXY##*:}"; sleep 30'], {
    sandbox: allowUpstream(),
    onOutput: (c) => (out += c.data.toString()),
  })
  while (!/port=\d+/.test(out)) await new Promise((r) => setTimeout(r, 10))
  const proxyPort = Number(out.match(/port=(\d+)/)[1])
  // From the host: either nothing listens there, or it is some other service, never our proxy.
  const reply = await new Promise((resolve) => {
    const s = net.connect(proxyPort, '127.0.0.1')
    let got = ''
    s.on('connect', () => s.write('GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\nConnection: close\r\n\r\n'))
    s.on('data', (d) => (got += d))
    s.on('error', (e) => resolve(e.code))
    s.on('close', () => resolve(got))
    s.setTimeout(5000, () => s.destroy())
  })
  assert.doesNotMatch(String(reply), /sandspawn/i, 'the host reached the proxy')
  child.kill('SIGKILL')
  const r = await child.wait()
  assert.deepEqual(r.networkDenials, [], 'the host attempt was not served by the run')
})

test('nothing is left behind: no descriptor growth over many runs', async () => {
  const fds = () => fs.readdirSync('/proc/self/fd').length
  await sh(`curl -sS ${url('/warm')}`, allowUpstream())
  const before = fds()
  for (let i = 0; i < 60; i++) {
    const r = await sh(`curl -sS ${url('/loop')} -o /dev/null; curl -sS -p ${url('/loop')} -o /dev/null; curl -sS http://evil.test/ -o /dev/null; true`, allowUpstream())
    assert.equal(r.exitCode, 0, r.stderr)
    assert.equal(r.networkDenials.length, 1)
  }
  // Node's own handles come and go (the upstream's sockets close asynchronously): allow slack, not growth.
  await new Promise((r) => setTimeout(r, 200))
  assert.ok(fds() <= before + 4, `descriptors grew from ${before} to ${fds()}`)
})

test('options: validation, danger-full-access, and self-contained plans', async () => {
  const bad = async (network, field) => {
    await assert.rejects(spawnSandboxed(['true'], { sandbox: { network } }), (e) => e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && e.message.startsWith(field))
  }
  await bad({ allowedDomains: ['*'] }, 'options.sandbox.network.allowedDomains[0]')
  await bad({ allowedDomains: ['ok.test', '*.com'] }, 'options.sandbox.network.allowedDomains[1]')
  await bad({ allowedDomains: ['x.test:443'] }, 'options.sandbox.network.allowedDomains[0]')
  await bad({ allowedDomains: ['https://x.test'] }, 'options.sandbox.network.allowedDomains[0]')
  await bad({ allowedDomains: ['bücher.de'] }, 'options.sandbox.network.allowedDomains[0]')
  await bad({ allowedDomains: [], allowPrivateAddresses: ['lan'] }, 'options.sandbox.network.allowPrivateAddresses[0]')
  await bad({ deniedDomains: [] }, 'options.sandbox.network.allowedDomains')
  await assert.rejects(
    spawnSandboxed(['true'], { sandbox: { mode: 'danger-full-access', network: { allowedDomains: [] } } }),
    (e) => e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && /danger-full-access/.test(e.message),
  )
  assert.throws(() => buildSandboxCommand(['true'], { sandbox: allowUpstream() }), (e) => e.code === 'ERR_SANDBOX_UNSUPPORTED' && /spawnSandboxed/.test(e.message))
  // macOS runs the allow-list too (its proxy on the host's loopback), but a plan for another
  // spawner cannot carry the proxy there either.
  assert.throws(() => buildSandboxCommand(['true'], { sandbox: allowUpstream(), platform: 'darwin' }), (e) => e.code === 'ERR_SANDBOX_UNSUPPORTED' && /spawnSandboxed/.test(e.message))
  const none = await sh('curl -sS http://any.test/ -o /dev/null; true', { network: { allowedDomains: [] } })
  assert.deepEqual(none.networkDenials, [{ host: 'any.test', port: 80, via: 'http', reason: 'not_allowed', count: 1 }], '[] still reports by name')
  assert.deepEqual((await spawnSandboxed(['true'])).networkDenials, [], 'always present')
})

test('CLI: --allow-domain / --deny-domain', () => {
  const bin = path.join(__dirname, '..', 'bin', 'sandspawn.js')
  let out
  try {
    execFileSync(process.execPath, [bin, '--allow-domain', UPSTREAM_HOST, '--deny-domain', 'evil.test', '--', 'curl', '-sSf', 'http://evil.test/'], { encoding: 'utf8', stdio: 'pipe' })
    assert.fail('curl should fail')
  } catch (e) {
    out = e.stderr
  }
  assert.match(out, /the network policy refused evil.test/)
})

// A wildcard on a suffix of the Public Suffix List's PRIVATE section is taken (it is usually meant:
// every raw.githubusercontent.com-like host of a service), and every run says it lets in every
// owner's hosts under it; one on an ICANN suffix is refused (network/policy.rs's own tests).
test('an allowed wildcard on a private public suffix (*.github.io) is taken and said in notEnforced; *.co.uk is refused', async () => {
  const r = await spawnSandboxed(['true'], { sandbox: { mode: 'workspace-write', network: { allowedDomains: ['*.github.io', '*.example.com'] } } })
  assert.equal(r.exitCode, 0)
  const said = r.sandboxDetails.notEnforced.filter((l) => l.startsWith('network: allowedDomains'))
  assert.equal(said.length, 1, JSON.stringify(r.sandboxDetails.notEnforced))
  assert.match(said[0], /'\*\.github\.io' lets in every owner's hosts under it.*PRIVATE/)
  await assert.rejects(spawnSandboxed(['true'], { sandbox: { mode: 'workspace-write', network: { allowedDomains: ['*.co.uk'] } } }), (e) => e.code === 'ERR_SANDBOX_INVALID_OPTIONS' && /public suffix/.test(e.message))
})
