#!/usr/bin/env node
'use strict'
/**
 * CPU of the CLI's terminal guard (lib/cli/clipboard-guard.js) alone, on the four inputs mode37
 * measured it with: coloured test output, plain ASCII, Cyrillic and Czech text, each cut into 300
 * chunks as a pipe would hand them over (at any byte, a UTF-8 character split between chunks
 * included). The CLI streams every byte of a command's output through the guard.
 *
 * Prints the CPU (user + system, best of five passes, each with a fresh guard) per input and per
 * MiB. Asserts nothing. With a path to another build's clipboard-guard.js (say main's), measures
 * that one too, interleaved, and prints the ratio.
 *
 *   node bench/cli-guard.js [/work/main/lib/cli/clipboard-guard.js]
 */

const path = require('node:path')

const CHUNKS = 300
const PASSES = 5

/** Lines repeated to about `mib` MiB, cut into CHUNKS chunks at uneven points. */
function chunked(lines, mib) {
  const line = Buffer.from(lines.join('\n') + '\n')
  const whole = Buffer.alloc(Math.floor(mib * 1024 * 1024))
  for (let at = 0; at < whole.length; at += line.length) line.copy(whole, at)
  const chunks = []
  let seed = 7
  let from = 0
  for (let k = 0; k < CHUNKS; k++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    const size = Math.floor((whole.length / CHUNKS) * (0.5 + (seed % 1000) / 1000))
    const to = k === CHUNKS - 1 ? whole.length : Math.min(whole.length, from + size)
    chunks.push(whole.subarray(from, to))
    from = to
  }
  return chunks
}

const INPUTS = [
  [
    'coloured test output',
    35,
    [
      '\x1b[32m✔\x1b[39m \x1b[1mguard keeps\x1b[22m a string split between chunks \x1b[90m(0.412ms)\x1b[39m',
      '\x1b[31m✖\x1b[39m spawn returns a typed error \x1b[90m(12.9ms)\x1b[39m',
      '  \x1b[2mat Object.<anonymous> (/work/__test__/run.test.js:120:7)\x1b[22m',
      '\x1b[34mℹ\x1b[39m tests 35 \x1b[34mℹ\x1b[39m pass 34 \x1b[34mℹ\x1b[39m fail 1',
    ],
  ],
  [
    'plain ASCII',
    47,
    [
      'drwxr-xr-x  5 user user  4096 Dec  6 19:34 target/release/build/sandspawn-1f2e3d4c5b6a7980',
      '   Compiling serde_json v1.0.133 (registry+https://github.com/rust-lang/crates.io-index)',
    ],
  ],
  [
    'Cyrillic',
    35,
    [
      'Съешь же ещё этих мягких французских булок, да выпей чаю. Широкая электрификация южных губерний.',
      'ПРЕДУПРЕЖДЕНИЕ: Не удалось открыть файл «Отчёт за ноябрь» — доступ запрещён (Эй, Юля, Ян).',
    ],
  ],
  [
    'Czech',
    49,
    [
      'Příliš žluťoučký kůň úpěl ďábelské ódy. Ěščřžýáíé ĚŠČŘŽÝÁÍÉ Ťuňka Ďolík Ůňa.',
      'Varování: soubor „výstup.txt“ nelze otevřít – přístup odepřen; zkuste to znovu později.',
    ],
  ],
]

function cpuMs(Guard, chunks) {
  const guard = new Guard()
  const before = process.cpuUsage()
  let bytes = 0
  for (const chunk of chunks) bytes += guard.filter(chunk).length
  const used = process.cpuUsage(before)
  if (bytes === 0) throw new Error('nothing came through')
  return (used.user + used.system) / 1000
}

function main() {
  const builds = [['this build', require('../lib/cli/clipboard-guard').ClipboardGuard]]
  const other = process.argv[2]
  if (other) builds.push([other, require(path.resolve(other)).ClipboardGuard])
  for (const [name, mib, lines] of INPUTS) {
    const chunks = chunked(lines, mib)
    const best = builds.map(() => Infinity)
    for (let pass = 0; pass < PASSES; pass++) {
      builds.forEach(([, Guard], k) => {
        best[k] = Math.min(best[k], cpuMs(Guard, chunks))
      })
    }
    const cells = builds.map(([build], k) => `${build} ${best[k].toFixed(1)} ms (${(best[k] / mib).toFixed(2)} ms/MiB)`)
    const ratio = best.length > 1 ? `, ratio ${(best[0] / best[1]).toFixed(2)}` : ''
    console.log(`${name}, ${mib} MiB in ${CHUNKS} chunks: ${cells.join(' vs ')}${ratio}`)
  }
}

main()
