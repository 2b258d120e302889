'use strict'
// The CLI's help texts (loaded only for `help`, `--help` and usage errors).

const RUN = `Usage: sandspawn [options] [--] COMMAND [ARGS...]   run COMMAND in the sandbox
       sandspawn explain [options] [--] COMMAND ...  print the launch plan, run nothing
       sandspawn review list|show|diff|apply|discard [ID]  the change sets --review runs keep
       sandspawn doctor (can this host sandbox?) | help [explain|doctor|review] | --version

Options:
  --mode MODE           read-only (default), workspace-write or danger-full-access
  --writable DIR        also writable (repeatable; implies workspace-write)
  --read-only PATH      kept read-only inside writable directories (repeatable)
  --protected-name NAME protected atop writable directories too, like .envrc (repeatable)
  --no-protect-git, --no-protected-names   let the command write .git, the default protected names
  --deny-read PATH      can be neither read nor listed (repeatable)
  --network             allow network access (default: none, loopback included)
  --allow-domain HOST, --deny-domain HOST  network only to (never to) HOST, via a proxy (repeatable)
  --allow-private CIDR  let --allow-domain reach these private or loopback addresses (repeatable)
  --allow-unix-sockets  allow connecting to the host's Unix sockets
  --allow-landlock      Linux: where bwrap cannot run, use the weaker Landlock mode (see README)
  --tmp MODE, --tool-caches MODE   /tmp: writable, private or read-only; caches: private, shared or none
  --review              writes go to a change set, shown after the run to apply, discard or diff
  --cwd DIR             working directory; relative paths in the options above resolve against it
  --timeout MS          kill the command's process tree after MS milliseconds
  --memory SIZE, --max-file-size SIZE   limit each process's private memory, each file's size (512m)
  --max-processes N, --open-files N     limit the tasks in the sandbox, each process's descriptors
  --cpu-time MS         limit each process's CPU time (milliseconds; whole seconds are enforced)
  --json                print the result, or the error, as JSON on stdout
  --ask                 on a terminal: ask about hosts not in --allow-domain while it runs; after a denial, ask to rerun unsandboxed
  --no-pty              no pseudo-terminal (default when stdin and stdout are terminals: one)

Exit status: the command's (128+N: signal N), 125 no sandbox, 126 not executable, 127 not found, 2 usage.`

const EXPLAIN = `Usage: sandspawn explain [options] [--platform linux|darwin] [--] COMMAND [ARGS...]

Prints what \`sandspawn COMMAND\` would run (the bwrap argv or the Seatbelt profile) without
running anything. Takes the same options as a run, except --ask and --no-pty; --json prints the plan as JSON.`

const DOCTOR = `Usage: sandspawn doctor [--json]

Says whether this host can sandbox, and if not, why and how to fix it. Exits 1 when it cannot.`

const REVIEW = `Usage: sandspawn review list [--json]            the pending change sets
       sandspawn review show ID [--json]         what one holds (host risks marked with !)
       sandspawn review diff ID [PATH...]        its changes as a unified diff
       sandspawn review apply ID [PATH...] [--force] [--revision REV] [--json]
       sandspawn review discard ID

A run with --review writes the workspace's changes to a change set instead of the workspace.
apply lands them (only PATHs and what is below them, when given); a path the host changed since
the set began is a conflict and stays as it is, and one with a host risk (a git hook, a protected
name, a new repository) is held back: --force lands conflicts, and held-back paths listed by name.
--revision REV (printed by show, diff and a --review run) applies only that revision: when a run
continued the set since, nothing lands and apply says to show it again.`

const TEXTS = { run: RUN, explain: EXPLAIN, doctor: DOCTOR, review: REVIEW, help: RUN }

const ONE_LINE = {
  run: 'usage: sandspawn [options] [--] COMMAND [ARGS...]',
  explain: 'usage: sandspawn explain [options] [--] COMMAND [ARGS...]',
  doctor: 'usage: sandspawn doctor [--json]',
  review: 'usage: sandspawn review list|show ID|diff ID|apply ID [PATH...]|discard ID',
  help: 'usage: sandspawn help [explain|doctor|review]',
}

/** The full help of a subcommand (or of an unknown topic: null). */
function helpText(subcommand) {
  return TEXTS[subcommand] ?? null
}

/** What follows a usage error: one line of usage and where to read more. */
function usageHint(subcommand) {
  const more = subcommand === 'run' || subcommand === 'help' ? 'sandspawn help' : `sandspawn help ${subcommand}`
  return `${ONE_LINE[subcommand] ?? ONE_LINE.run}  (see \`${more}\`)`
}

module.exports = { helpText, usageHint }
