/**
 * The link model in a browser (docs/protocol.md, "Traffic and the link
 * model"). One tab (CPU backend, so no kernels to compile) trains a run
 * without a link, then the same setting under a slow link: 0.25 Mbit/s up,
 * 4 Mbit/s down, 250 ms each way, so the float32 model down (407 kB) and the
 * TernGrad gradient up (25.5 kB) take about 1.06 s each, some 2.1 s a round,
 * far above what a loaded 2-core machine adds to a round. Each linked round
 * must be slower, beyond the tab's own compute, by what the swarm's time
 * model (scripts/swarm/history.ts `simulatedRoundMs`, which `npm run compare`
 * uses) computes from that round's record, within 20%. The no-link run gives
 * the part of a round that is neither compute nor link (the loopback, the
 * socket, the worker's messages: tens of ms on a quiet machine); both runs
 * have only the tab open, so what the machine adds is the same in both.
 * The check fails if the tab skipped its link waits (slowdown 0), doubled
 * them (+100%), skipped either direction (−50%) or the latency (−23%).
 * Round 0 is left out of the timing: it also pays the trainer's first-call
 * warm-up. First the teacher's form is checked to put its link preset into
 * the run's configuration (that run is deleted untrained).
 */
import { expect, test, type Browser } from '@playwright/test';
import type { RoundMetrics, RunId } from '../core/protocol';
import { LINK_PRESETS, type LinkModel } from '../core/traffic/linkModel';
import { simulatedRoundMs, toHistoryRound } from '../scripts/swarm/history';
import { ADMIN_TOKEN, createFastRun, deleteRun, listRuns } from './support/admin';

const ROUNDS = 6;
const SLOW_LINK: LinkModel = {
  name: 'slow test link',
  uplinkMbps: 0.25,
  downlinkMbps: 4,
  serverMbps: null,
  serverMedium: 'duplex',
  latencyMs: 250,
};
const SETTING = {
  scheme: 'terngrad',
  downlink: 'full',
  roundDeadlineMs: 60_000,
  evalEvery: 1000,
  maxRounds: ROUNDS,
} as const;

/**
 * Creates a run of SETTING under `link`, has one tab train it to the end, and returns its timed rounds (1..ROUNDS−1).
 */
async function trainedRounds(browser: Browser, baseURL: string, link: LinkModel | null): Promise<RoundMetrics[]> {
  const runId: RunId = await createFastRun(baseURL, {
    ...SETTING,
    link,
    name: `link ${link?.name ?? 'none'} ${Date.now()}`,
  });
  const tab = await browser.newPage();
  try {
    await tab.goto(`/?run=${runId}&cpu`);
    let history: RoundMetrics[] = [];
    await expect
      .poll(
        async () => {
          const response = await fetch(`${baseURL}/api/runs/${runId}/metrics.json`);
          history = ((await response.json()) as { history: RoundMetrics[] }).history;
          return history.length;
        },
        { timeout: 90_000, message: `${ROUNDS} rounds` },
      )
      .toBe(ROUNDS);
    for (const m of history) expect(m.workers).toHaveLength(1);
    return history.slice(1);
  } finally {
    await tab.close();
    await deleteRun(baseURL, runId);
  }
}

const mean = (values: readonly number[]) => values.reduce((sum, v) => sum + v, 0) / values.length;
/** Open to the gradient's arrival beyond the tab's own reported compute and compression, ms. */
const beyondCompute = (m: RoundMetrics) => m.durations.collectMs - m.workers[0]!.computeMs;
/** The link's share of a round as the swarm simulates it: its round time less the compute and the server's work. */
const linkTermMs = (m: RoundMetrics, link: LinkModel) => {
  const round = toHistoryRound(m);
  return simulatedRoundMs(round, link) - round.workerComputeMs[0]! - round.serverMs;
};

test(
  'the teacher’s link preset reaches the run, ' +
    'and a slow link slows a tab’s rounds as the swarm’s time model predicts',
  async ({ browser, baseURL }) => {
    test.setTimeout(120_000);

    const teacher = await browser.newPage();
    try {
      await teacher.goto(`/dashboard?token=${ADMIN_TOKEN}`);
      await expect(teacher.getByText('teacher controls on')).toBeVisible();
      const form = teacher.getByRole('form', { name: 'Create a run' });
      const name = `preset ${Date.now()}`;
      await form.getByLabel('Name', { exact: true }).fill(name);
      await form.getByTestId('link-preset').selectOption('classroomWifi');
      await form.getByRole('button', { name: 'Create run' }).click();
      await expect(teacher.getByTestId('runs-table').locator('tbody tr', { hasText: name })).toBeVisible();
      const run = (await listRuns(baseURL!)).find((r) => r.config.name === name)!;
      expect(run.config.link).toEqual(LINK_PRESETS.classroomWifi);
      await deleteRun(baseURL!, run.runId);
    } finally {
      await teacher.close();
    }

    const plain = await trainedRounds(browser, baseURL!, null);
    const linked = await trainedRounds(browser, baseURL!, SLOW_LINK);
    const predicted = mean(linked.map((m) => linkTermMs(m, SLOW_LINK)));
    expect(predicted).toBeGreaterThan(1800); // the link, not the loopback, sets the pace
    const slowdown = mean(linked.map(beyondCompute)) - mean(plain.map(beyondCompute));
    const perRound = (rounds: readonly RoundMetrics[]) =>
      rounds.map((m) => `${m.durations.collectMs.toFixed(0)}/${m.workers[0]!.computeMs.toFixed(0)}`).join(' ');
    const figures =
      `slowdown ${slowdown.toFixed(0)} ms, predicted ${predicted.toFixed(0)} ms; ` +
      `collect/compute ms per round without the link: ${perRound(plain)}; with it: ${perRound(linked)}`;
    test.info().annotations.push({ type: 'link', description: figures });
    expect(Math.abs(slowdown - predicted) / predicted, figures).toBeLessThan(0.2);
  },
);
