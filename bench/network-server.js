'use strict'
// The upstream of bench/network.js, in a process of its own (so its CPU is not charged to the
// proxy, which runs in the bench's process): `GET /N` answers N bytes with a Content-Length,
// written from one preallocated buffer. Prints the port, then serves until killed.

const http = require('node:http')

const CHUNK = Buffer.alloc(1 << 20, 0x61)
const host = process.argv[2] || '127.0.0.2'

function send(res, left) {
  while (left > 0) {
    const n = Math.min(left, CHUNK.length)
    left -= n
    if (!res.write(n === CHUNK.length ? CHUNK : CHUNK.subarray(0, n))) return res.once('drain', () => send(res, left))
  }
  res.end()
}

const server = http.createServer((req, res) => {
  const bytes = Number(req.url.slice(1)) || 0
  res.writeHead(200, { 'content-length': bytes, 'content-type': 'application/octet-stream' })
  send(res, bytes)
})
server.listen(0, host, () => process.stdout.write(`${server.address().port}\n`))
