/**
 * The trade-off chart: every run's test accuracy against what it cost, on a
 * chosen x axis: cumulative megabytes on the wire (both ways, up or down;
 * log scale), or the seconds its rounds would take on a simulated network,
 * one of core/traffic/linkModel.ts's presets (client/ui/store/simulatedTime.ts;
 * linear). The same presets pace the race's tabs, so the class sees both the
 * regime where compression wins and the one where it does not.
 */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { ChartCard } from '../common/ChartCard';
import { formatNumber, formatPercent } from '../common/format';
import { AXIS_PROPS, COLOURS, LINE_PROPS } from '../common/palette';
import type { RunEvalPoint, RunView, TrafficAxis } from '../store/dashboardStore';
import { LINK_PRESET_KEYS, type LinkPresetKey } from '../store/simulatedTime';

/** A run as the charts draw it: its colour and legend label. */
export interface Plotted {
  readonly run: RunView;
  readonly colour: string;
  readonly label: string;
}

export const percentTick = (v: number) => `${Math.round(v * 100)}%`;

/** The trade-off chart's x axes: every frame on the wire, by direction. */
const TRAFFIC_AXES: readonly TrafficAxis[] = ['totalMB', 'uplinkMB', 'downlinkMB'];

/** What the x axis shows: traffic, or simulated time on a link preset. */
type AxisChoice = TrafficAxis | LinkPresetKey;

const isTraffic = (choice: AxisChoice): choice is TrafficAxis => (TRAFFIC_AXES as readonly string[]).includes(choice);

/** The x value of an evaluation point on `choice`'s axis. */
const xOf = (point: RunEvalPoint, choice: AxisChoice) => (isTraffic(choice) ? point[choice] : point.simulatedS[choice]);

/** One switch of radio buttons, all named `tradeoff-axis` so that one choice holds across the switches. */
function AxisSwitch({
  label,
  testId,
  choices,
  current,
  text,
  onChoose,
}: {
  readonly label: string;
  readonly testId: string;
  readonly choices: readonly AxisChoice[];
  readonly current: AxisChoice;
  readonly text: (choice: AxisChoice) => string;
  readonly onChoose: (choice: AxisChoice) => void;
}) {
  return (
    <div className="segmented" role="radiogroup" aria-label={label} data-testid={testId}>
      {choices.map((choice) => (
        <label key={choice} className={choice === current ? 'segmented__item segmented__item--on' : 'segmented__item'}>
          <input
            type="radio"
            name="tradeoff-axis"
            value={choice}
            checked={choice === current}
            onChange={() => onChoose(choice)}
          />
          {text(choice)}
        </label>
      ))}
    </div>
  );
}

/** The trade-off chart (data-testid="chart-tradeoff"). */
export function TradeoffChart({ runs, height }: { readonly runs: readonly Plotted[]; readonly height: number }) {
  const { t } = useTranslation();
  const [choice, setChoice] = useState<AxisChoice>('totalMB');
  const points = runs.reduce((n, r) => n + r.run.evals.points.length, 0);
  const traffic = isTraffic(choice);
  const untimedRounds = runs.reduce((n, r) => n + r.run.clock.untimedRounds, 0);
  const linkName = traffic ? '' : t(`dashboard.linkPresets.${choice}`);
  const axisLabel = traffic
    ? t(`dashboard.charts.axes.${choice}.axis`)
    : untimedRounds > 0
      ? t('dashboard.charts.timeAxisUntimed', { link: linkName, rounds: untimedRounds })
      : t('dashboard.charts.timeAxis', { link: linkName });
  const xLabel = (x: number) =>
    traffic
      ? t('dashboard.charts.mbSent', { mb: formatNumber(x) })
      : t(untimedRounds > 0 ? 'dashboard.charts.secondsUntimed' : 'dashboard.charts.seconds', {
          s: formatNumber(x),
          link: linkName,
        });
  return (
    <ChartCard
      title={t('dashboard.charts.tradeoffTitle')}
      caption={t(traffic ? 'dashboard.charts.tradeoffCaption' : 'dashboard.charts.tradeoffTimeCaption')}
      testId="chart-tradeoff"
      points={points}
      emptyText={t('dashboard.charts.tradeoffEmpty')}
    >
      <div className="tradeoff-axes">
        <AxisSwitch
          label={t('dashboard.charts.axisGroup')}
          testId="tradeoff-axis"
          choices={TRAFFIC_AXES}
          current={choice}
          text={(c) => (isTraffic(c) ? t(`dashboard.charts.axes.${c}.label`) : c)}
          onChoose={setChoice}
        />
        <span className="muted small">{t('dashboard.charts.timeGroup')}</span>
        <AxisSwitch
          label={t('dashboard.charts.timeGroup')}
          testId="tradeoff-time"
          choices={LINK_PRESET_KEYS}
          current={choice}
          text={(c) => (isTraffic(c) ? c : t(`dashboard.linkPresets.${c}`))}
          onChoose={setChoice}
        />
      </div>
      {!traffic && (
        <p className="muted small" data-testid="tradeoff-lesson">
          {t('dashboard.linkLesson')}
        </p>
      )}
      <ResponsiveContainer width="100%" height={height}>
        <LineChart margin={{ top: 8, right: 16, bottom: 14, left: -6 }}>
          <CartesianGrid stroke={COLOURS.grid} />
          <XAxis
            type="number"
            dataKey="x"
            {...(traffic
              ? { scale: 'log' as const, domain: ['auto', 'auto'] as const, allowDataOverflow: true }
              : { domain: [0, 'auto'] as const })}
            {...AXIS_PROPS}
            tickFormatter={(v: number) => (traffic ? `${formatNumber(v)} MB` : `${formatNumber(v)} s`)}
            label={{ value: axisLabel, position: 'insideBottom', offset: -8, fontSize: 11, fill: COLOURS.axis }}
          />
          <YAxis type="number" dataKey="accuracy" domain={[0, 1]} {...AXIS_PROPS} tickFormatter={percentTick} />
          <Tooltip
            formatter={(v, name) => [formatPercent(Number(v)), name]}
            labelFormatter={(x) => xLabel(Number(x))}
          />
          {runs.map(({ run, colour, label }) => (
            <Line
              key={run.summary.runId}
              data={run.evals.points
                .map((p) => ({ x: xOf(p, choice), accuracy: p.accuracy }))
                .filter((p) => (traffic ? p.x > 0 : p.x >= 0))}
              dataKey="accuracy"
              name={label}
              stroke={colour}
              {...LINE_PROPS}
              dot={{ r: 2.5 }}
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </ChartCard>
  );
}
