'use strict'
// The reviewable workspace on the command line: after a `--review` run, the change set is printed
// (counts, paths, host risks marked) and the user is asked to apply, discard or diff it; and
// `sandspawn review list|show|diff|apply|discard` works on pending sets later.

const path = require('node:path')
const { loadSandspawn } = require('./library')
const { printable, shellWord } = require('./printable')
const { askLine } = require('./type-ahead')
const { UsageError } = require('./args')
const out = require('./output')
const { reviewPaths } = require('./review-paths')

/** How many changed paths the text output lists (the counts cover all). */
const SHOWN = 50
const LETTER = { added: 'A', modified: 'M', deleted: 'D' }

/** The change set in words, for stderr (a run) or stdout (`review show`). */
function describe(cs, cwd) {
  const { added, modified, deleted } = cs.counts
  const lines = [`sandspawn: change set ${cs.id}: ${added} added, ${modified} modified, ${deleted} deleted`]
  const risky = new Set(cs.hostRisks.map((r) => r.path))
  const marked = (p) => [...risky].some((r) => p === r || p.startsWith(r + '/'))
  const rel = (p) => (cwd && (p === cwd || p.startsWith(cwd + '/')) ? path.relative(cwd, p) || '.' : p)
  for (const c of cs.changes.slice(0, SHOWN)) {
    const suffix = c.type === 'directory' ? '/' : c.type === 'symlink' ? ` -> ${printable(c.target ?? '')}` : ''
    lines.push(`  ${LETTER[c.kind]}${marked(c.path) ? '!' : ' '} ${printable(rel(c.path))}${suffix}`)
  }
  const total = added + modified + deleted
  if (total > Math.min(SHOWN, cs.changes.length)) lines.push(`  ... and ${total - Math.min(SHOWN, cs.changes.length)} more`)
  for (const r of cs.hostRisks) lines.push(`  ! ${printable(r.kind)}: ${printable(rel(r.path))}: ${printable(String(r.detail).replace(/\s+/g, ' '))} (held back)`)
  // The token `review apply --revision` takes: what is applied then is what was shown here.
  lines.push(`  revision ${printable(cs.revision)}`)
  return lines.join('\n') + '\n'
}

/** The outcome of an apply in words. */
function outcomeText(id, res) {
  const lines = [`sandspawn: applied ${res.applied.length} change(s) of ${id}`]
  for (const c of res.conflicts) lines.push(`  conflict: ${printable(c.path)}: ${printable(c.reason)}`)
  for (const h of res.heldBack) lines.push(`  held back: ${printable(h.path)}: ${printable(h.risk.kind)}`)
  if (res.conflicts.length || res.heldBack.length) lines.push(`sandspawn: still pending: sandspawn review apply ${id} [PATH...] --force${res.revision ? ` --revision ${printable(res.revision)}` : ''} | sandspawn review discard ${id}`)
  return lines.join('\n') + '\n'
}

/** One pending set in `review list`: its counts, `(in use)` while a run holds it, and why what could not be read was not. */
function listLine(s) {
  if (s.cwd === null) return `${s.id}  (unreadable: ${printable(s.error)})\n`
  const counts = s.counts && `${s.counts.added} added, ${s.counts.modified} modified, ${s.counts.deleted} deleted`
  const state = [counts || (!s.error && '(in use)'), s.error && `(${printable(s.error)})`].filter(Boolean).join(' ')
  return `${s.id}  ${new Date(s.created).toISOString()}  ${printable(s.cwd)}  ${state}\n`
}

/**
 * A diff as the terminal may show it: each line escaped (`printable`), the newlines between them
 * kept. The files are the run's: a line of `ESC[1A ESC[2K CR` would erase the added command above
 * it from the diff the user reviews.
 */
function printableDiff(text) {
  return text.split('\n').map(printable).join('\n')
}

/**
 * Diffs of the set's changes, on stdout: of all of them, or (`paths`) of every change at or below
 * each named path, which is what `review apply ID PATH...` lands. Before, a named path was diffed
 * alone: a directory the set adds diffed as nothing, one it adds to was no change of the set, and
 * apply landed what was below them all the same (an attacker's review, mode28). A change that
 * cannot be diffed (its path names two entries alike: one not UTF-8, shown escaped, and one
 * spelling that escape) is said on stderr and the rest still shown; a named path that is none of
 * the set's changes nor above one fails the command, unless it lies below a directory the set
 * deletes (whose diff says so). `write` puts a diff's text where it is read: stdout for `review
 * diff`; the terminal's stderr, where the question is, for a run's [v] (on stdout, redirected to a
 * build log, the diffs never reached the screen and the set looked like one with nothing to see:
 * an attacker's review, mode29).
 */
