/**
 * Aggregation is exact: with known gradients and the mean rule, the update is the mean of the decoded estimates, then
 * SGD.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { reconstruct } from '../../core/atomo';
import type { LayerSample } from '../../core/atomo/types';
import { encodeLayer } from '../../core/codec';
import type { SchemeName } from '../../core/atomo/types';
import type { GradientSubmission } from '../../core/protocol';
import { seededRng } from '../../core/testing/seeded';
import { removeDataDir, startServer, waitFor, type TestServer } from '../testing/harness';
import { joinRaw } from '../testing/rawWorker';

/** A deterministic pseudo-random float in [−1, 1). */
function filler(seed: number): () => number {
  const rng = seededRng(seed);
  return () => 2 * rng() - 1;
}

/** A valid sample of `scheme` for a rows×cols layer, with known contents. */
function knownSample(scheme: SchemeName, shape: readonly [number, number], seed: number): LayerSample {
  const [rows, cols] = shape;
  const n = rows * cols;
  const next = filler(seed);
  switch (scheme) {
    case 'none':
      return { scheme, shape, values: Float32Array.from({ length: n }, next) };
    case 'atomo-svd': {
      const count = Math.min(2, rows, cols);
      return {
        scheme,
        shape,
        count,
        u: Float32Array.from({ length: count * rows }, next),
        v: Float32Array.from({ length: count * cols }, next),
        scales: Float32Array.from({ length: count }, next),
      };
    }
    case 'qsgd':
      return {
        scheme,
        shape,
        levels: 4,
        coding: 'elias',
        bucketSize: 0,
        norms: Float32Array.of(0.75),
        negative: Uint8Array.from({ length: n }, () => (next() < 0 ? 1 : 0)),
        level: Uint16Array.from({ length: n }, () => Math.floor((next() + 1) * 2.5)),
      };
    default:
      throw new Error(`no known sample for ${scheme}`);
  }
}

describe('aggregation', () => {
  let server: TestServer;
  afterEach(async () => {
    await server.close();
    removeDataDir(server.dataDir);
  });

  for (const scheme of ['none', 'atomo-svd', 'qsgd'] as const) {
    it(`applies params − lr·mean(decoded estimates) with ${scheme}`, async () => {
      const learningRate = 0.5;
      server = await startServer({ defaultRun: false });
      // Created, not started: every worker joins before round 0 opens.
      const run = server.app.runs.create({
        scheme,
        levels: 4,
        bucketSize: 0,
        learningRate,
        momentum: 0,
        maxRounds: 1,
        evalEvery: 1,
        aggregation: { kind: 'mean' },
      });
      const before = run.params.slice();
      const workers = [
        await joinRaw(server.url, run.id),
        await joinRaw(server.url, run.id),
        await joinRaw(server.url, run.id),
      ];
      run.start();
      const tensors = run.layout.tensors;
      const expectedSum = new Float64Array(before.length);
      const submissions: GradientSubmission[] = [];
      for (const [w, worker] of workers.entries()) {
        const round = await worker.nextRound();
        const samples = tensors.map((t, layer) => knownSample(scheme, t.shape, 1000 * w + layer + 1));
        samples.forEach((sample, layer) => {
          const estimate = reconstruct(sample);
          for (let i = 0; i < estimate.length; i++) expectedSum[tensors[layer]!.offset + i]! += estimate[i]!;
        });
        submissions.push({
          runId: run.id,
          workerId: worker.accepted.workerId,
          version: round.version,
          layers: samples.map((sample, layer) => encodeLayer(sample, layer)),
          loss: 1,
          layerStats: tensors.map(() => ({ closedForm: 0, realised: 0, gradientNormSq: 1 })),
          computeMs: 0,
        });
      }
      // Arrival order must not matter: submit in reverse.
      for (const [w, worker] of [...workers.entries()].reverse()) {
        const ack = await worker.socket.timeout(10_000).emitWithAck('gradient:submit', submissions[w]!);
        expect(ack.ok).toBe(true);
      }
      await waitFor(() => run.status === 'finished');
      const after = run.params;
      let worst = 0;
      for (let i = 0; i < before.length; i++) {
        const expected = before[i]! - learningRate * (expectedSum[i]! / workers.length);
        worst = Math.max(worst, Math.abs(after[i]! - expected) / Math.max(1, Math.abs(expected)));
      }
      expect(worst).toBeLessThan(1e-6);
      expect(run.history[0]).toMatchObject({
        contributors: 3,
        aggregation: { rule: { kind: 'mean' }, clipped: 0, dropped: 0 },
        bytesUp: submissions.reduce((s, x) => s + x.layers.reduce((t, l) => t + l.byteLength, 0), 0),
      });
      for (const worker of workers) worker.close();
      expect(server.errors).toEqual([]);
    });
  }
});
