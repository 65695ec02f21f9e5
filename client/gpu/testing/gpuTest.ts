/**
 * `gpuTest`: a vitest `test` with a `gpu` fixture holding a real WebGPU
 * device (Dawn in Node), opened once per test file and released after it.
 * No adapter means the test fails with what to install; it is never skipped.
 */
import { test } from 'vitest';
import { requestNodeGpu, type NodeGpu } from '../runtime/nodeDevice';

export const gpuTest = test.extend<{ gpu: NodeGpu }>({
  gpu: [
    // eslint-disable-next-line no-empty-pattern -- vitest reads fixture names from the destructuring
    async ({}, use) => {
      const gpu = await requestNodeGpu('test');
      const errors: string[] = [];
      gpu.device.addEventListener('uncapturederror', (event) => {
        errors.push((event as GPUUncapturedErrorEvent).error.message);
      });
      await use(gpu);
      gpu.release();
      if (errors.length > 0) throw new Error(`WebGPU validation errors:\n${errors.join('\n')}`);
    },
    { scope: 'file' },
  ],
});
