// Jest + ts-jest as a TypeScript user would set it up, with `isolatedModules` on (the setting that
// breaks ambient const enums), resolving `sandspawn` to this checkout.
const path = require('node:path')

module.exports = {
  rootDir: __dirname,
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: path.join(__dirname, 'tsconfig.json') }] },
  moduleNameMapper: { '^sandspawn$': path.resolve(__dirname, '..', '..') },
  testTimeout: 30000,
  // Not Jest's default /tmp/jest_0: the suite would leave it behind on the host, and a transform
  // cache in the shared /tmp is code a sandboxed run may rewrite (README: "The shared /tmp").
  cacheDirectory: path.resolve(__dirname, '..', '..', 'target', 'jest-cache'),
}
