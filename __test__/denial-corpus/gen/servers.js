'use strict'
// The only servers corpus commands talk to, all started here on loopback or as a Unix socket under
// the scratch dir: a static HTTP server (a page, 404s for npm/pip registries, a dumb-HTTP git
// repository, and a cargo sparse registry holding one crate), a Docker-like HTTP server on a Unix
// socket, and a loopback port known to be closed. Nothing else is contacted.

const fs = require('node:fs')
const net = require('node:net')
const path = require('node:path')
const crypto = require('node:crypto')
const { spawn, execFileSync } = require('node:child_process')

/** A loopback port nobody listens on (bound, then released). */
function closedPort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer()
    s.on('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })
}

/** Static site under `root`: index page, dumb-HTTP git repo, cargo registry with `oorandom`. */
function buildSite(root, port, remote) {
  fs.mkdirSync(root, { recursive: true })
  fs.writeFileSync(path.join(root, 'index.html'), '<html>ok</html>\n')
  execFileSync('git', ['clone', '-q', '--bare', remote, path.join(root, 'repo.git')])
  execFileSync('git', ['update-server-info'], { cwd: path.join(root, 'repo.git') })

  const src = path.join(root, '..', 'oorandom-src')
  fs.mkdirSync(path.join(src, 'src'), { recursive: true })
  fs.writeFileSync(path.join(src, 'Cargo.toml'), '[package]\nname = "oorandom"\nversion = "11.1.3"\nedition = "2018"\nlicense = "MIT"\ndescription = "corpus stand-in"\n')
  fs.writeFileSync(path.join(src, 'src/lib.rs'), 'pub fn seed() -> u64 { 4 }\n')
  execFileSync('cargo', ['package', '--offline', '--no-verify', '--allow-dirty', '-q'], { cwd: src, stdio: 'pipe' })
  const crate = fs.readFileSync(path.join(src, 'target/package/oorandom-11.1.3.crate'))
  const cksum = crypto.createHash('sha256').update(crate).digest('hex')
  const reg = path.join(root, 'cargo')
  fs.mkdirSync(path.join(reg, 'index/oo/ra'), { recursive: true })
  fs.writeFileSync(path.join(reg, 'index/config.json'), JSON.stringify({ dl: `http://127.0.0.1:${port}/cargo/dl` }))
  fs.writeFileSync(path.join(reg, 'index/oo/ra/oorandom'), JSON.stringify({ name: 'oorandom', vers: '11.1.3', deps: [], cksum, features: {}, yanked: false }) + '\n')
  fs.mkdirSync(path.join(reg, 'dl/oorandom/11.1.3'), { recursive: true })
  fs.writeFileSync(path.join(reg, 'dl/oorandom/11.1.3/download'), crate)
}

const PY_SERVERS = String.raw`
import http.server, socketserver, sys, os, threading
root, port, sock = sys.argv[1], int(sys.argv[2]), sys.argv[3]
class Quiet(http.server.SimpleHTTPRequestHandler):
    def __init__(self, *a, **k): super().__init__(*a, directory=root, **k)
    def log_message(self, *a): pass
class Docker(http.server.BaseHTTPRequestHandler):
    def address_string(self): return 'unix'
    def log_message(self, *a): pass
    def do_GET(self):
        body = b'{"message":"page not found"}'
        self.send_response(404); self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(body))); self.end_headers(); self.wfile.write(body)
    do_HEAD = do_POST = do_GET
class UnixHTTP(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    def handle_error(self, *a): pass
http.server.ThreadingHTTPServer.allow_reuse_address = True
web = http.server.ThreadingHTTPServer(('127.0.0.1', port), Quiet)
dock = UnixHTTP(sock, Docker)
threading.Thread(target=dock.serve_forever, daemon=True).start()
print('ready', flush=True)
web.serve_forever()
`

/** Starts the servers on `port`; resolves `{ port, closed, dockerSock, stop }` once they answer. */
async function startServers(t, remote, port, closed) {
  const site = path.join(t, 'site')
  buildSite(site, port, remote)
  const dockerSock = path.join(t, 'docker.sock')
  const child = spawn('python3', ['-c', PY_SERVERS, site, String(port), dockerSock], { stdio: ['ignore', 'pipe', 'inherit'] })
  await new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`servers exited with ${code}`)))
    child.stdout.on('data', (d) => d.toString().includes('ready') && resolve())
  })
  child.removeAllListeners('exit')
  const stop = () =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.on('exit', () => resolve())
      child.kill('SIGTERM')
    })
  return { port, closed, dockerSock, stop }
}

module.exports = { startServers, closedPort }
