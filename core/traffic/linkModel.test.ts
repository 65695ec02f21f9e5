import { describe, expect, it } from 'vitest';
import { LINK_PRESETS, checkLink, deliveryMs, roundTimeMs, symmetricLink } from './linkModel';

describe('link model', () => {
  it('delivers bytes·8/bandwidth + latency', () => {
    // 1 MB at 8 Mbit/s is one second, plus 20 ms.
    expect(deliveryMs(1_000_000, 8, 20)).toBeCloseTo(1020, 9);
    expect(deliveryMs(0, 8, 20)).toBe(20);
  });

  it('makes a round as slow as its slowest worker, plus the server', () => {
    const link = { name: 't', uplinkMbps: 1, downlinkMbps: 4, latencyMs: 10 };
    const fast = { downBytes: 500_000, upBytes: 1000, computeMs: 5 };
    const slow = { downBytes: 500_000, upBytes: 125_000, computeMs: 50 };
    // slow: 1000 + 10 + 50 + 1000 + 10; server 7.
    expect(roundTimeMs([fast, slow], 7, link)).toBeCloseTo(2077, 9);
    expect(roundTimeMs([fast], 0, link)).toBeCloseTo(1000 + 10 + 5 + 8 + 10, 9);
  });

  it('has sane presets and refuses a link without bandwidth', () => {
    for (const link of Object.values(LINK_PRESETS)) expect(() => checkLink(link)).not.toThrow();
    expect(LINK_PRESETS.schoolWifi.uplinkMbps).toBeCloseTo(20 / 30, 12);
    expect(() => checkLink(symmetricLink(0, 1))).toThrow(/positive/);
    expect(() => checkLink({ ...symmetricLink(1, 1), latencyMs: -1 })).toThrow(/latency/);
  });
});