async function printDiffs(sandspawn, cs, paths, write = out.writeStdout) {
  // Every change, not the first `maxChanges` a listing holds (10,000 by default): the rest was
  // skipped without a word, and `review apply` landed it (an attacker's review: 10,000 files in
  // `a/`, then `zz-evil.sh`). A listing holds at most what the set has (bounded by its scan), and
  // is `truncated` while it holds less.
  if (cs.truncated) {
    const whole = await sandspawn.showChangeSet(cs.id, { maxChanges: 0xffffffff })
    // Diffs of another revision than the one listed: said, and an apply of the listed one refuses.
    if (whole.revision !== cs.revision) process.stderr.write(`sandspawn: ${cs.id} changed since it was listed (now revision ${printable(whole.revision)}): these diffs show it as it is now\n`)
    cs = whole
  }
  // Directories too: their diff is a line saying what the set does to one (its mode, deleted with
  // everything in it), which a user reading only files' lines never saw (an attacker's review).
  const listed = [...new Set(cs.changes.map((c) => c.path))]
  if (!paths.length) await diffEach(sandspawn, cs.id, listed, write)
  for (const p of paths) {
    const below = listed.filter((c) => atOrBelow(c, p))
    if (below.length) await diffEach(sandspawn, cs.id, below, write)
    else write(printableDiff(await sandspawn.diffChange(cs.id, p)))
  }
  if (cs.truncated) process.stderr.write(`sandspawn: ${cs.id} holds more than its scan reads (see its scan-incomplete host risks): what lies past that is not diffed, and is held back by review apply\n`)
}

/** `change` (a listed path) is `p` or lies below it, as `applyChangeSet`'s `paths` select. */
function atOrBelow(change, p) {
  return change === p || change.startsWith(p.endsWith('/') ? p : `${p}/`)
}

/** The diff of each of `changes`, by `write`; one that cannot be diffed is said on stderr. */
async function diffEach(sandspawn, id, changes, write) {
  for (const p of changes) {
    let text
    try {
      text = await sandspawn.diffChange(id, p)
    } catch (e) {
      process.stderr.write(`sandspawn: no diff of ${printable(p)}: ${printable(e.message)}\n`)
      continue
    }
    write(printableDiff(text))
  }
}

/**
 * One line from the terminal (null at end of input, on Ctrl-C, or when there is no terminal). Read
 * from /dev/tty opened anew: the run forwarded our stdin to the command and destroyed the stream
 * when the command ended, so a question on process.stdin would wait on nothing (and Node would
 * exit). Keys typed before the question appeared (for one the command printed) never answer it.
 */
async function question(prompt) {
  let input
  let fd
  try {
    fd = require('node:fs').openSync('/dev/tty', 'r')
    input = new (require('node:tty').ReadStream)(fd)
  } catch {
    return null
  }
  // Asked only on the terminal stderr shows the question on (./asking-terminal).
  if (!require('./asking-terminal').controllingShowsOnStderr()) {
    input.destroy()
    return null
  }
  try {
    return await askLine(input, prompt, fd)
  } finally {
    input.destroy()
  }
}

/**
 * What to run later on a set left pending, the apply naming the revision shown: without it, a run
 * that continued the set meanwhile (another agent's step) landed with the apply, never shown (an
 * attacker's review, mode29: the [k]eep answer's line named no revision).
 */
function pendingCommands(cs) {
  return `sandspawn review apply ${cs.id} --revision ${printable(cs.revision)} | sandspawn review diff ${cs.id} | sandspawn review discard ${cs.id}`
}

/** After a `--review` run (not --json): show the set, then ask on a terminal; else keep it pending. */
async function afterRun(result, sandspawn, interactive) {
  let cs = result.changeSet
  // After --ask ran it again without the sandbox: the set is the sandboxed attempt's, and the
  // retry's writes are in the workspace already (a path both wrote conflicts on apply).
  const escalated = result.escalated ? 'sandspawn: the command ran again without the sandbox, writing the workspace directly; this change set holds what the sandboxed attempt wrote\n' : ''
  process.stderr.write(require('./terminal-reset').freshLine() + escalated + describe(cs, result.cwd))
  const total = cs.counts.added + cs.counts.modified + cs.counts.deleted
  if (total === 0) {
    await sandspawn.discardChangeSet(cs.id)
    return
  }
  if (!interactive) {
    process.stderr.write(`sandspawn: pending: ${pendingCommands(cs)}\n`)
    return
  }
  for (;;) {
    const line = await question('sandspawn: [a]pply, [d]iscard, show the [v] diff, or [k]eep it pending? ')
    // null: no terminal any more (hung up, end of input, Ctrl-C): kept pending, never asked again.
    const answer = line === null ? null : line.trim().toLowerCase()
    if (answer === 'a' || answer === 'apply') {
      // The revision shown (the listing above, the diffs): a run that continued the set meanwhile
      // (another agent's step) makes the apply refuse, landing nothing the user did not see.
      let res
      try {
        res = await sandspawn.applyChangeSet(cs.id, { revision: cs.revision })
      } catch (e) {
        if (!e || e.code !== 'ERR_SANDBOX_CHANGE_SET_CHANGED') throw e
        // Nothing landed: show the set as it is now, and ask about that.
        cs = await sandspawn.showChangeSet(cs.id)
        process.stderr.write(`sandspawn: ${printable(e.message)}\n` + describe(cs, result.cwd))
        continue
      }
      process.stderr.write(outcomeText(cs.id, res))
      return
    }
    if (answer === 'd' || answer === 'discard') {
      await sandspawn.discardChangeSet(cs.id)
      process.stderr.write(`sandspawn: discarded ${cs.id}\n`)
      return
    }
    if (answer === 'v' || answer === 'diff') await printDiffs(sandspawn, cs, [], (text) => process.stderr.write(text))
    else if (answer === null || answer === 'k' || answer === 'keep') {
      process.stderr.write(`sandspawn: kept pending: ${pendingCommands(cs)}\n`)
      return
    }
  }
}

