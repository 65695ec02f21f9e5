import { describe, expect, it } from 'vitest';
import {
  describeCompression,
  describeDeliveries,
  describeDownlink,
  describeDownlinkChoice,
  schemeTag,
  varianceFormula,
} from './format';

describe('describeCompression', () => {
  it('names the new schemes with their knob, and marks error feedback as biased', () => {
    expect(describeCompression({ scheme: 'atomo-dct', budget: 512, levels: 1 })).toBe(
      'ATOMO Fourier (DCT), budget 512',
    );
    expect(describeCompression({ scheme: 'powersgd', budget: 2, levels: 1 })).toBe(
      'PowerSGD (biased, error feedback), rank 2',
    );
    expect(describeCompression({ scheme: 'atomo-entry', budget: 64, levels: 1, errorFeedback: true })).toBe(
      'ATOMO entry-wise, budget 64, error feedback (biased)',
    );
    // PowerSGD always has error feedback (said once); float32 has nothing to feed back.
    expect(describeCompression({ scheme: 'powersgd', budget: 2, levels: 1, errorFeedback: true })).toBe(
      'PowerSGD (biased, error feedback), rank 2',
    );
    expect(describeCompression({ scheme: 'none', budget: 0, levels: 1, errorFeedback: true })).toBe(
      'float32 (uncompressed)',
    );
  });

  it('names a byte budget for the whole model, and marks legends of error-feedback runs biased too', () => {
    expect(describeCompression({ scheme: 'atomo-auto', budget: 0, levels: 1, byteBudget: 9024 })).toBe(
      'ATOMO auto (atoms chosen per layer), 9.02 kB per round split across layers',
    );
    expect(
      describeCompression({ scheme: 'atomo-svd', budget: 2, levels: 1, byteBudget: 20_000, errorFeedback: true }),
    ).toMatch(/^ATOMO spectral, 20(\.0)? kB per round split across layers, error feedback \(biased\)$/);
    expect(schemeTag({ scheme: 'qsgd', errorFeedback: true })).toBe('QSGD, error feedback (biased)');
    expect(schemeTag({ scheme: 'qsgd' })).toBe('QSGD');
  });

  it('marks clipped TernGrad biased (isBiased), unclipped TernGrad not', () => {
    expect(describeCompression({ scheme: 'terngrad', budget: 0, levels: 1, terngradClip: 2.5 })).toBe(
      'TernGrad, clipped at ±2.5σ (biased)',
    );
    expect(schemeTag({ scheme: 'terngrad', terngradClip: 2.5 })).toBe('TernGrad, clipped at ±2.5σ (biased)');
    expect(schemeTag({ scheme: 'terngrad', terngradClip: 0 })).toBe('TernGrad');
    expect(schemeTag({ scheme: 'terngrad' })).toBe('TernGrad');
  });
});

describe('varianceFormula', () => {
  it('labels each scheme with the closed form it reports', () => {
    for (const scheme of ['atomo-svd', 'atomo-entry', 'atomo-dct', 'atomo-auto', 'terngrad'] as const)
      expect(varianceFormula({ scheme, levels: 1 })).toBe('Σλ²(1/p−1)');
    expect(varianceFormula({ scheme: 'qsgd', levels: 1 })).toBe('Σλ²(1/p−1)');
    expect(varianceFormula({ scheme: 'qsgd', levels: 1, bucketSize: 512 })).toBe('Σ per bucket λ²(1/p−1)');
    // More levels: each entry rounds between two adjacent levels, not to 0 or a single λ.
    expect(varianceFormula({ scheme: 'qsgd', levels: 3 })).toBe('Σ(‖g‖/s)²f(1−f)');
    expect(varianceFormula({ scheme: 'qsgd', levels: 3, bucketSize: 512 })).toBe('Σₖ(‖gₖ‖/s)²Σf(1−f)');
    // PowerSGD reports its reconstruction error; float32 adds nothing.
    expect(varianceFormula({ scheme: 'powersgd', levels: 1 })).toBe('‖ĝ−g‖²');
    expect(varianceFormula({ scheme: 'none', levels: 1 })).toBe('0');
  });
});

describe('the downlink, in words', () => {
  it('says auto trains as the full model, and atomo changes the training', () => {
    expect(describeDownlink({ downlink: 'auto', downlinkBudget: 8 })).toMatch(/training as with the full model/);
    expect(describeDownlink({ downlink: 'atomo', downlinkBudget: 8 })).toMatch(/changes the training/);
  });

  it('says what auto sent and why', () => {
    const model = 407_128;
    expect(describeDownlinkChoice({ relayBytes: 343_740, messages: 3, modelBytes: model })).toBe(
      'relay: 3 × 115 kB = 344 kB < model 407 kB',
    );
    expect(describeDownlinkChoice({ relayBytes: 458_320, messages: 4, modelBytes: model })).toBe(
      'full: relay 458 kB ≥ model 407 kB',
    );
    expect(describeDownlinkChoice({ relayBytes: null, messages: 0, modelBytes: model })).toBe(
      'full: nothing to relay yet (model 407 kB)',
    );
    expect(describeDeliveries(12, { update: 3, sync: 1, full: 0 })).toBe('round 12: 3 relayed, 1 synced, 0 full');
  });
});
