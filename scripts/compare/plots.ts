/**
 * The comparison's plots as Vega-Lite specs, rendered headless to SVG with
 * vega's View (renderer 'none': no DOM, no canvas). Two views of the same
 * runs: accuracy per round (speed in rounds) and accuracy per cumulative
 * upstream megabyte on a log axis (speed in bytes, the paper's question).
 */
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { SwarmHistory } from '../swarm/history';
import type { CompareEntry } from './schemes';

/** One plotted run. */
export interface PlotRun {
  readonly entry: CompareEntry;
  readonly history: SwarmHistory;
}

interface Point {
  readonly scheme: string;
  readonly round: number;
  readonly mb: number;
  readonly accuracy: number;
}

function points(runs: readonly PlotRun[]): Point[] {
  return runs.flatMap(({ entry, history }) =>
    history.rounds
      .filter((r) => r.testAccuracy !== null)
      .map((r) => ({ scheme: entry.label, round: r.round + 1, mb: r.cumulativeBytesUp / 1e6, accuracy: r.testAccuracy ?? 0 })),
  );
}

function spec(runs: readonly PlotRun[], x: 'round' | 'mb', title: string): TopLevelSpec {
  const order = runs.map((r) => r.entry.label);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 640,
    height: 360,
    background: 'white',
    layer: [
      {
        data: { values: points(runs) },
        mark: { type: 'line', point: false, strokeWidth: 1.6, clip: true },
        encoding: {
          x:
            x === 'round'
              ? { field: 'round', type: 'quantitative', title: 'round' }
              : { field: 'mb', type: 'quantitative', title: 'cumulative upstream MB (all workers, log scale)', scale: { type: 'log' } },
          y: { field: 'accuracy', type: 'quantitative', title: 'test accuracy', scale: { domain: [0.5, 1] }, axis: { format: '.0%' } },
          color: { field: 'scheme', type: 'nominal', sort: order, scale: { scheme: 'tableau10' }, title: null, legend: { labelLimit: 320 } },
        },
      },
      {
        data: { values: [{ target: 0.9 }] },
        mark: { type: 'rule', strokeDash: [4, 4], color: '#888' },
        encoding: { y: { field: 'target', type: 'quantitative' } },
      },
    ],
  };
}

async function toSvg(topLevel: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(topLevel).spec), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}

/** SVG text of both plots. */
export async function renderPlots(runs: readonly PlotRun[]): Promise<{ byRound: string; byBytes: string }> {
  const [byRound, byBytes] = await Promise.all([
    toSvg(spec(runs, 'round', 'MNIST MLP, test accuracy per round')),
    toSvg(spec(runs, 'mb', 'MNIST MLP, test accuracy per upstream megabyte')),
  ]);
  return { byRound, byBytes };
}
