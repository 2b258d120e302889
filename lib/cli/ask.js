'use strict'
// `--ask` with a terminal on stdin: on a sandbox denial, print the denial line once, ask, and on
// "y" run again without the sandbox (runWithEscalation decides when asking is allowed at all).

const readline = require('node:readline')
const { denialLine } = require('./denial-line')

/** Ask a yes/no question on the terminal; Ctrl-C at the prompt exits 130. */
function askYesNo(question) {
  return new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
    rl.on('SIGINT', () => {
      rl.close()
      process.stderr.write('\n')
      process.exit(130)
    })
    rl.question(`${question} `, (answer) => {
      rl.close()
      resolve(/^y(es)?$/i.test(answer.trim()))
    })
  })
}

/**
 * Run `command` through runWithEscalation. `attach` gets the handle that stops the run (an abort:
 * runWithEscalation has no process handle to forward a signal to, so the tree gets the kill
 * signal, SIGTERM). Resolves with `{ result, announced }` (announced: the denial line was printed
 * already), or rejects like runWithEscalation.
 */
async function runAsking(sandspawn, command, options, attach) {
  const controller = new AbortController()
  attach({ kill: () => controller.abort() })
  let announced = false
  const result = await sandspawn.runWithEscalation(command, {
    ...options,
    signal: controller.signal,
    approve: ({ denial, result: first }) => {
      process.stderr.write(denialLine(denial, options, first.sandboxType) + '\n')
      announced = true
      return askYesNo('Run again without the sandbox? [y/N]')
    },
  })
  return { result, announced }
}

module.exports = { runAsking }
