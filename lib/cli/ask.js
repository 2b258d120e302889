'use strict'
// `--ask` with a terminal on stdin: on a sandbox denial, print the denial line once, ask, and on
// "y" run again without the sandbox (runWithEscalation decides when asking is allowed at all).

const readline = require('node:readline')
const { denialLine } = require('./denial-line')
const { NetworkPrompt } = require('./network-prompt')
const { terminalReset } = require('./terminal-reset')

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
    ...withNetworkQuestions(options),
    signal: controller.signal,
    approve: ({ denial, result: first }) => {
      // The question follows the command's output: nothing it printed may hide or disguise it.
      process.stderr.write(terminalReset() + denialLine(denial, options, first.sandboxType) + '\n')
      announced = true
      // The person refused that host at the question already: not asked again in other words.
      if (denial.networkReason === 'declined') return false
      return askYesNo('Run again without the sandbox? [y/N]')
    },
  })
  return { result, announced }
}

/**
 * With an allow-list, the proxy's questions about unknown hosts are asked on the terminal while the
 * command runs (see ./network-prompt), its output held while a question is on the screen.
 */
function withNetworkQuestions(options) {
  const network = options.sandbox && options.sandbox.network
  if (network === null || typeof network !== 'object') return options
  const onOutput = options.onOutput
  // --json prints no live output: only the questions reach the terminal then.
  const write = (stream, data) => (onOutput ? onOutput({ stream, data }) : process.stderr.write(data))
  const prompt = new NetworkPrompt({ input: process.stdin, write })
  return {
    ...options,
    sandbox: { ...options.sandbox, network: { ...network, onRequest: prompt.onRequest } },
    onOutput: onOutput ? (chunk) => prompt.output(chunk.stream, chunk.data) : undefined,
  }
}

module.exports = { runAsking }
