#!/usr/bin/env node
'use strict'
// sandspawn's command line: `sandspawn [options] [--] COMMAND ...` runs a command in the sandbox;
// `explain`, `doctor` and `help` are the other subcommands (`sandspawn help`). Each subcommand's
// module is loaded only when it runs, so a run loads no more than the library and lib/cli/run.js.

const { parseCommandLine } = require('../lib/cli/args')

async function main() {
  let parsed
  try {
    parsed = parseCommandLine(process.argv.slice(2))
  } catch (err) {
    return require('../lib/cli/output').fail(err, { json: Boolean(err && err.json) })
  }
  const { subcommand, values, command, topic } = parsed
  const out = require('../lib/cli/output')
  try {
    if (values.version) {
      const { version } = require('../package.json')
      out.writeStdout(values.json ? JSON.stringify({ version }) + '\n' : `${version}\n`)
      return out.exit(0)
    }
    if (subcommand === 'help' || values.help) {
      const text = require('../lib/cli/help').helpText(subcommand === 'help' ? (topic ?? 'run') : subcommand)
      if (text === null) {
        const { UsageError } = require('../lib/cli/args')
        throw new UsageError(`no help for '${topic}' (topics: explain, doctor, review)`, 'help')
      }
      out.writeStdout(text + '\n')
      return out.exit(0)
    }
    if (subcommand === 'doctor') return await require('../lib/cli/doctor').doctor(values)
    if (subcommand === 'review') return await require('../lib/cli/review').review(command, values)
    if (command.length === 0) {
      const { UsageError } = require('../lib/cli/args')
      throw new UsageError('no command given', subcommand)
    }
    if (subcommand === 'explain') return require('../lib/cli/explain').explain(command, values)
    return await require('../lib/cli/run').run(command, values)
  } catch (err) {
    return out.fail(err, { json: Boolean(values.json), values, subcommand })
  }
}

main()
