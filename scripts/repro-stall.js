'use strict'
// Reproduces the open mixed-load stall (README "Limits"): four loops of sandboxCapabilities()
// next to two child_process spawn loops. Prints `STALL` with progress counters when a round makes
// no progress for 8 s, then keeps printing for 20 s to show whether (and when) it recovers.
// Usage: node scripts/repro-stall.js   (about 1 run in 10 stalls on the 2-core test VM)
const native = require('../binding.js')
const { spawn } = require('node:child_process')

;(async () => {
  for (let round = 0; round < 30; round++) {
    let done = false
    let cp = 0
    const w = [0, 0, 0, 0]
    const cpLoop = async () => {
      while (!done || cp < 100) {
        await new Promise((r) => spawn('sh', ['-c', 'exit 7'], { stdio: 'ignore' }).on('exit', () => r(cp++)))
      }
    }
    const worker = async (k) => {
      for (let i = 0; i < 200; i++) {
        await native.sandboxCapabilities('/tmp')
        w[k]++
      }
    }
    const t = setTimeout(() => {
      console.log('STALL pid', process.pid, 'round', round, 'child_process exits', cp, 'calls', w.join(','))
      let n = 0
      const iv = setInterval(() => {
        console.log(`t+${++n}s child_process exits ${cp} calls ${w.join(',')}`)
        if (n === 20) process.exit(1)
      }, 1000)
      iv.unref()
    }, 8000)
    await Promise.all([Promise.all(w.map((_, k) => worker(k))).finally(() => (done = true)), cpLoop(), cpLoop()])
    clearTimeout(t)
  }
  console.log('no stall in 30 rounds')
})()
