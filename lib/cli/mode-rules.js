'use strict'
// Which flags make sense in which mode. A flag the mode ignores would mislead the person who typed
// it (`--read-only src` in read-only mode, where everything already is; `--no-protect-git` there,
// where nothing is writable), so it is a usage error naming the flag and the mode, never silently
// dropped.

const { UsageError } = require('./args')

/** Flags that shape what a writable directory may hold: workspace-write only. */
const WORKSPACE_WRITE_ONLY = ['writable', 'read-only', 'protect-git', 'no-protect-git', 'protected-name', 'no-protected-names', 'tool-caches', 'review']

/** Flags that configure the sandbox, which danger-full-access does not have: restrictions it
 * cannot enforce, and permissions it has already. */
const RESTRICTING = ['deny-read', 'allow-domain', 'deny-domain', 'allow-private', 'tmp']
const ALLOWING = ['network', 'allow-unix-sockets', 'allow-landlock']

const WHY_NOT = {
  'read-only': 'where nothing is writable',
  'danger-full-access': 'where there is no sandbox',
}

/** Throws a UsageError for the first flag in `values` that `mode` has no use for. */
function checkModeFlags(values, mode) {
  const given = (flag) => values[flag] !== undefined && values[flag] !== false
  if (given('protect-git') && given('no-protect-git')) throw new UsageError('--protect-git and --no-protect-git contradict each other')
  if (mode !== 'workspace-write' && WHY_NOT[mode]) {
    const flag = WORKSPACE_WRITE_ONLY.find(given)
    if (flag) throw new UsageError(`--${flag}: only allowed with --mode workspace-write; it has no effect with --mode ${mode}, ${WHY_NOT[mode]}`)
  }
  if (mode === 'danger-full-access') {
    const restricting = RESTRICTING.find(given)
    if (restricting) throw new UsageError(`--${restricting}: cannot be enforced with --mode danger-full-access (no sandbox at all); choose --mode read-only or workspace-write`)
    const allowing = ALLOWING.find(given)
    if (allowing) throw new UsageError(`--${allowing}: makes no sense with --mode danger-full-access, which runs the command without any sandbox`)
  }
  if (given('allow-private') && !given('allow-domain') && !given('deny-domain')) {
    throw new UsageError('--allow-private: only allowed with --allow-domain: it lets the allow-list\'s proxy reach those private addresses (--network reaches everything already)')
  }
}

module.exports = { checkModeFlags }
