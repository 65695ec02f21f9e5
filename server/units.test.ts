/** Small pure parts of the server: the round's closing rule, checkpoints, CSV, config validation, the rate limiter. */
import { describe, expect, it } from 'vitest';
import { asModelVersion, asRunId, asWorkerId } from '../core/protocol';
import { decodeCheckpoint, encodeCheckpoint } from './checkpoint';
import { ProtocolFault } from './fault';
import { maxLayerBytes } from '../core/codec';
import { computeMaxMessageBytes } from './limits';
import { historyToCsv } from './metrics';
import { createRateLimiter } from './rateLimit';
import { OpenRound } from './round';
import { DEFAULT_RUN_CONFIG, applyConfigPatch } from './runConfig';

const contribution = { estimates: [], loss: 1, layerStats: [], bytesUp: 10, computeMs: 1 };
const ids = [1, 2, 3, 4].map(asWorkerId);

describe('OpenRound.canClose', () => {
  it('closes when every remaining participant reported, or at the deadline with the quorum', () => {
    const round = new OpenRound(asModelVersion(0), ids, 100, 0, 1000, { fraction: 0.5, minimum: 1 });
    round.add(ids[0]!, contribution, 1);
    expect(round.canClose()).toBe(false);
    round.deadlinePassed = true;
    expect(round.canClose()).toBe(false); // quorum is 2
    round.add(ids[1]!, contribution, 2);
    expect(round.canClose()).toBe(true);
  });

  it('never waits for workers that left', () => {
    const round = new OpenRound(asModelVersion(0), ids, 100, 0, 1000, { fraction: 1, minimum: 4 });
    round.add(ids[0]!, contribution, 1);
    for (const id of ids.slice(1)) round.drop(id);
    expect(round.canClose()).toBe(true);
    const empty = new OpenRound(asModelVersion(0), ids.slice(0, 1), 100, 0, 1000, { fraction: 1, minimum: 1 });
    empty.drop(ids[0]!);
    expect(empty.isAbandoned()).toBe(true);
  });
});

describe('checkpoint format', () => {
  it('round-trips a run exactly', () => {
    const snapshot = {
      runId: asRunId('r1'),
      config: DEFAULT_RUN_CONFIG,
      status: 'running' as const,
      version: asModelVersion(7),
      params: Float32Array.from([1.5, -2, 3e-8]),
      velocity: Float32Array.from([0, 0.25, -1]),
      history: [],
      members: [{ workerId: asWorkerId(3), slot: 0, bytesUp: 5, bytesDown: 6, rounds: 2 }],
      bytesUp: 5,
      bytesDown: 6,
    };
    const back = decodeCheckpoint(encodeCheckpoint({ snapshot, createdAt: 42 }));
    expect(back).toEqual({ snapshot, createdAt: 42 });
    expect(() => decodeCheckpoint(Buffer.from('nope'))).toThrow();
  });
});

describe('limits', () => {
  it('admits the largest honest submission and caps each layer by its scheme', () => {
    expect(computeMaxMessageBytes()).toBeGreaterThanOrEqual(784 * 128 * 9);
    expect(maxLayerBytes('none', [784, 128], 1)).toBe(12 + 4 * 784 * 128);
    expect(maxLayerBytes('terngrad', [4, 4], 1)).toBe(12 + 4 + 4);
  });
});

describe('config', () => {
  it('fills the scheme default budget and refuses bad fields', () => {
    expect(applyConfigPatch(DEFAULT_RUN_CONFIG, { scheme: 'atomo-entry' }).budget).toBe(1024);
    expect(() => applyConfigPatch(DEFAULT_RUN_CONFIG, { batchSize: 0 })).toThrow(ProtocolFault);
    expect(() => applyConfigPatch(DEFAULT_RUN_CONFIG, { nope: 1 })).toThrow(/unknown configuration field/);
    expect(() => applyConfigPatch(DEFAULT_RUN_CONFIG, { split: { kind: 'dirichlet', alpha: -1 } })).toThrow(/alpha/);
  });
});

describe('metrics export', () => {
  it('writes one CSV row per round', () => {
    expect(historyToCsv([]).split('\n')[0]).toMatch(/^version,closedAt,/);
  });
});

describe('rate limiter', () => {
  it('allows a burst, then the steady rate', () => {
    let t = 0;
    const allow = createRateLimiter({ perSecond: 10, burst: 3 }, () => t);
    expect([allow(), allow(), allow(), allow()]).toEqual([true, true, true, false]);
    t = 100;
    expect(allow()).toBe(true);
  });
});
