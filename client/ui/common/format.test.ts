import { describe, expect, it } from 'vitest';
import { describeCompression } from './format';

describe('describeCompression', () => {
  it('names the new schemes with their knob, and marks error feedback as biased', () => {
    expect(describeCompression({ scheme: 'atomo-dct', budget: 512, levels: 1 })).toBe('ATOMO Fourier (DCT), budget 512');
    expect(describeCompression({ scheme: 'powersgd', budget: 2, levels: 1 })).toBe('PowerSGD (biased, error feedback), rank 2');
    expect(describeCompression({ scheme: 'atomo-entry', budget: 64, levels: 1, errorFeedback: true })).toBe(
      'ATOMO entry-wise, budget 64, error feedback (biased)',
    );
    // PowerSGD always has error feedback (said once); float32 has nothing to feed back.
    expect(describeCompression({ scheme: 'powersgd', budget: 2, levels: 1, errorFeedback: true })).toBe('PowerSGD (biased, error feedback), rank 2');
    expect(describeCompression({ scheme: 'none', budget: 0, levels: 1, errorFeedback: true })).toBe('float32 (uncompressed)');
  });
});
