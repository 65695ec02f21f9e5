/**
 * `npm run compare -- --quick` end to end: a two-budget spectral sweep and
 * TernGrad, each tuned between two learning rates on seed 0, then five
 * seeds of a few rounds of two workers, into a temporary folder. A few
 * minutes on two cores; it checks the report has the tables the comparison
 * promises (one row per link, every seed counted, censored runs marked),
 * that each run records its rule, and that the tuning is kept, not that a
 * scheme wins.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readThreadCpuMs } from '../../server/run/threadClock';
import type { SwarmHistory } from '../swarm/history';
import { readCalibrations } from './calibration';
import { EVAL_NEAR_WITHIN, QUICK, aggregationOf, runCompare } from './runCompare';
import { COMPARE_AGGREGATION, compareEntries } from './schemes';
import { COMPARE_LINKS } from './stats';
import { TASK_TARGETS } from './task';
import { chooseLearningRate, tuningTrial, type TuningRecord } from './tuning';

const dir = mkdtempSync(join(tmpdir(), 'atomo-compare-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the settings', () => {
  it('sweep each scheme, use the mean unless they name a rule, and have the robust default as its own', () => {
    const entries = compareEntries('mlp', 32);
    const ids = entries.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ['svd-1', 'svd-2', 'svd-3', 'svd-4', 'svd-8', 'qsgd-1', 'qsgd-16', 'powersgd-4', 'none'])
      expect(ids).toContain(id);
    expect(ids).toContain('auto-bytes-4x');
    expect(ids).toContain('entry-bytes-2x');
    const robust = entries.filter((e) => e.aggregation.kind !== 'mean');
    expect(robust.map((e) => [e.id, e.aggregation])).toEqual([['svd-2-norm-bound', { kind: 'norm-bound', k: 3 }]]);
    expect(COMPARE_AGGREGATION).toEqual({ kind: 'mean' });
    // QSGD's sweep: bytes grow with the levels.
    const qsgd = entries.filter((e) => e.scheme === 'qsgd' && e.overrides?.qsgdCoding === undefined);
    expect(qsgd.map((e) => e.levels)).toEqual([1, 2, 4, 8, 16]);
    for (let i = 1; i < qsgd.length; i++) expect(qsgd[i]!.expectedBytes).toBeGreaterThan(qsgd[i - 1]!.expectedBytes);
    // The fixed-width coding beside the paper's Elias coding, at the same levels: more bytes for the same draws.
    for (const levels of [1, 4]) {
      const fixed = entries.find((e) => e.id === `qsgd-${levels}-fixed`)!;
      expect(fixed.overrides).toEqual({ qsgdCoding: 'fixed' });
      expect(fixed.expectedBytes).toBeGreaterThan(qsgd.find((e) => e.levels === levels)!.expectedBytes);
    }
    expect(entries.find((e) => e.id === 'terngrad-clip')!.overrides).toEqual({ terngradClip: 2.5 });
    // Under the default downlink, byte-matched spectral ATOMO also runs with two downlinks of its own.
    expect(entries.filter((e) => e.downlink !== 'auto').map((e) => e.id)).toEqual([
      'svd-matched-full',
      'svd-matched-atomo',
    ]);
  });

  it("bring every model down by the comparison's downlink, under the same ids, when it names one", () => {
    const auto = compareEntries('mlp-wide', 32);
    const full = compareEntries('mlp-wide', 32, 'full');
    expect(full.map((e) => e.id)).toEqual(auto.map((e) => e.id));
    expect(full.map((e) => e.label)).toEqual(auto.map((e) => e.label));
    expect(new Set(full.map((e) => e.downlink))).toEqual(new Set(['full']));
    expect(compareEntries('mlp', 32, 'full').some((e) => e.id.endsWith('-full') || e.id.endsWith('-atomo'))).toBe(
      false,
    );
  });
});

describe('the aggregation column', () => {
  it('counts the rounds that combined fewer estimates than the run had workers, in every history', () => {
    const history = (workers: number, contributors: number[]) =>
      ({
        workers,
        rounds: contributors.map((c) => ({
          contributors: c,
          aggregation: { rule: { kind: 'mean' }, clipped: 0, dropped: 0 },
        })),
      }) as unknown as SwarmHistory;
    const aggregation = aggregationOf([history(4, [4, 3, 4]), history(4, [1, 4]), history(2, [2, 2])]);
    expect(aggregation).toMatchObject({ rounds: 7, estimates: 20, shortRounds: 2, recorded: 7 });
    expect(aggregationOf([history(4, [4, 4])]).shortRounds).toBe(0);
  });
});

describe('learning-rate tuning', () => {
  const points = (accuracies: number[]) =>
    accuracies.map((accuracy, i) => ({ round: 2 * (i + 1), accuracy, uplinkMB: 0, totalMB: 0, seconds: [0] }));

  it('takes the fewest rounds to 90%, then the higher final accuracy, then the smaller rate', () => {
    const slow = tuningTrial(0.05, points([0.8, 0.88, 0.91]), 0.9);
    const fast = tuningTrial(0.1, points([0.85, 0.9, 0.89]), 0.9);
    const never = tuningTrial(0.2, points([0.86, 0.89, 0.895]), 0.9);
    expect(fast).toEqual({ learningRate: 0.1, roundsToTarget: 4, finalAccuracy: 0.89 });
    expect(never.roundsToTarget).toBeNull();
    expect(chooseLearningRate([slow, fast, never])).toBe(0.1);
    // Nobody got there: the final accuracy decides, even over a rate that reached it later in a longer run.
    expect(chooseLearningRate([never, tuningTrial(0.025, points([0.7, 0.8, 0.85]), 0.9)])).toBe(0.2);
    expect(chooseLearningRate([tuningTrial(0.2, points([0.5]), 0.9), tuningTrial(0.1, points([0.5]), 0.9)])).toBe(0.1);
    expect(() => chooseLearningRate([])).toThrow(RangeError);
  });
});

describe('npm run compare -- --quick', () => {
  it(
    'tunes, trains every seed of each setting, and writes the per-link tables with intervals and both plots',
    { timeout: 600_000 },
    async () => {
      const reportPath = join(dir, 'results.md');
      const outDir = join(dir, 'histories');
      const { settings, wallSeconds } = await runCompare({
        ...QUICK,
        seeds: [...QUICK.seeds],
        only: [...QUICK.only],
        tuning: { seed: QUICK.tuning.seed, learningRates: [...QUICK.tuning.learningRates] },
        outDir,
        reportPath,
        reportOnly: false,
        pngs: false,
        progress: false,
        command: 'npm run compare -- --quick',
      });
      expect(settings.map((s) => s.entry.id).sort()).toEqual([...QUICK.only].sort());
      // A sweep: two budgets of one scheme.
      expect(settings.filter((s) => s.entry.scheme === 'atomo-svd').map((s) => s.entry.budget)).toEqual([1, 4]);
      const tuning = JSON.parse(readFileSync(join(outDir, 'tuning.json'), 'utf8')) as Record<string, TuningRecord>;
      for (const s of settings) {
        expect(s.seeds).toHaveLength(5);
        // The tuning trained each candidate on seed 0 and the seeds trained at its choice.
        const record = tuning[s.entry.id]!;
        expect(record.seed).toBe(0);
        expect(record.trials.map((t) => t.learningRate)).toEqual([...QUICK.tuning.learningRates]);
        expect(s.learningRates).toEqual([record.learningRate]);
        for (const lr of QUICK.tuning.learningRates)
          expect(existsSync(join(outDir, 'tuning', `${s.entry.id}-lr${lr}-seed0.json`))).toBe(true);
        // Every round waited for both workers.
        expect(s.aggregation).toMatchObject({
          rules: [{ kind: 'mean' }],
          clipped: 0,
          dropped: 0,
          recorded: 30,
          estimates: 60,
          shortRounds: 0,
        });
        for (const points of s.seeds) {
          // Every 2 of 6 rounds, and every round after an evaluation just below a target.
          const rounds = points.map((p) => p.round);
          for (const r of [2, 4, 6]) expect(rounds).toContain(r);
          points.forEach((p, i) => {
            if (p.round % QUICK.evalEvery === 0) return;
            const before = points[i - 1]!.accuracy;
            expect(TASK_TARGETS.mnist.some((t) => before < t && before >= t - EVAL_NEAR_WITHIN)).toBe(true);
          });
          // Traffic grows, and simulated time differs between links.
          expect(points.at(-1)!.totalMB).toBeGreaterThan(points[0]!.totalMB);
          expect(new Set(points.at(-1)!.seconds).size).toBeGreaterThan(1);
        }
      }
      // Each history records the rule and its counts per round.
      const history = JSON.parse(readFileSync(join(outDir, 'svd-1-seed1.json'), 'utf8')) as SwarmHistory;
      expect(history.config.aggregation).toEqual({ kind: 'mean' });
      for (const r of history.rounds) expect(r.aggregation).toEqual({ rule: { kind: 'mean' }, clipped: 0, dropped: 0 });
      // Seeds differ: the same setting does not give five identical curves.
      const accuracies = settings[0]!.seeds.map((p) => p.at(-1)!.accuracy);
      expect(new Set(accuracies).size).toBeGreaterThan(1);
      const report = readFileSync(reportPath, 'utf8');
      for (const link of COMPARE_LINKS) expect(report).toContain(`| ${link.name} (`);
      expect(report).toContain('rounds to 85%');
      expect(report).toContain('Accuracy at matched traffic');
      expect(report).toMatch(/the comparison took [\d.]+ min/);
      expect(report).toContain("combines each round's estimates by the mean");
      expect(report).toContain('a round waits for all 2 workers (a 10-minute deadline');
      expect(report).not.toContain('rounds with fewer than 2 estimates');
      expect(report).toContain('tuned on seed 0');
      // No byte-matched spectral setting here: the paper's table measures against the spectral sweep's best.
      const against = report.split("Spectral ATOMO's speed-up over each setting")[1]!.split('###')[0]!;
      expect(against).toMatch(/over ATOMO spectral s=[14]'s \(the spectral setting that reaches 90% in the fewest/);
      expect(against).toContain('| TernGrad |');
      // Nobody reaches 92% in 6 rounds: every run counts, censored at its end, with an interval.
      expect(report).toMatch(/≥ 6 \[6, 6\] \(5\/5 censored\)/);
      expect(report).toMatch(/\d \[[\d.]+, [\d.]+\]/);
      // Each setting's step times come from its calibration on the idle main thread (where the thread's CPU clock
      // reads), kept beside the histories, and the time table says so.
      const calibrations = readCalibrations(outDir);
      const calibrated = readThreadCpuMs() !== null;
      for (const s of settings) {
        expect(calibrations.settings[`mlp/mnist/${s.entry.id}`] !== undefined).toBe(calibrated);
        expect(s.times?.source).toBe(calibrated ? 'calibration' : 'wall');
      }
      expect(report).toContain('| times from: compute + compress + encode (+ update) ms |');
      if (calibrated) expect(report).toMatch(/\| calibration: [\d.]+ \+ [\d.]+ \+ [\d.]+ \(\+ [\d.]+\) ms \|/);
      // The parts of a round add up to its time in every row of the table of where it goes.
      const partsRows = report
        .split('\n')
        .filter((line) => /^\| .* \| (classroom Wi-Fi|home broadband|datacentre) \|/.test(line));
      expect(partsRows.length).toBe(3 * settings.length);
      for (const row of partsRows) {
        const cells = row
          .split('|')
          .slice(3, -1)
          .map((c) => Number(c.trim()));
        const total = cells.pop()!;
        // Each cell is rounded to 3 significant digits: the sum is within 1% of the rounded total, 2% allowed.
        expect(Math.abs(cells.reduce((a, b) => a + b, 0) - total)).toBeLessThanOrEqual(0.02 * total);
      }
      expect(wallSeconds).toBeGreaterThan(0);
      expect(
        readdirSync(dir)
          .filter((f) => f.endsWith('.svg'))
          .sort(),
      ).toEqual(['results-n2-accuracy-by-mb.svg', 'results-n2-accuracy-by-time.svg', 'results-n2-round-parts.svg']);
    },
  );
});
