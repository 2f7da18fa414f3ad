// Three projects: `unit` runs pure code with no cluster; `integration` shares one real control plane
// (etcd, kube-apiserver, kube-controller-manager) started once by the global setup; `node` runs the
// tests under test/node/, each file starting the harness's node profile (a control plane and a node that
// runs pods, test/harness/node-cluster.ts) of its own: `--selectProjects node`.
const common = {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
};

export default {
  reporters: ['default'],
  // Integration tests wait for a real cluster with deadlines of their own; this is the outer bound.
  testTimeout: 120_000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/**/*.test.ts'] },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/**/*.itest.ts'],
      testPathIgnorePatterns: ['/node_modules/', '<rootDir>/test/node/'],
      globalSetup: '<rootDir>/test/harness/global-setup.js',
      globalTeardown: '<rootDir>/test/harness/global-teardown.js',
    },
    { ...common, displayName: 'node', testMatch: ['<rootDir>/test/node/**/*.itest.ts'] },
  ],
};
