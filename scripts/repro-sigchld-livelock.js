'use strict'
// Reproduces a Node.js/libuv event-loop livelock with nothing but `child_process` (sandspawn is not
// loaded). See README "Limits". libuv turns SIGCHLD into 16-byte messages on a pipe, and its reader
// (`uv__signal_event`) keeps reading for as long as each read fills its 32-message buffer. When an
// 'exit' handler spawns the next child synchronously (here: `await` on the exit promise, which
// resumes in the same callback's microtask checkpoint), every dispatched message can start a child
// whose exit writes a new message before the buffer is drained. The loop then stays inside that
// one reader: timers, I/O and every other thread's wake-up (Node-API async work included) wait,
// sometimes for tens of seconds, while the spawn loops keep running.
//
// Usage: node scripts/repro-sigchld-livelock.js [--defer]
//   LOOPS (default 4) concurrent spawn loops; BALLAST_MB (default 100) of heap makes each fork
//   slower, which is what lets children exit before the reader gets back to them; SECS (default
//   20). Prints the worst lag of a 10 ms interval timer. `--defer` starts each next spawn from
//   setImmediate instead, which takes the spawn out of the reader and removes the livelock.
// On the 2-core test VM (Node 20.20.2, libuv 1.46.0), 4 of 6 runs without --defer showed a worst
// lag of about 19.7 s (the loop stuck for nearly the whole 20 s run; the other two: 225-240 ms);
// 3 of 3 runs with --defer stayed under 35 ms.
const { spawn } = require('node:child_process')

const loops = Number(process.env.LOOPS || 4)
const secs = Number(process.env.SECS || 20)
const defer = process.argv.includes('--defer')
const ballast = []
for (let i = 0; i < Number(process.env.BALLAST_MB ?? 100); i++) ballast.push(Buffer.alloc(1 << 20, 1))

let spawns = 0
let worst = 0
let last = Date.now()
const tick = setInterval(() => {
  const now = Date.now()
  worst = Math.max(worst, now - last - 10)
  last = now
}, 10)

const once = () => new Promise((resolve) => spawn('sh', ['-c', 'exit 7'], { stdio: 'ignore' }).on('exit', resolve))
const spawnLoop = async () => {
  const end = Date.now() + secs * 1000
  while (Date.now() < end) {
    if (defer) await new Promise((resolve) => setImmediate(resolve))
    await once()
    spawns++
  }
}

Promise.all(Array.from({ length: loops }, spawnLoop)).then(() => {
  clearInterval(tick)
  console.log(`${defer ? 'deferred' : 'direct'} spawns: ${spawns}, worst 10 ms timer lag: ${worst} ms (heap ballast ${ballast.length} MB)`)
})
