/**
 * The classroom attacker toggle: the teacher marks one of six workers as an
 * attacker sending its gradient sign-flipped ×10. Under the mean the update
 * goes the wrong way; under the default rule (norm bound, k = 3) and the
 * median it still goes down the honest gradient.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { encodeLayer } from '../../core/codec';
import type { AggregationRule, GradientSubmission, RoundAggregation } from '../../core/protocol';
import { DEFAULT_RUN_CONFIG } from '../../core/schema';
import { seededRng } from '../../core/testing/seeded';
import {
  TEST_ADMIN_TOKEN,
  connectClient,
  removeDataDir,
  startServer,
  waitFor,
  type TestServer,
} from '../testing/harness';
import { joinRaw, type RawWorker } from '../testing/rawWorker';

const WORKERS = 6;

describe('classroom attacker', () => {
  let server: TestServer;
  /** What the round's record says the rule did. */
  let recorded: RoundAggregation | undefined;
  afterEach(async () => {
    await server.close();
    removeDataDir(server.dataDir);
  });

  /**
   * One round of six workers sending g + noise, worker 0 marked as attacker; returns ⟨params_before − params_after, g⟩
   * / (lr ‖g‖²).
   */
  async function progressAlongGradient(aggregation: AggregationRule | undefined): Promise<number> {
    server = await startServer({ defaultRun: false });
    const learningRate = 0.1;
    const run = server.app.runs.create({
      scheme: 'none',
      learningRate,
      momentum: 0,
      maxRounds: 1,
      evalEvery: 1,
      ...(aggregation ? { aggregation } : {}),
    });
    const workers: RawWorker[] = [];
    for (let w = 0; w < WORKERS; w++) workers.push(await joinRaw(server.url, run.id));
    const teacher = await connectClient(server.url, TEST_ADMIN_TOKEN);
    const marked = await teacher.timeout(5_000).emitWithAck('worker:attack', {
      workerId: workers[0]!.accepted.workerId,
      attack: { kind: 'sign-flip', factor: 10 },
    });
    expect(marked.ok).toBe(true);
    expect(run.summary().workers.find((m) => m.workerId === workers[0]!.accepted.workerId)?.attack).toEqual({
      kind: 'sign-flip',
      factor: 10,
    });
    const before = run.params.slice();
    const rng = seededRng(11);
    const g = Float32Array.from({ length: before.length }, () => 2 * rng() - 1);
    run.start();
    for (const worker of workers) {
      const round = await worker.nextRound();
      const layers = run.layout.tensors.map((tensor, layer) => {
        const values = Float32Array.from(
          { length: tensor.size },
          (_, i) => g[tensor.offset + i]! + 0.2 * (rng() - 0.5),
        );
        return encodeLayer({ scheme: 'none', shape: tensor.shape, values }, layer);
      });
      const submission: GradientSubmission = {
        runId: run.id,
        workerId: worker.accepted.workerId,
        version: round.version,
        layers,
        loss: 1,
        layerStats: run.layout.tensors.map(() => ({ closedForm: 0, realised: 0, gradientNormSq: 1 })),
        computeMs: 0,
      };
      expect((await worker.socket.timeout(10_000).emitWithAck('gradient:submit', submission)).ok).toBe(true);
    }
    await waitFor(() => run.status === 'finished');
    recorded = run.history[0]?.aggregation;
    let dot = 0;
    let gg = 0;
    for (let i = 0; i < g.length; i++) {
      dot += (before[i]! - run.params[i]!) * g[i]!;
      gg += g[i]! * g[i]!;
    }
    for (const worker of workers) worker.close();
    teacher.disconnect();
    return dot / (learningRate * gg);
  }

  it('the mean follows the attacker: the update climbs the gradient', async () => {
    // (5·g − 10·g) / 6 = −5/6 g.
    expect(await progressAlongGradient({ kind: 'mean' })).toBeCloseTo(-5 / 6, 2);
    expect(recorded).toEqual({ rule: { kind: 'mean' }, clipped: 0, dropped: 0 });
  });

  it('the default rule (norm bound, k = 3) holds: the update still descends', async () => {
    expect(DEFAULT_RUN_CONFIG.aggregation).toEqual({ kind: 'norm-bound', k: 3 });
    // The attacker's ‖10g‖ is clipped to 3 × the median norm ≈ 3‖g‖: (5·g − 3·g) / 6 ≈ +1/3 g.
    const progress = await progressAlongGradient(undefined);
    expect(progress).toBeGreaterThan(0.25);
    expect(progress).toBeLessThan(0.4);
    // The round's record names the rule and the one estimate it clipped: the attacker's.
    expect(recorded).toEqual({ rule: { kind: 'norm-bound', k: 3 }, clipped: 1, dropped: 0 });
  });

  it('the coordinate-wise median holds: about one honest step', async () => {
    expect(await progressAlongGradient({ kind: 'median' })).toBeGreaterThan(0.9);
    // Six values per coordinate: the two middle ones averaged, four dropped.
    expect(recorded).toEqual({ rule: { kind: 'median' }, clipped: 0, dropped: 4 });
  });
});
