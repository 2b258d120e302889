'use strict'
// Internal, for the CLI's `--ask`: an onOutput that may make the run's output wait. While a
// network question is on the screen the CLI holds the command's output (so the two never mix);
// past a few MiB its onOutput returns a promise, and until that settles the addon reads no more
// from the command, whose writes then block on the full pipe (src/binding.rs, JsSink). A public
// onOutput's returned promise is only watched for a rejection: making every async callback slow
// the run would change what callers were promised (API.md: `=> void`).

const HOLDERS = new WeakSet()

/** Marks `onOutput` as one whose returned promise holds the run's output until it settles. */
function holdingOutput(onOutput) {
  HOLDERS.add(onOutput)
  return onOutput
}

function holdsOutput(onOutput) {
  return HOLDERS.has(onOutput)
}

module.exports = { holdingOutput, holdsOutput }
