/**
 * "Which atoms suit each layer": for one run, the indicator ‖G‖_*·√(m+n)/‖g‖₁
 * of every layer over rounds (the workers' mean), the decomposition each
 * layer was sent in over rounds (atomo-auto's choice, or a split's dense
 * layers), and a table of the split of the run's bytes across its layers
 * (docs/design.md, "Which atoms suit a layer" and "Budgets by bytes").
 */
import { useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CartesianGrid, Line, LineChart, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { createModelLayout } from '../../../core/model';
import type { LayerSentAs } from '../../../core/protocol';
import { ChartCard } from '../common/ChartCard';
import { formatBytes, formatNumber, formatPercent, roundLabel, sentAsLabel } from '../common/format';
import { AXIS_PROPS, COLOURS, LINE_PROPS, runColour } from '../common/palette';
import { TableHead } from '../common/TableHead';
import type { RunLayersPoint, RunView } from '../store/dashboardStore';
import { RunOptions } from './RunOptions';
import { useOrderedRuns } from './useOrderedRuns';

const HEIGHT = 220;
/**
 * Where the paper puts the crossover (an entry counts as one number), and where this wire puts it (an entry ≈ 1.4
 * bytes against 4 per number).
 */
const PAPER_CROSSOVER = 1;
const WIRE_CROSSOVER = 0.6;
const SENT_AS: readonly LayerSentAs[] = ['spectral', 'entry', 'dct', 'dense'];
const SENT_AS_COLOURS: Readonly<Record<LayerSentAs, string>> = {
  spectral: '#5b4bdb',
  entry: '#e8702a',
  dct: '#1f9e89',
  dense: '#9aa3b5',
};

/** A bar of the "how each layer was sent" chart: the rounds it spans, at a layer's row (null: a gap). */
interface SentAsBar {
  readonly round: number;
  readonly layer: number | null;
}

/** The bars of one decomposition at one layer's row. */
interface SentAsLine {
  readonly kind: LayerSentAs;
  readonly layer: number;
  readonly data: SentAsBar[];
}

/**
 * One line per decomposition and layer: a thick bar over each round the layer
 * went that way, reaching halfway to the neighbouring points, null between, so
 * that a stretch of the same choice is one SVG path, not a shape per round
 * (up to 240 rounds × layers of them, redrawn a few times a second).
 */
function sentAsBars(points: readonly RunLayersPoint[], layers: number): SentAsLine[] {
  const bars: SentAsLine[] = [];
  for (const kind of SENT_AS) {
    for (let layer = 0; layer < layers; layer++) {
      const data: SentAsBar[] = [];
      let previous = -2; // the index of the last point drawn
      points.forEach((p, i) => {
        if (p.sentAs[layer] !== kind) return;
        const before = i === 0 ? p.round - 0.5 : (points[i - 1]!.round + p.round) / 2;
        const after = i === points.length - 1 ? p.round + 0.5 : (p.round + points[i + 1]!.round) / 2;
        if (previous === i - 1) {
          // The bar before is this layer's too: lengthen it.
          data[data.length - 1] = { round: after, layer };
        } else {
          if (data.length > 0) data.push({ round: before, layer: null });
          data.push({ round: before, layer }, { round: after, layer });
        }
        previous = i;
      });
      if (data.length > 0) bars.push({ kind, layer, data });
    }
  }
  return bars;
}

/** The run the card shows by default: the latest atomo-auto run, else the latest that measured an indicator. */
function defaultRun(runs: readonly RunView[]): RunView | undefined {
  const measured = runs.filter((r) => r.layerTotals.lastIndicator.some((x) => x !== null));
  return measured.findLast((r) => r.summary.config.scheme === 'atomo-auto') ?? measured.at(-1) ?? runs.at(-1);
}

/** translate="no" for an SVG element (React's SVG types do not list it; the DOM attribute works on any element). */
const UNTRANSLATED = { translate: 'no' } as Record<string, string>;

/** A y-axis tick with a layer's name: an identifier from the code, kept untranslated. */
function LayerTick({
  x,
  y,
  payload,
  names,
}: {
  x?: number;
  y?: number;
  payload?: { value: number };
  names: readonly string[];
}) {
  return (
    <text x={x} y={y} dy={4} textAnchor="end" fontSize={10} fill={COLOURS.axis} {...UNTRANSLATED}>
      {names[payload?.value ?? -1] ?? ''}
    </text>
  );
}

const COLUMNS = ['layer', 'indicator', 'sentAs', 'bytes', 'share'] as const;

/** The card, for the teacher's dashboard. */
export function LayerChoices() {
  const { t } = useTranslation();
  const runs = useOrderedRuns();
  const [picked, setPicked] = useState<string | null>(null);
  const run = runs.find((r) => r.summary.runId === picked) ?? defaultRun(runs);
  const names = useMemo(
    () => (run === undefined ? [] : createModelLayout(run.summary.config.model).tensors.map((tensor) => tensor.name)),
    [run],
  );
  const shapes = useMemo(
    () => (run === undefined ? [] : createModelLayout(run.summary.config.model).tensors.map((tensor) => tensor.shape)),
    [run],
  );
  const points = run?.layers.points ?? [];
  // One line per layer: the rounds where some worker measured it.
  const indicatorLines = names.map((_, l) =>
    points.flatMap((p) => {
      const value = p.indicator[l];
      return value === null || value === undefined ? [] : [{ round: p.round, value }];
    }),
  );
  const indicatorPoints = indicatorLines.reduce((n, line) => n + line.length, 0);
  const bars = sentAsBars(points, names.length);
  const choices = points.reduce((n, p) => n + p.sentAs.filter((k) => k !== null).length, 0);
  const totals = run?.layerTotals;
  const totalBytes = totals?.bytes.reduce((a, b) => a + b, 0) ?? 0;
  return (
    <section className="card layer-choices" data-testid="layer-choices" aria-label={t('dashboard.layers.title')}>
      <header className="layer-choices__header">
        <div>
          <h2>{t('dashboard.layers.title')}</h2>
          <p className="muted small">
            {t('dashboard.layers.hint', { paper: formatNumber(PAPER_CROSSOVER), wire: formatNumber(WIRE_CROSSOVER) })}
          </p>
        </div>
        <label>
          {t('dashboard.layers.run')}
          <select
            value={run?.summary.runId ?? ''}
            onChange={(e) => setPicked(e.target.value)}
            data-testid="layer-choices-run"
            translate="no"
          >
            <RunOptions runs={runs} />
          </select>
        </label>
      </header>
      <ul className="legend" aria-label={t('dashboard.layers.legend')} translate="no">
        {names.map((name, l) => (
          <li key={name}>
            <span className="legend__swatch" style={{ background: runColour(l) }} />
            {name}
          </li>
        ))}
      </ul>
      <div className="layer-choices__charts">
        <ChartCard
          testId="chart-indicator"
          points={indicatorPoints}
          title={t('dashboard.layers.indicatorTitle')}
          caption={t('dashboard.layers.indicatorCaption')}
          emptyText={t('dashboard.layers.indicatorEmpty')}
        >
          <ResponsiveContainer width="100%" height={HEIGHT}>
            <LineChart margin={{ top: 8, right: 16, bottom: 0, left: -6 }}>
              <CartesianGrid stroke={COLOURS.grid} vertical={false} />
              <XAxis
                type="number"
                dataKey="round"
                domain={['dataMin', 'dataMax']}
                allowDecimals={false}
                {...AXIS_PROPS}
              />
              <YAxis
                type="number"
                dataKey="value"
                scale="log"
                domain={['auto', 'auto']}
                allowDataOverflow
                {...AXIS_PROPS}
                tickFormatter={formatNumber}
              />
              <Tooltip formatter={(v) => formatNumber(Number(v))} labelFormatter={roundLabel} />
              <ReferenceLine y={PAPER_CROSSOVER} stroke={COLOURS.baseline} strokeDasharray="5 4" />
              <ReferenceLine y={WIRE_CROSSOVER} stroke={COLOURS.baseline} strokeDasharray="2 3" />
              {indicatorLines.map((data, l) => (
                <Line key={l} data={data} dataKey="value" name={names[l] ?? ''} stroke={runColour(l)} {...LINE_PROPS} />
              ))}
            </LineChart>
          </ResponsiveContainer>
        </ChartCard>
        <ChartCard
          title={t('dashboard.layers.sentAsTitle')}
          caption={
            <span className="layer-choices__kinds">
              {SENT_AS.map((kind) => (
                <span key={kind}>
                  <span className="legend__swatch" style={{ background: SENT_AS_COLOURS[kind] }} />
                  {sentAsLabel(kind)}
                </span>
              ))}
            </span>
          }
          testId="chart-sent-as"
          points={choices}
          emptyText={t('dashboard.layers.sentAsEmpty')}
        >
          <ResponsiveContainer width="100%" height={HEIGHT}>
            <LineChart margin={{ top: 8, right: 16, bottom: 0, left: 40 }}>
              <CartesianGrid stroke={COLOURS.grid} />
              <XAxis
                type="number"
                dataKey="round"
                domain={['dataMin', 'dataMax']}
                allowDecimals={false}
                {...AXIS_PROPS}
              />
              <YAxis
                type="number"
                dataKey="layer"
                domain={[-0.5, names.length - 0.5]}
                ticks={names.map((_, l) => l)}
                reversed
                {...AXIS_PROPS}
                tick={<LayerTick names={names} />}
              />
              {bars.map(({ kind, layer, data }) => (
                <Line
                  key={`${kind}-${layer}`}
                  data={data}
                  dataKey="layer"
                  name={sentAsLabel(kind)}
                  stroke={SENT_AS_COLOURS[kind]}
                  {...LINE_PROPS}
                  strokeWidth={10}
                  strokeLinecap="butt"
                />
              ))}
            </LineChart>
          </ResponsiveContainer>
        </ChartCard>
      </div>
      <div className="table-scroll">
        <table className="table" data-testid="layers-table">
          <TableHead columns={COLUMNS} label={(column) => t(`dashboard.layers.${column}`)} />
          <tbody>
            {names.map((name, l) => {
              const counts = totals?.sentAs[l] ?? {};
              const sent = SENT_AS.reduce((n, kind) => n + (counts[kind] ?? 0), 0);
              const bytes =
                run !== undefined && run.roundsClosed > 0 ? (totals?.bytes[l] ?? 0) / run.roundsClosed : null;
              const indicator = totals?.lastIndicator[l] ?? null;
              return (
                <tr key={name} data-layer={l}>
                  <td>
                    <span translate="no">{name}</span>{' '}
                    <span className="muted small">{`${shapes[l]?.[0]}×${shapes[l]?.[1]}`}</span>
                  </td>
                  <td data-testid="layer-indicator">
                    {indicator === null ? t('common.dash') : formatNumber(indicator)}
                  </td>
                  <td data-testid="layer-sent-as">
                    {sent === 0
                      ? t('common.dash')
                      : SENT_AS.filter((kind) => (counts[kind] ?? 0) > 0)
                          .map((kind) => `${sentAsLabel(kind)} ${formatPercent((counts[kind] ?? 0) / sent)}`)
                          .join(' · ')}
                  </td>
                  <td>{bytes === null ? t('common.dash') : formatBytes(bytes)}</td>
                  <td>
                    {bytes === null || totalBytes === 0
                      ? t('common.dash')
                      : formatPercent((totals?.bytes[l] ?? 0) / totalBytes)}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </section>
  );
}
