// The consumer path of a Jest + ts-jest suite: import sandspawn by its package name and run a
// command. Jest must also exit by itself afterwards (no handles left open).
import { spawnSandboxed, SandboxError, type SpawnResult } from 'sandspawn'

describe('sandspawn from Jest + ts-jest', () => {
  it('runs a command in the sandbox and reports the result', async () => {
    const r: SpawnResult = await spawnSandboxed(['sh', '-c', 'echo hello from jest; echo x > /etc/jest-denied'])
    expect(r.stdout).toBe('hello from jest\n')
    expect(r.sandboxType).toBe(process.platform === 'linux' ? 'bwrap' : 'seatbelt')
    expect(r.exitCode).not.toBe(0)
    expect(r.denial?.reason).toBe(process.platform === 'linux' ? 'read_only_file_system' : 'operation_not_permitted')
  })

  it('rejects bad input with a typed SandboxError', async () => {
    await expect(spawnSandboxed([] as string[])).rejects.toBeInstanceOf(SandboxError)
    await expect(spawnSandboxed(['true'], { timeout: -1 })).rejects.toMatchObject({ code: 'ERR_SANDBOX_INVALID_OPTIONS' })
  })
})
