import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INDICATOR_EVERY } from '../../core/training/workerRound';
import { makeData } from '../make-data';
import type { SwarmHistory } from './history';
import { parseAggregation, parseSwarmArgs } from './options';
import { runPatch, runSwarm } from './runSwarm';

const dir = mkdtempSync(join(tmpdir(), 'atomo-swarm-run-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm run swarm', () => {
  it('trains a run with two CPU worker threads on an in-process aggregator and writes its history', async () => {
    const out = join(dir, 'nested', 'run.json');
    const returned = await runSwarm({
      workers: 2,
      scheme: 'atomo-svd',
      budget: 2,
      levels: 3,
      bucketSize: 512,
      rounds: 4,
      seed: 3,
      evalEvery: 2,
      backend: 'cpu',
      progress: false,
      out,
    });
    const history = JSON.parse(readFileSync(out, 'utf8')) as SwarmHistory;

    expect(history).toEqual(JSON.parse(JSON.stringify(returned)));
    expect(history.config).toMatchObject({ scheme: 'atomo-svd', budget: 2, seed: 3, maxRounds: 4, shards: 2 });
    expect(history.workers).toBe(2);
    expect(history.rounds.map((r) => r.round)).toEqual([0, 1, 2, 3]);
    let cumulative = 0;
    for (const r of history.rounds) {
      expect(r.contributors).toBe(2);
      expect(r.bytesUp).toBeGreaterThan(0);
      expect(r.bytesDown).toBeGreaterThan(0);
      cumulative += r.bytesUp;
      expect(r.cumulativeBytesUp).toBe(cumulative);
      expect(Number.isFinite(r.trainLoss)).toBe(true);
      // Spectral sampling at s = 2 drops atoms, so both variances are positive.
      expect(r.varianceClosedForm).toBeGreaterThan(0);
      expect(r.varianceRealised).toBeGreaterThan(0);
      expect(r.normalisedClosedForm).toBeGreaterThan(0);
      // A round's duration is part of the swarm's wall time.
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
      expect(r.durationMs).toBeLessThanOrEqual(history.wallSeconds * 1000);
    }
    expect(history.rounds.reduce((sum, r) => sum + r.durationMs, 0)).toBeLessThanOrEqual(history.wallSeconds * 1000);
    // Per layer, every round: spectral ATOMO sends every weight layer spectrally, and measures the indicator of the
    // layers
    // whose g it reads (dense2, the biases); dense1's factored route reads none, so its indicator is measured every
    // INDICATOR_EVERY rounds (round 0 of these 4).
    for (const r of history.rounds) {
      expect(r.layers).toHaveLength(4);
      expect(r.layers![2]!.indicator).toBeGreaterThan(0);
      if (r.round % INDICATOR_EVERY === 0) expect(r.layers![0]!.indicator).toBeGreaterThan(0);
      else expect(r.layers![0]!.indicator ?? null).toBeNull();
      expect(r.layers![0]!.sentAs).toEqual({ spectral: 2 });
      expect(r.layers![0]!.bytes).toBeGreaterThan(0);
    }
    // Every round records the server's default rule and how many of the two estimates it clipped: at most the larger.
    for (const r of history.rounds) {
      expect(r.aggregation?.rule).toEqual({ kind: 'norm-bound', k: 3 });
      expect(r.aggregation?.dropped).toBe(0);
      expect([0, 1]).toContain(r.aggregation?.clipped);
    }
    // Evaluated after rounds 2 and 4 (evalEvery 2) only.
    expect(history.rounds.map((r) => r.testAccuracy !== null)).toEqual([false, true, false, true]);
  });
});

describe('npm run swarm -- --dataset fashion', () => {
  // public/data/fashion.*, as `npm run data` leaves them (converted here the first time).
  beforeAll(() => makeData({ dataset: 'fashion' }), 120_000);

  it('trains and evaluates a run on Fashion-MNIST: workers and aggregator load the run’s dataset', async () => {
    const history = await runSwarm({
      workers: 2,
      scheme: 'none',
      budget: 0,
      levels: 3,
      bucketSize: 512,
      rounds: 2,
      seed: 3,
      evalEvery: 1,
      backend: 'cpu',
      progress: false,
      dataset: 'fashion',
    });
    expect(history.config).toMatchObject({ dataset: 'fashion', maxRounds: 2 });
    expect(history.rounds.map((r) => r.contributors)).toEqual([2, 2]);
    for (const r of history.rounds) {
      expect(Number.isFinite(r.trainLoss)).toBe(true);
      expect(r.testAccuracy).not.toBeNull();
    }
  });
});

describe('parseSwarmArgs', () => {
  it('reads the spec example and fills the defaults', () => {
    const options = parseSwarmArgs([
      '--workers',
      '8',
      '--scheme',
      'atomo-svd',
      '--budget',
      '2',
      '--rounds',
      '300',
      '--out',
      'results/run.json',
    ]);
    expect(options).toMatchObject({
      workers: 8,
      scheme: 'atomo-svd',
      budget: 2,
      rounds: 300,
      out: 'results/run.json',
      backend: 'cpu',
      progress: true,
    });
    expect(options.url).toBeUndefined();
  });

  it('takes a byte budget and error feedback', () => {
    expect(parseSwarmArgs(['--scheme', 'atomo-auto', '--bytes', '9000', '--error-feedback'])).toMatchObject({
      scheme: 'atomo-auto',
      byteBudget: 9000,
      errorFeedback: true,
    });
    expect(parseSwarmArgs([]).byteBudget).toBeUndefined();
    expect(() => parseSwarmArgs(['--bytes', '-3'])).toThrow(/--bytes/);
  });

  it('takes an aggregation rule, with its parameter or the default one, and a learning rate', () => {
    expect(parseSwarmArgs([]).aggregation).toBeUndefined();
    expect(parseSwarmArgs(['--aggregation', 'mean', '--lr', '0.05'])).toMatchObject({
      aggregation: { kind: 'mean' },
      learningRate: 0.05,
    });
    expect(parseAggregation('median')).toEqual({ kind: 'median' });
    expect(parseAggregation('norm-bound')).toEqual({ kind: 'norm-bound', k: 3 });
    expect(parseAggregation('norm-bound:5')).toEqual({ kind: 'norm-bound', k: 5 });
    expect(parseAggregation('trimmed-mean')).toEqual({ kind: 'trimmed-mean', trim: 0.1 });
    expect(parseAggregation('trimmed-mean:0.2')).toEqual({ kind: 'trimmed-mean', trim: 0.2 });
    for (const bad of ['krum', 'mean:2', 'norm-bound:0', 'norm-bound:x', 'trimmed-mean:0.5', 'median:1:2'])
      expect(() => parseAggregation(bad)).toThrow(/--aggregation/);
    expect(() => parseSwarmArgs(['--lr', '0'])).toThrow(/--lr/);
  });

  it('passes overrides to the run configuration, under the settings it names itself', () => {
    const options = parseSwarmArgs(['--aggregation', 'mean', '--lr', '0.2', '--workers', '3']);
    const patch = runPatch({ ...options, overrides: { momentum: 0.5, learningRate: 1, shards: 9 } });
    expect(patch).toMatchObject({ momentum: 0.5, learningRate: 0.2, shards: 3, aggregation: { kind: 'mean' } });
  });

  it('takes a remote aggregator with its token and the webgpu backend', () => {
    expect(parseSwarmArgs(['--url', 'http://10.0.0.2:3000', '--token', 'T', '--backend', 'webgpu'])).toMatchObject({
      url: 'http://10.0.0.2:3000',
      token: 'T',
      backend: 'webgpu',
    });
  });

  it('refuses unknown schemes, backends, a url without token and non-integer counts', () => {
    expect(() => parseSwarmArgs(['--scheme', 'signsgd'])).toThrow(/--scheme/);
    expect(() => parseSwarmArgs(['--backend', 'tpu'])).toThrow(/--backend/);
    expect(() => parseSwarmArgs(['--url', 'http://x'])).toThrow(/--token/);
    expect(() => parseSwarmArgs(['--workers', '2.5'])).toThrow(/--workers/);
    expect(() => parseSwarmArgs(['--model', 'resnet'])).toThrow(/--model/);
    expect(() => parseSwarmArgs(['--downlink', 'carrier-pigeon'])).toThrow(/--downlink/);
    expect(() => parseSwarmArgs(['--downlink-budget', '0'])).toThrow(/--downlink-budget/);
  });

  it('takes the dataset, MNIST by default, and refuses another', () => {
    expect(parseSwarmArgs([]).dataset).toBe('mnist');
    expect(parseSwarmArgs(['--dataset', 'fashion']).dataset).toBe('fashion');
    expect(() => parseSwarmArgs(['--dataset', 'cifar10'])).toThrow(/--dataset must be one of mnist, fashion/);
    expect(runPatch(parseSwarmArgs(['--dataset', 'fashion']))).toMatchObject({ dataset: 'fashion' });
  });

  it('takes the model and the downlink, the server’s default unless given', () => {
    expect(parseSwarmArgs([])).toMatchObject({ model: 'mlp' });
    expect(parseSwarmArgs([]).downlink).toBeUndefined();
    expect(runPatch(parseSwarmArgs([]))).not.toHaveProperty('downlink');
    expect(parseSwarmArgs(['--downlink', 'full']).downlink).toBe('full');
    expect(() => parseSwarmArgs(['--downlink', 'dense'])).toThrow(/--downlink must be one of auto, full, relay, atomo/);
    expect(parseSwarmArgs(['--model', 'cnn', '--downlink', 'atomo', '--downlink-budget', '4'])).toMatchObject({
      model: 'cnn',
      downlink: 'atomo',
      downlinkBudget: 4,
    });
  });
});
