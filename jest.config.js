// Unit specs sit next to the code (src, *.spec.ts); end-to-end specs live in test/ (*.e2e-spec.ts).
const swc = ['@swc/jest', { jsc: { target: 'es2022', keepClassNames: true, parser: { syntax: 'typescript', decorators: true }, transform: { legacyDecorator: true, decoratorMetadata: true, useDefineForClassFields: false } }, sourceMaps: 'inline' }];
module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc, '^.+\\.js$': swc },
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  moduleFileExtensions: ['ts', 'js', 'json'],
  testTimeout: 60000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.js'],
  maxWorkers: process.env.CI ? 2 : '50%',
};
