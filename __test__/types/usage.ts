// Compiled with `tsc --noEmit` under strict + isolatedModules (see tsconfig.json): the public
// typings must work the way a TypeScript user writes code against them.
import {
  spawnSandboxed,
  startSandboxed,
  runWithEscalation,
  isLikelySandboxDenied,
  classifySandboxDenial,
  buildSandboxCommand,
  sandboxCapabilities,
  toolCacheStore,
  applyChangeSet,
  discardChangeSet,
  readChange,
  diffChange,
  listChangeSets,
  showChangeSet,
  SandboxError,
  type SpawnResult,
  type SandboxPolicy,
  type SandboxMode,
  type SandboxDenial,
  type LaunchPlan,
  type ChangeSet,
  type ApplyResult,
} from 'sandspawn'

const mode: SandboxMode = 'workspace-write'
const policy: SandboxPolicy = { mode, writableRoots: ['/tmp/x'], denyRead: ['/root/.ssh'], network: false, tmp: 'private', allowUnixSockets: false }

async function main(): Promise<void> {
  const ac = new AbortController()
  const r: SpawnResult = await spawnSandboxed(['ls', '-la'], {
    cwd: '/tmp',
    sandbox: policy,
    env: { FOO: 'bar' },
    timeout: 1000,
    killSignal: 'SIGINT',
    signal: ac.signal,
    maxBuffer: 1024,
    input: Buffer.from('x'),
    onOutput: (chunk) => {
      const s: 'stdout' | 'stderr' = chunk.stream
      const b: Buffer = chunk.data
      void s
      void b
    },
  })
  const code: number | null = r.exitCode
  const omittedAllows: number = r.networkRepeatedAllowsOmitted
  const omittedDenials: number = r.networkDecisionsOmitted - omittedAllows
  void omittedDenials
  const denial: SandboxDenial | null = r.denial
  void code
  void denial
  const p = await startSandboxed(['cat'], { stdin: 'pipe' })
  await p.write('hi\n')
  p.end()
  p.kill('SIGTERM')
  const pid: number = p.pid
  void pid
  const again: SpawnResult = await p.wait()
  void again
  const esc = await runWithEscalation(['make'], { approve: async ({ denial }) => denial.kind === 'filesystem' })
  const escalated: boolean = esc.escalated
  void escalated
  const likely: boolean = isLikelySandboxDenied('bwrap', { exitCode: 1, stderr: 'Permission denied' })
  void likely
  const d = classifySandboxDenial(r, 'read-only')
  if (d) {
    const reason: string = d.reason
    void reason
  }
  const plan: LaunchPlan = buildSandboxCommand(['echo'], { platform: 'darwin', sandbox: 'read-only' })
  const profile: string | null = plan.profile
  const planNotEnforced: string[] = plan.notEnforced
  void profile
  void planNotEnforced
  const caps = await sandboxCapabilities()
  if (!caps.available) console.log(caps.reason, caps.fix, caps.cause, caps.stderr)
  if (caps.bwrap) console.log(caps.bwrap.version, caps.bwrap.disableUserns, caps.bwrap.procUnmountable)
  const strict = await sandboxCapabilities({ linux: { bundledBwrap: false, allow: ['bwrap', 'landlock'] } })
  const source: 'system' | 'bundled' | null = strict.sandboxDetails.bwrapSource
  for (const a of strict.attempts) console.log(a.mechanism, a.cause, a.message, source)
  const store = await toolCacheStore({ env: { HOME: '/home/u' } })
  const where: string | null = store.path
  console.log(where, store.bytes + store.workspaces, store.removed, (await toolCacheStore({ clean: true })).removed)
  const ran = await spawnSandboxed(['true'], { linux: { bundledBwrap: true } })
  const abi: number | null = ran.sandboxDetails.landlockAbi
  void abi
  const planted = await spawnSandboxed(['true'], { sandbox: { mode: 'workspace-write', protectedNames: ['.envrc'], reportedNames: [] } })
  for (const risk of planted.hostRisks) {
    const kind: 'repository-created' | 'hooks-written' | 'protected-name-created' | 'workspace-replaced' | 'git-directory-created' | 'link-to-shared-directory' | 'permissions-changed' | 'scan-incomplete' = risk.kind
    console.log(kind, risk.path, risk.detail)
  }
  const term = await startSandboxed(['python3'], { pty: { cols: 120, rows: 40, term: 'xterm' } })
  const sub: { dispose(): void } = term.onData((d: Buffer) => console.log(d.length))
  term.resize(100, 30)
  term.pause()
  term.resume()
  const chunk = await term.read({ waitMs: 100, maxBytes: 4096 })
  const bytes: Buffer = chunk.data
  const over: boolean = chunk.exited
  console.log(bytes, over, chunk.omittedBytes)
  sub.dispose()
  const size: { cols: number; rows: number } | undefined = (await term.wait()).pty
  void size
  await spawnSandboxed(['tty'], { pty: true })
  const limited = await spawnSandboxed(['true'], { limits: { memory: 256 * 1024 * 1024, cpuTime: 1000, fileSize: 1 << 20, openFiles: 64, processes: 50 } })
  const exceeded: 'memory' | 'processes' | 'cpuTime' | 'fileSize' | null = limited.limitExceeded
  const how: 'cgroup' | 'rlimit' | undefined = limited.appliedLimits.memory
  const cpu: number = limited.resourceUsage.userCpuMs + limited.resourceUsage.systemCpuMs + limited.resourceUsage.maxRssBytes
  const enforceable: 'cgroup' | 'rlimit' | null = caps.limits.processes.mechanism
  console.log(exceeded, how, cpu, enforceable, caps.limits.memory.reason)
  // The reviewable workspace: a task of two runs, one change set, reviewed and applied once.
  const first = await spawnSandboxed(['make'], { sandbox: { mode: 'workspace-write', workspace: 'review', maxChanges: 100 } })
  const cs: ChangeSet | null = first.changeSet
  if (cs) {
    await spawnSandboxed(['make', 'test'], { sandbox: { mode: 'workspace-write', workspace: 'review', changeSet: cs.id } })
    const shown = await showChangeSet(cs.id, { maxChanges: 10 })
    const kinds: Array<'added' | 'modified' | 'deleted'> = shown.changes.map((c) => c.kind)
    const content: Buffer | null = await readChange(cs.id, shown.changes[0].path)
    const diff: string = await diffChange(cs.id, shown.changes[0].path)
    const pending = await listChangeSets({ cwd: shown.cwd })
    const counted: number | undefined = pending[0].counts?.added
    const applied: ApplyResult = await applyChangeSet(cs.id, { paths: shown.hostRisks.map((h) => h.path), force: false, revision: shown.revision })
    // Only what was shown lands: a run that continued the set meanwhile makes the apply refuse.
    const left: string | null = applied.revision
    if (left !== null) {
      try {
        await applyChangeSet(cs.id, { revision: left })
      } catch (e) {
        if (e instanceof SandboxError && e.code === 'ERR_SANDBOX_CHANGE_SET_CHANGED') console.log('show it again')
      }
    }
    console.log(kinds, content, diff, counted, applied.conflicts[0]?.reason, applied.heldBack[0]?.risk.kind, shown.truncated, caps.review.available, caps.review.reason)
    await discardChangeSet(cs.id)
  }
  try {
    await spawnSandboxed([])
  } catch (e) {
    if (e instanceof SandboxError && e.code === 'ERR_SANDBOX_INVALID_OPTIONS') console.log(e.message)
    if (e instanceof SandboxError && e.code === 'ERR_SANDBOX_UNAVAILABLE') console.log(e.attempts?.[0]?.mechanism, e.fixes?.[0])
  }
}
void main
