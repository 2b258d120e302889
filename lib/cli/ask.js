'use strict'
// `--ask` with a terminal on stdin: on a sandbox denial, print the denial line once, ask, and on
// "yes" run again without the sandbox (runWithEscalation decides when asking is allowed at all).

const { changesLines } = require('./changes-line')
const { denialLine } = require('./denial-line')
const { NetworkPrompt } = require('./network-prompt')
const { holdingOutput } = require('../output-hold')
const { freshLine } = require('./terminal-reset')
const { askLine } = require('./type-ahead')

/**
 * Whether the user wants the command run again without the sandbox. Only "yes" in full: a lone
 * "y" is what a question the command printed itself (`[y/N]`) gets, typed by a user who did not
 * notice that ours replaced it.
 */
async function approveUnsandboxed() {
  // Keys typed before the question appeared (for one the command printed) never answer it.
  const answer = ((await askLine(process.stdin, 'Run again without the sandbox? [yes/N] ')) ?? '').trim().toLowerCase()
  if (answer === 'yes') return true
  if (answer === 'y') process.stderr.write('sandspawn: not run again: type "yes" in full to run it without the sandbox\n')
  return false
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
  const { asking, prompt } = withNetworkQuestions(options)
  // The run is over (the sandboxed attempt, before any question about running it again): a network
  // question still open is ended, and the output held for it shown, before anything else is said.
  const finished = () => (prompt ? prompt.finish() : undefined)
  try {
    const result = await sandspawn.runWithEscalation(command, {
      ...asking,
      signal: controller.signal,
      approve: async ({ denial, result: first, changes }) => {
        await finished()
        // The question follows the command's output: nothing it printed may hide or disguise it.
        const lines = [denialLine(denial, options, first.sandboxType), ...changesLines(changes, first.cwd)]
        process.stderr.write(freshLine() + lines.join('\n') + '\n')
        announced = true
        // The person refused that host at the question already: not asked again in other words.
        if (denial.networkReason === 'declined') return false
        return approveUnsandboxed()
      },
    })
    return { result, announced }
  } finally {
    await finished()
  }
}

/**
 * With an allow-list, the proxy's questions about unknown hosts are asked on the terminal while the
 * command runs (see ./network-prompt), its output held while a question is on the screen.
 */
/** Distinct hosts, ports and kinds `--ask` asks the person about per run (an attacker's review, net45). */
const CLI_MAX_QUESTIONS = 32

function withNetworkQuestions(options) {
  const network = options.sandbox && options.sandbox.network
  if (network === null || typeof network !== 'object') return { asking: options, prompt: null }
  const onOutput = options.onOutput
  // --json prints no live output: only the questions reach the terminal then.
  const write = (stream, data) => (onOutput ? onOutput({ stream, data }) : process.stderr.write(data))
  const prompt = new NetworkPrompt({ input: process.stdin, write })
  const asking = {
    ...options,
    // A person answers: at most CLI_MAX_QUESTIONS hosts are asked about per run, the rest refused
    // unasked (question_limit), so a command making up names cannot keep the terminal asking.
    sandbox: { ...options.sandbox, network: { maxQuestions: CLI_MAX_QUESTIONS, ...network, onRequest: prompt.onRequest } },
    // What it returns while a question is up makes the run's output wait (see ../output-hold).
    onOutput: onOutput ? holdingOutput((chunk) => prompt.output(chunk.stream, chunk.data)) : undefined,
  }
  return { asking, prompt }
}

module.exports = { runAsking }
