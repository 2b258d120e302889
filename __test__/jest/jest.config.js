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
}
