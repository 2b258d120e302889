'use strict'
// The machine's socket memory (README, "Per-user kernel budgets"): TCP's and UDP's buffers are
// counted in one pool for the whole machine (`net.ipv4.tcp_mem`, `udp_mem`), over every network
// namespace, user and sandbox, and no namespace has a bound of its own.
//
// Found by an attacker's review (cross27): a run with the network off (its own empty network
// namespace) made 750 loopback connections whose readers never read and took TCP's memory past
// tcp_mem's hard limit in 16 s. While it lived, a TCP connection closed with data still queued was
// reset ("TCP: out of memory -- consider tuning tcp_mem"), in another run's sandbox and on the
// host alike: the reader got ECONNRESET and the rest of the data was lost; the host's UDP socket
// received 3 of 20 datagrams. Nothing per run bounds it (no rlimit counts socket buffers, and the
// count of sockets is the descriptors of every process); it is documented, not prevented.
//
// Opt-in (SANDSPAWN_MACHINE_WIDE_TESTS=1): for the seconds it holds the pool, every program on the
// machine that uses TCP is slowed or reset, other users' and CI's included.

const { test } = require('node:test')
const assert = require('node:assert/strict')
const fs = require('node:fs')
const path = require('node:path')
const { spawnSync } = require('node:child_process')
const { run, show, tempTree } = require('./helpers')

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'socket-memory.py')
const TCP_MEM = '/proc/sys/net/ipv4/tcp_mem'
const README = path.join(__dirname, '..', '..', 'README.md')

const skip =
  process.platform !== 'linux' ? 'Linux only'
  : process.env.SANDSPAWN_MACHINE_WIDE_TESTS !== '1' ? 'takes the whole machine\'s TCP memory for seconds: set SANDSPAWN_MACHINE_WIDE_TESTS=1'
  : !fs.existsSync(TCP_MEM) ? `${TCP_MEM} is missing`
  : spawnSync('python3', ['-c', '']).status !== 0 ? 'python3 is not installed'
  : false

test('a run with the network off can take the machine\'s TCP memory, resetting the host\'s connections, as the README says', { skip, timeout: 180000 }, async (t) => {
  const hard = Number(fs.readFileSync(TCP_MEM, 'utf8').trim().split(/\s+/)[2])
  const tree = tempTree(t)
  const ready = path.join(tree.ws, 'ready')
  const ac = new AbortController()
  const held = run(['python3', FIXTURE, 'fill', ready, String(hard)], { cwd: tree.ws, sandbox: 'workspace-write', signal: ac.signal, timeout: 170000 }).catch((e) => e)
  for (let waited = 0; !fs.existsSync(ready) && waited < 150000; waited += 100) await new Promise((r) => setTimeout(r, 100))
  const took = fs.existsSync(ready) ? fs.readFileSync(ready, 'utf8') : 'no ready file'
  const host = spawnSync('python3', [FIXTURE, 'send'], { encoding: 'utf8', timeout: 30000 })
  ac.abort()
  const r = await held
  t.diagnostic(`the run: ${took}; the host's connection: ${host.stdout.trim()}`)
  const m = /^pages (\d+) hard (\d+) pairs (\d+)$/.exec(took)
  assert.ok(m, `${took}\n${show(r.result || r)}`)
  assert.ok(Number(m[1]) > hard, `the run took ${m[1]} pages of TCP memory, tcp_mem's hard limit is ${hard}`)
  const sent = /^sent (\d+) received (\d+)$/.exec(host.stdout.trim())
  assert.ok(!sent || Number(sent[2]) < Number(sent[1]), `the host's connection lost nothing: ${host.stdout}${host.stderr}`)
  // What this shows is said where the user looks for what one run can take from others.
  const readme = fs.readFileSync(README, 'utf8')
  const budgets = readme.slice(readme.indexOf('- **Per-user kernel budgets.**'), readme.indexOf('- **Advisory locks on your files.**'))
  assert.match(budgets, /net\.ipv4\.tcp_mem/, 'the README\'s per-user kernel budgets name the machine\'s TCP memory')
  assert.match(budgets, /udp_mem/, 'the README\'s per-user kernel budgets name the machine\'s UDP memory')
})
