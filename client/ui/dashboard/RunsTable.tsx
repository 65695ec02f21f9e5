/**
 * Every run: what it compresses, where it stands, and the teacher's buttons (start, pause, reset, delete, a simulated
 * worker, export).
 */
import { useTranslation } from 'react-i18next';
import type { RunId } from '../../../core/protocol';
import {
  describeAggregation,
  describeCompression,
  describeDeliveries,
  describeDownlink,
  describeDownlinkChoice,
  formatBytes,
  formatPercent,
} from '../common/format';
import { runColour } from '../common/palette';
import { TableHead } from '../common/TableHead';
import type { RunView } from '../store/dashboardStore';
import { useActions } from './actionsContext';
import { latestAccuracy } from './selectors';
import { TableCard } from './TableCard';
import { useOrderedRuns } from './useOrderedRuns';

function RunActions({ run }: { readonly run: RunView }) {
  const { t } = useTranslation();
  const actions = useActions();
  const { runId, status, config } = run.summary;
  if (actions === null) return <span className="muted">{t('common.viewOnly')}</span>;
  /** One button acting on this run; `label` names the run for screen readers where the text alone would not. */
  const button = (text: string, action: (id: RunId) => Promise<unknown>, variant = '', label?: string) => (
    <button
      type="button"
      className={`button button--small ${variant}`.trim()}
      onClick={() => void action(runId)}
      aria-label={label}
    >
      {text}
    </button>
  );
  return (
    <div className="row-actions">
      {status === 'created' && button(t('dashboard.runs.start'), actions.startRun, 'button--primary')}
      {status === 'running' && button(t('dashboard.runs.pause'), actions.pauseRun)}
      {(status === 'paused' || status === 'finished') &&
        button(t('dashboard.runs.resume'), actions.resumeRun, 'button--primary')}
      {button(t('dashboard.runs.reset'), actions.resetRun)}
      {button(
        t('dashboard.runs.simulate'),
        actions.addSimulatedWorker,
        '',
        t('dashboard.runs.simulateLabel', { name: config.name }),
      )}
      {button(
        t('dashboard.runs.delete'),
        actions.deleteRun,
        'button--danger',
        t('dashboard.runs.deleteLabel', { name: config.name }),
      )}
    </div>
  );
}

const COLUMNS = [
  'run',
  'compression',
  'status',
  'round',
  'workers',
  'accuracy',
  'upstream',
  'downstream',
  'export',
  'actions',
] as const;
const NUMERIC: readonly (typeof COLUMNS)[number][] = ['round', 'workers', 'accuracy', 'upstream', 'downstream'];

/** The runs table (data-testid="runs-table"; one row per run, data-run-id). */
export function RunsTable() {
  const { t } = useTranslation();
  const runs = useOrderedRuns();
  return (
    <TableCard testId="runs-table" title={t('dashboard.runs.title')} hint={t('dashboard.runs.hint')}>
      <TableHead columns={COLUMNS} numeric={NUMERIC} label={(column) => t(`dashboard.runs.${column}`)} />
      <tbody>
        {runs.map((run, i) => {
          const { summary } = run;
          const online = summary.workers.filter((w) => w.connected).length;
          return (
            <tr
              key={summary.runId}
              data-run-id={summary.runId}
              data-status={summary.status}
              data-scheme={summary.config.scheme}
            >
              <td>
                <span className="legend__swatch" style={{ background: runColour(i) }} />
                <strong translate="no">{summary.config.name}</strong>{' '}
                <span className="muted mono" translate="no">
                  {summary.runId}
                </span>
              </td>
              <td>
                {describeCompression(summary.config)}
                <div className="muted" data-testid="aggregation">
                  {describeAggregation(summary.config.aggregation)}
                </div>
                <div className="muted" data-testid="downlink">
                  {describeDownlink(summary.config)}
                </div>
                {run.lastDownlink?.downlink.choice === undefined ? null : (
                  <div className="muted" data-testid="downlink-choice">
                    {describeDeliveries(run.lastDownlink.version, run.lastDownlink.downlink)} ·{' '}
                    {describeDownlinkChoice(run.lastDownlink.downlink.choice)}
                  </div>
                )}
              </td>
              <td>
                <span className={`pill pill--${summary.status}`}>{t(`dashboard.runs.statuses.${summary.status}`)}</span>
                {summary.fault === null ? null : (
                  <div className="run-fault" role="alert" data-testid="run-fault">
                    {t('dashboard.runs.fault', { detail: summary.fault })}
                  </div>
                )}
              </td>
              <td className="num" data-cell="round">
                {summary.version}
              </td>
              <td className="num">
                {online}
                {summary.workers.length > online ? <span className="muted"> / {summary.workers.length}</span> : null}
              </td>
              <td className="num" data-cell="accuracy">
                {formatPercent(latestAccuracy(run))}
              </td>
              <td className="num">{formatBytes(summary.bytesUp)}</td>
              <td className="num" data-cell="downstream" data-value={summary.bytesDown}>
                {formatBytes(summary.bytesDown)}
              </td>
              <td className="export-links">
                <a href={`/api/runs/${encodeURIComponent(summary.runId)}/metrics.csv`} download>
                  CSV
                </a>
                <a
                  href={`/api/runs/${encodeURIComponent(summary.runId)}/metrics.json`}
                  target="_blank"
                  rel="noreferrer"
                >
                  JSON
                </a>
              </td>
              <td>
                <RunActions run={run} />
              </td>
            </tr>
          );
        })}
      </tbody>
    </TableCard>
  );
}
