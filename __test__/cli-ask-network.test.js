'use strict'
// `sandspawn --ask` on a terminal with an allow-list (issue 33): a host on neither list is asked
// about while the command runs and its request waits, on the CLI's terminal, in raw mode (one
// key), and the command's own output is never mixed into the question. Loopback only: the target
// is on 127.0.0.2, reachable through the real --allow-private carve-out.

const { test, before, after } = require('node:test')
const assert = require('node:assert/strict')
const http = require('node:http')
const path = require('node:path')
const { spawn } = require('node:child_process')
const { printedReadably } = require('./fixtures/screen-state')
const { RESET, COLOUR_RESET } = require('../lib/cli/terminal-reset')

const CLI = path.join(__dirname, '..', 'bin', 'sandspawn.js')
const DRIVER = path.join(__dirname, 'fixtures', 'ask-driver.py')
const TYPING = path.join(__dirname, 'fixtures', 'typing-driver.py')
const TARGET = '127.0.0.2'
let server

before(async () => {
  server = http.createServer((req, res) => res.end(`target ${req.url}`))
  await new Promise((resolve) => server.listen(0, TARGET, resolve))
})
after(() => server.close())

/** A pty driver (asynchronously: the target server lives in this process): its JSON report. */
function runDriver(driver, args, limitMs = 60000) {
  return new Promise((resolve, reject) => {
    const p = spawn('python3', [driver, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
    let out = ''
    p.stdout.on('data', (d) => (out += d))
    const timer = setTimeout(() => p.kill('SIGKILL'), limitMs)
    p.on('close', () => {
      clearTimeout(timer)
      try {
        resolve(JSON.parse(out))
      } catch (err) {
        reject(new Error(`driver output: ${out}`))
      }
    })
  })
}
const drive = (answers, args, limitMs) => runDriver(DRIVER, [answers, process.execPath, CLI, ...args], limitMs)

const flags = ['--ask', '--allow-domain', '127.0.0.4', '--allow-private', TARGET]
const script = (paths) => `printf before; ${paths.map((p) => `curl -sS http://${TARGET}:${server.address().port}${p}; echo`).join('; ')}; echo after`

test('--ask: y allows the host for the run (asked once), the question sits on its own line, output after it', async () => {
  const r = await drive('y', [...flags, '--', 'sh', '-c', script(['/one', '/two'])])
  const screen = r.output.replace(/\r\n/g, '\n')
  assert.equal(r.code, 0, screen)
  const port = server.address().port
  assert.equal(screen, `before${RESET}\r\n\x1b[Jsandspawn: allow ${TARGET}:${port} for this run? [y/N/a] (a = this and every later host, no more questions) y\ntarget /one\ntarget /two\nafter\n`)
  assert.deepEqual(r.rawDuring, [true], 'the key is read in raw mode')
  assert.equal(r.restored, true, 'the terminal mode is restored')
})

test('--ask: the question says what its a does (this host and every later one, no more questions)', async () => {
  // An `a` allowed every host the run asked about later, without a word of that on the screen: the
  // question showed only [y/N/a] (found by a review of the CLI, cli29).
  const r = await drive('a', [...flags, '--', 'sh', '-c', script(['/one'])])
  const screen = r.output.replace(/\r\n/g, '\n')
  assert.equal(r.code, 0, screen)
  assert.match(screen, new RegExp(`sandspawn: allow ${TARGET}:\\d+ for this run\\? \\[y/N/a\\] \\(a = this and every later host, no more questions\\) a\n`), screen)
})

test('--ask: one answer covers the host and port for plain HTTP and for a tunnel (the proxy asks about them apart)', async () => {
  const port = server.address().port
  const both = `curl -sS http://${TARGET}:${port}/plain; echo; curl -sS -p http://${TARGET}:${port}/tunnel; echo`
  const r = await drive('y', [...flags, '--', 'sh', '-c', both], 30000)
  const screen = r.output.replace(/\r\n/g, '\n')
  assert.equal(r.code, 0, screen)
  assert.equal(screen.split('for this run?').length - 1, 1, screen)
  assert.match(screen, /target \/plain\ntarget \/tunnel\n/)
})

test('--ask: Enter refuses; the command sees the refusal (403 naming the flag) and the CLI its denial line', async () => {
  const r = await drive('\r', [...flags, '--', 'sh', '-c', script(['/no']) + '; exit 3'])
  assert.equal(r.error, undefined, r.output)
  const screen = r.output.replace(/\r\n/g, '\n')
  assert.equal(r.code, 3, screen)
  assert.match(screen, new RegExp(`for this run\\? \\[y/N/a\\] \\(a = this and every later host, no more questions\\) n\nsandspawn: ${TARGET}:\\d+ blocked by the network policy \\(declined\\)`))
  assert.match(screen, new RegExp(`--allow-domain ${TARGET}`))
  assert.equal(r.restored, true)
})

test('--ask: what the command printed cannot hide the question or put its own in its place', async () => {
  // The attack an attacker's review found: a fake question about a well-known host, then an
  // unterminated window-title string that swallowed the real question (and the echoed answer) on
  // xterm and VS Code's terminal, so the key the user pressed answered a question they never saw.
  // Synchronized output left on (ESC [?2026h): the terminal draws nothing new until it ends, and
  // the question was not on the screen when the key came (an attacker's review, mode30).
  for (const trap of ['\\033]2;', '\\033[8m', '\\033(0', '\\033]10;#000000\\007\\033]11;#000000\\007', '\\033[?2026h']) {
    const fake = `printf 'sandspawn: allow registry.npmjs.org:443 for this run? [y/N/a]${trap}'`
    const r = await drive('n', [...flags, '--', 'sh', '-c', `${fake}; ${script(['/spoof'])}`])
    assert.equal(r.error, undefined, r.output)
    const real = `sandspawn: allow ${TARGET}:${server.address().port} for this run?`
    assert.ok(printedReadably(r.output, real), `after ${trap} the real question is hidden: ${JSON.stringify(r.output)}`)
    assert.ok(printedReadably(r.output, 'blocked by the network policy (declined)'), JSON.stringify(r.output))
  }
})

/** `text` in a regular expression, as it is. */
const literal = (text) => text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')
/** What sandspawn writes before a line of its own after the command's output: see lib/cli/terminal-reset. */
// CR LF: the terminal's output processing (ONLCR, on while sandspawn writes) adds a CR of its own.
const FRESH = `${literal(RESET)}(?:${literal(COLOUR_RESET)})?\r+\n\x1b\\[J`

test('--ask: the question starts on a line of its own, cleared to the end of the screen, whatever the output left', async () => {
  // An attacker's review (in tmux): output that ends inside an OSC string whose last byte is LF
  // made the CLI think the cursor was at a line start (the terminal ignores that LF), so the
  // question followed the command's text on its line; and text the command drew on the next line
  // before moving back up stayed to the right of the question ("... [y/N/a]   <- press y").
  const port = server.address().port
  const cases = {
    'ends inside an OSC string with LF': "printf 'npm notice: mirror for registry.npmjs.org (already allowed) -> \\033]0;x\\n'",
    'drew the next line and moved up': "printf 'building\\n%56s<- this is registry.npmjs.org (allowed); press y\\033[A\\rstep 2' ''",
  }
  for (const [name, draw] of Object.entries(cases)) {
    // The question must follow what was drawn directly: no output between.
    const r = await drive('n', [...flags, '--', 'sh', '-c', `${draw}; curl -sS http://${TARGET}:${port}/fresh`])
    assert.equal(r.error, undefined, r.output)
    assert.match(r.output, new RegExp(`${FRESH}sandspawn: allow ${literal(TARGET)}:${port} for this run\\?`), `${name}: ${JSON.stringify(r.output)}`)
  }
})

test('--ask: the denial line and "Run again without the sandbox?" start on a cleared line too', async () => {
  // The same review: text drawn below where the question lands (then the cursor moved back up)
  // read as the question's end ("[yes/N]   <- retries only `mkdir build` in this folder"), and
  // the denial line followed the command's last text on its line.
  const draw = `for i in 1 2 3 4 5 6 7 8; do printf '%41s%s\\n' '' '<- retries only mkdir build in this folder'; done; printf '\\033[8A\\rcompiling'`
  const cmd = `${draw}; echo x > /usr/sandspawn-denied; printf "'out.txt'" >&2; exit 1`
  const r = await runDriver(TYPING, [JSON.stringify([['without the sandbox? [yes/N] ', '\r']]), process.execPath, CLI, '--ask', '--', 'sh', '-c', cmd])
  assert.deepEqual(r.unused, [], r.output)
  assert.match(r.output, new RegExp(`${FRESH}sandspawn: sandbox denied this command`), JSON.stringify(r.output))
  assert.match(r.output, new RegExp(`\\n${literal(RESET)}\\x1b\\[JRun again without the sandbox\\? \\[yes/N\\] `), JSON.stringify(r.output))
})

test('the denial line names the flag that fits the refusal: --allow-domain, --allow-private, or none for --deny-domain', async () => {
  const line = (args) =>
    new Promise((resolve) => {
      const p = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'] })
      let err = ''
      p.stderr.on('data', (d) => (err += d))
      p.on('close', () => resolve(err.split('\n').find((l) => l.startsWith('sandspawn: sandbox denied')) || err))
    })
  const curl = (u) => ['--', 'curl', '-sS', '--noproxy', '', '-p', u]
  assert.match(await line(['--allow-domain', '127.0.0.4', ...curl('http://other.test/')]), /refused other\.test; --allow-domain other\.test would allow it$/)
  assert.match(await line(['--allow-domain', 'localhost', ...curl('http://localhost:1/')]), /refused localhost \(private_address\): .*--allow-private ADDRESS would allow it$/)
  assert.match(await line(['--allow-domain', '127.0.0.4', '--deny-domain', 'bad.test', ...curl('http://bad.test/')]), /refused bad\.test \(denied\): it matches a --deny-domain entry, which nothing overrides$/)
})

test('--ask: a key typed for the command\'s own question does not answer the network question', async () => {
  // The command asks its own [y/N] question and waits (its stdin is /dev/null, so the "y" stays in
  // the terminal's queue), then makes the request sandspawn asks about: that "y" must not allow it.
  const typed = (steps, cmd) => runDriver(TYPING, [JSON.stringify(steps), process.execPath, CLI, ...flags, '--', 'sh', '-c', cmd])
  const cmd = `printf 'Continue? [y/N] '; sleep 1; echo; ${script(['/typed-ahead'])}`
  const real = 'for this run? [y/N/a] (a = this and every later host, no more questions) '
  const ahead = await typed([['Continue? [y/N] ', 'y\r'], [real, 'n']], cmd)
  assert.doesNotMatch(ahead.output, /target \/typed-ahead/, `the "y" typed before the question allowed the host:\n${ahead.output}`)
  assert.match(ahead.output, /\[y\/N\/a\] \(a = this and every later host, no more questions\) n\nsandspawn: .*blocked by the network policy \(declined\)/, ahead.output)
  assert.deepEqual(ahead.unused, [], ahead.output)

  const answered = await typed([['Continue? [y/N] ', 'y\r'], [real, 'y']], cmd)
  assert.match(answered.output, /\[y\/N\/a\] \(a = this and every later host, no more questions\) y\ntarget \/typed-ahead\n/, `"y" typed at the question allows it:\n${answered.output}`)
})

// Found by an attacker's review (mode29): with stderr not the terminal (`2>/dev/null`, a log) the
// question about a host was written there, unseen, while its key was still read from the
// terminal: the command printed its own "Continue? [y/N]" on stdout, then asked for a host, and
// the "y" typed for its prompt allowed that host for the run.
test('--ask with stderr not on the terminal: no question is asked where nobody sees it; a "y" for the command\'s own prompt allows no host', async () => {
  const cmd = `printf 'Continue? [y/N] '; ${script(['/hidden'])}`
  const argv = ['sh', '-c', 'exec "$0" "$@" 2>/dev/null', process.execPath, CLI, ...flags, '--', 'sh', '-c', cmd]
  const r = await runDriver(TYPING, [JSON.stringify([['Continue? [y/N] ', 'y\r']]), ...argv])
  assert.doesNotMatch(r.output, /target \/hidden/, `the "y" typed for the command's prompt allowed the host, its question never on the screen:\n${r.output}`)
})

test('--ask: output held while a question waits stays bounded in memory (the command waits for it), and all of it follows the answer', async () => {
  // An attacker's review: the command asked about a host, then wrote without pause; nobody
  // answered, and the CLI kept every byte (961 MiB after 13 s). 200 MiB here, in 64-byte lines.
  const FLOOD = path.join(__dirname, 'fixtures', 'flood-driver.py')
  const lines = 200 * 1024 * 1024 / 64
  const cmd = `curl -s http://${TARGET}:${server.address().port}/flood >/dev/null & sleep 2; yes ${'Q'.repeat(63)} | head -n ${lines}; echo END`
  const r = await runDriver(FLOOD, ['n', '5', 'Q', process.execPath, CLI, ...flags, '--', 'sh', '-c', cmd], 120000)
  assert.notEqual(r.marksBefore, null, `no question: ${r.screen}`)
  assert.ok(r.marksBefore < (lines * 63) / 4, `the question came after most of the output (${r.marksBefore} bytes): the test proves nothing`)
  assert.ok(r.peakAskedMiB !== null && r.peakAskedMiB < 150, `the CLI's peak RSS while the question waited was ${r.peakAskedMiB} MiB`)
  assert.equal(r.answered, true, `the run ended before the answer: ${r.screen}`)
  // Streaming 200 MiB through the CLI with nobody asking levels off near 190 MiB (garbage not yet
  // collected); what the question held must not come on top of that.
  assert.ok(r.peakMiB < 400, `the CLI's peak RSS was ${r.peakMiB} MiB`)
  assert.equal(r.marks, lines * 63, 'the output after the answer is complete')
  assert.match(r.screen, /\[y\/N\/a\] \(a = this and every later host, no more questions\) n\n(?:.*\n)*END\n/, r.screen)
  assert.equal(r.code, 0, r.screen)
})

test('--ask: output written while a question is up is shown, in order, when the run ends unanswered', async () => {
  // An attacker's review: the run ended with the question open and the CLI exited without what it
  // held; the terminal showed only the dangling question.
  const cmd = `curl -s -m 30 http://${TARGET}:${server.address().port}/unanswered >/dev/null & sleep 2; echo IMPORTANT-OUTPUT; echo ERROR-LINE >&2; echo LAST; exit 7`
  const r = await runDriver(TYPING, ['[]', process.execPath, CLI, ...flags, '--', 'sh', '-c', cmd])
  assert.equal(r.killed, false, r.output)
  assert.equal(r.code, 7, r.output)
  // Each stream in its order after the question's line (the two streams are read apart).
  const after = r.output.split('for this run? [y/N/a] (a = this and every later host, no more questions) not answered: the command ended (refused)\n')
  assert.equal(after.length, 2, r.output)
  assert.match(after[1], /IMPORTANT-OUTPUT\n(?:.*\n)*LAST\n/, r.output)
  assert.match(after[1], /ERROR-LINE\n/, r.output)
})

test('--ask: a run that ends with a question up and a sandbox denial has the question ended and its output shown before the denial line', async () => {
  // Before, the Enter typed for "Run again without the sandbox?" was read by the network question
  // still waiting for its key, and the held output came after both questions.
  const cmd = `curl -s -m 30 http://${TARGET}:${server.address().port}/denied >/dev/null & sleep 2; echo OUT; echo x > /usr/sandspawn-denied; exit 1`
  const r = await runDriver(TYPING, [JSON.stringify([['without the sandbox? [yes/N] ', '\r']]), process.execPath, CLI, ...flags, '--', 'sh', '-c', cmd])
  assert.equal(r.killed, false, r.output)
  assert.deepEqual(r.unused, [], r.output)
  // The command's stderr (the shell's "cannot create") and stdout are read apart, so either may
  // come first after the question's line (a CI run had the stderr line first).
  assert.match(r.output, /\[y\/N\/a\] \(a = this and every later host, no more questions\) not answered: the command ended \(refused\)\n(?:.*\n)*OUT\n[^]*\n\x1b\[Jsandspawn: sandbox denied this command.*\n\x18.*\x1b\[JRun again without the sandbox\? \[yes\/N\] \n$/, r.output)
  assert.equal(r.code, 1, r.output)
})

test('held output: past 1 MiB the run is told to wait; past 16 MiB (output that did not wait) it is dropped and the count said', async () => {
  const { NetworkPrompt } = require('../lib/cli/network-prompt')
  const shown = []
  const prompt = new NetworkPrompt({ input: null, write: (stream, data) => shown.push([stream, data]), fresh: () => '<fresh>' })
  prompt.asking = true // as while a question is on the screen
  const chunk = (i) => Buffer.alloc(64 * 1024, 0x30 + (i % 10))
  const waits = []
  for (let i = 0; i < 300; i++) waits.push(prompt.output(i % 3 ? 'stdout' : 'stderr', chunk(i)))
  assert.deepEqual(shown, [], 'nothing is shown while the question is up')
  assert.equal(waits.findIndex((w) => w !== undefined), 15, 'the run waits from the chunk that reaches 1 MiB')
  assert.ok(waits.slice(15).every((w) => w === waits[15]))
  let woken = false
  waits[15].then(() => (woken = true))
  await new Promise((resolve) => setImmediate(resolve))
  assert.equal(woken, false)
  prompt.release()
  await waits[15]
  const kept = shown.slice(0, -1)
  assert.equal(kept.length, 256)
  assert.ok(kept.every(([stream, data], i) => stream === (i % 3 ? 'stdout' : 'stderr') && data.equals(chunk(i))), 'in order, each to its stream')
  const [stream, note] = shown[shown.length - 1]
  assert.equal(stream, 'stderr')
  assert.equal(note.toString(), `<fresh>sandspawn: ${44 * 64 * 1024} bytes of the command's output were dropped while the question was on the screen\n`)
  assert.equal(prompt.output('stdout', chunk(0)), undefined, 'after the question output flows again')
})

test('an a at the question allows later hosts, not one refused at its own question before', async () => {
  // The question says a is for "every later host"; the proxy asks about a refused host again once
  // it keeps too many refusals (MAX_DENIED_FOR_RUN), and the a given since allowed it unasked.
  const { NetworkPrompt } = require('../lib/cli/network-prompt')
  const prompt = new NetworkPrompt({ input: null, write: () => {}, fresh: () => '' })
  prompt.answered.set('refused.test:443', 'deny-run') // answered n at its question
  prompt.allowAll = true // then a at another host's
  assert.equal(await prompt.ask({ host: 'refused.test', port: 443 }), 'deny-run')
  assert.equal(await prompt.ask({ host: 'later.test', port: 443 }), 'allow-run')
})
