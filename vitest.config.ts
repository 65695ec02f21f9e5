import { defineConfig } from 'vitest/config';

// Four projects, split by what a test needs and how long it takes:
//  - unit: pure TypeScript, no device (`*.test.ts`), seconds in all: `npm run check` runs it before a commit;
//  - slow: the `*.test.ts` files that train a model, load or fuzz the server, restart it, drive the swarm or the
//          comparison end to end, or draw thousands of samples (SLOW below); each takes several seconds or minutes;
//  - cluster: several aggregator processes on Redis (`*.cluster.test.ts`);
//  - gpu:  WGSL kernels run in Node on Dawn (`*.gpu.test.ts`). One fork at a
//          time: each Dawn instance spins up SwiftShader threads, and two
//          cores are all CI has.
// `npm test` runs all four (`test:unit` is unit and slow). All first make sure the MNIST files exist
// (scripts/testData.ts).

/** The slow tier, by path; `**` keeps a file in it when its folder is reorganised. */
const SLOW = [
  // Long training runs, and every scheme on the 1.07M-parameter model.
  'core/training/wideModel.test.ts',
  'server/**/training.test.ts',
  'server/**/trainingRivals.test.ts',
  'server/**/downlinkAuto.test.ts',
  'core/model/training.test.ts',
  'client/local/localTraining.test.ts',
  // Load, fuzz, restart and faults of a real server.
  'server/**/load.test.ts',
  'server/**/fuzz.test.ts',
  'server/**/restart.test.ts',
  'server/**/checkpointRecovery.test.ts',
  'server/**/faults.test.ts',
  'server/**/tls.test.ts',
  'scripts/startSignals.test.ts',
  // The swarm and the comparison end to end.
  'scripts/swarm/swarm.test.ts',
  'scripts/swarm/downlink.test.ts',
  'scripts/swarm/link.test.ts',
  'scripts/swarm/pause.test.ts',
  'scripts/compare/compare.test.ts',
  'scripts/make-data.test.ts',
  // Statistical tests over thousands of draws, and finite differences.
  'core/atomo/unbiased.test.ts',
  'core/codec/qsgd-elias.test.ts',
  'core/atomo/byteBudget.test.ts',
  'client/local/byteBudget.test.ts',
  'core/model/reference/gradient-check.test.ts',
  'core/data/gamma.test.ts',
];

const cpuOnly = {
  globalSetup: ['scripts/testData.ts'],
  include: ['{core,client,server,scripts}/**/*.test.ts'],
  environment: 'node' as const,
  // Both cores: vitest's default (cores − 1) runs these files one at a time on CI's two.
  maxWorkers: 2,
  testTimeout: 60_000,
};

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          ...cpuOnly,
          name: 'unit',
          exclude: ['**/*.gpu.test.ts', '**/*.cluster.test.ts', '**/node_modules/**', ...SLOW],
        },
      },
      { test: { ...cpuOnly, name: 'slow', include: SLOW } },
      {
        // Several aggregator processes on a real Redis (docs/scaling.md): one file at a time, each starts its own.
        test: {
          name: 'cluster',
          globalSetup: ['scripts/testData.ts'],
          include: ['{server,scripts}/**/*.cluster.test.ts'],
          environment: 'node',
          fileParallelism: false,
          testTimeout: 240_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'gpu',
          globalSetup: ['scripts/testData.ts'],
          include: ['{core,client,shaders,scripts}/**/*.gpu.test.ts'],
          environment: 'node',
          pool: 'forks',
          maxWorkers: 1,
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
