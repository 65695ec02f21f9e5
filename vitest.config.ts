import { defineConfig } from 'vitest/config';

// Two projects, split by what a test needs:
//  - unit: pure TypeScript, no device (`*.test.ts`);
//  - cluster: several aggregator processes on Redis (`*.cluster.test.ts`);
//  - gpu:  WGSL kernels run in Node on Dawn (`*.gpu.test.ts`). One fork at a
//          time: each Dawn instance spins up SwiftShader threads, and two
//          cores are all CI has.
// Both first make sure the MNIST files exist (scripts/testData.ts).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          globalSetup: ['scripts/testData.ts'],
          include: ['{core,client,server,scripts}/**/*.test.ts'],
          exclude: ['**/*.gpu.test.ts', '**/*.cluster.test.ts', '**/node_modules/**'],
          environment: 'node',
          // Both cores: vitest's default (cores − 1) runs these files one at a time on CI's two.
          maxWorkers: 2,
          testTimeout: 60_000,
        },
      },
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