/** `sandspawn review ACTION [ID] [PATH...]`. */
async function review(words, values) {
  const [action, id, ...rest] = words
  const json = Boolean(values.json)
  const sandspawn = loadSandspawn()
  const need = (n) => {
    if (!id && n > 0) throw new UsageError(`review ${action} needs a change set id (sandspawn review list shows them)`, 'review', json)
  }
  // Only apply and diff take paths: `review discard A B` discarded A and ignored B, status 0, the
  // user believing both gone (found by an attacker's review, mode34).
  const takes = { list: 0, show: 1, discard: 1 }[action]
  if (takes !== undefined && words.length > takes + 1) throw new UsageError(`review ${action} takes ${takes ? 'one change set id' : 'no words'}, got also '${words.slice(takes + 1).join(' ')}'${action === 'discard' ? ' (discard one set at a time: nothing was discarded)' : ''}`, 'review', json)
  // An empty word (`review apply ID "$FILE"` with FILE unset) resolved to the shell's directory,
  // and the whole set landed where one file was asked for (found by an attacker's review, mode33).
  if (rest.includes('')) throw new UsageError(`review ${action}: an empty path (a variable the shell left empty?); name the changed path, or give none for the whole set`, 'review', json)
  // Each `..` as the kernel resolves it (./review-paths): path.resolve dropped `link/..` as text.
  const paths = reviewPaths(rest, action, json)
  if (values.force && action !== 'apply') throw new UsageError('--force is allowed only with `review apply`', 'review', json)
  if (values.revision !== undefined && action !== 'apply') throw new UsageError('--revision is allowed only with `review apply`', 'review', json)
  switch (action) {
    case 'list': {
      const sets = await sandspawn.listChangeSets()
      if (json) out.printJson(sets)
      else for (const s of sets) out.writeStdout(listLine(s))
      return out.exit(0)
    }
    case 'show': {
      need(1)
      const cs = await sandspawn.showChangeSet(id)
      if (json) out.printJson(cs)
      else out.writeStdout(describe(cs, cs.cwd))
      return out.exit(0)
    }
    case 'diff': {
      need(1)
      const cs = await sandspawn.showChangeSet(id)
      await printDiffs(sandspawn, cs, paths)
      // The revision diffed, for `review apply --revision` (stderr: stdout is the diff itself), and
      // the paths diffed: without them the apply suggested here landed the whole set, all but
      // those paths unseen (an attacker's review, mode28).
      const named = paths.map((p) => ` ${shellWord(p)}`).join('')
      process.stderr.write(`sandspawn: diffed revision ${printable(cs.revision)} of ${id}: sandspawn review apply ${id}${named} --revision ${printable(cs.revision)}\n`)
      return out.exit(0)
    }
    case 'apply': {
      need(1)
      // With --revision (what review show, diff and a --review run print), only that revision lands.
      const res = await sandspawn.applyChangeSet(id, { paths: paths.length ? paths : undefined, force: Boolean(values.force), revision: values.revision })
      if (json) out.printJson(res)
      else process.stderr.write(outcomeText(id, res))
      return out.exit(res.conflicts.length || res.heldBack.length ? 1 : 0)
    }
    case 'discard':
      need(1)
      await sandspawn.discardChangeSet(id)
      if (json) out.printJson({ discarded: id })
      return out.exit(0)
    default:
      throw new UsageError(action ? `unknown review action '${action}' (list, show, diff, apply, discard)` : 'review needs an action: list, show, diff, apply or discard', 'review', json)
  }
}

module.exports = { afterRun, review, describe, printableDiff }
