/** Every run: what it compresses, where it stands, and the teacher's buttons (start, pause, reset, delete, export). */
import { useStore } from 'zustand';
import type { RunId, RunStatus } from '../../../core/protocol';
import { describeCompression, formatBytes, formatPercent } from '../common/format';
import { runColor } from '../common/palette';
import { dashboardStore, type RunView } from '../store/dashboardStore';
import { useActions } from './actionsContext';
import { latestAccuracy, orderedRuns } from './selectors';

const STATUS_TEXT: Readonly<Record<RunStatus, string>> = {
  created: 'ready',
  running: 'running',
  paused: 'paused',
  finished: 'finished',
};

function RunActions({ run }: { readonly run: RunView }) {
  const actions = useActions();
  const { runId, status } = run.summary;
  if (actions === null) return <span className="muted">view only</span>;
  const go = (action: (id: RunId) => Promise<unknown>) => () => void action(runId);
  return (
    <div className="row-actions">
      {status === 'created' && (
        <button type="button" className="button button--small button--primary" onClick={go(actions.startRun)}>
          Start
        </button>
      )}
      {status === 'running' && (
        <button type="button" className="button button--small" onClick={go(actions.pauseRun)}>
          Pause
        </button>
      )}
      {(status === 'paused' || status === 'finished') && (
        <button type="button" className="button button--small button--primary" onClick={go(actions.resumeRun)}>
          Resume
        </button>
      )}
      <button type="button" className="button button--small" onClick={go(actions.resetRun)}>
        Reset
      </button>
      <button type="button" className="button button--small button--danger" onClick={go(actions.deleteRun)} aria-label={`Delete ${run.summary.config.name}`}>
        Delete
      </button>
    </div>
  );
}

/** The runs table (data-testid="runs-table"; one row per run, data-run-id). */
export function RunsTable() {
  const runIds = useStore(dashboardStore, (s) => s.runIds);
  const runsById = useStore(dashboardStore, (s) => s.runs);
  const runs = orderedRuns({ runIds, runs: runsById });
  return (
    <section className="card table-card">
      <header className="table-card__header">
        <h2>Runs</h2>
        <p className="muted">Each run is one experiment with its own model. Export a run's whole history as CSV or JSON.</p>
      </header>
      <div className="table-scroll">
        <table className="table" data-testid="runs-table">
          <thead>
            <tr>
              <th>Run</th>
              <th>Compression</th>
              <th>Status</th>
              <th className="num">Round</th>
              <th className="num">Workers</th>
              <th className="num">Accuracy</th>
              <th className="num">Upstream</th>
              <th>Export</th>
              <th>Actions</th>
            </tr>
          </thead>
          <tbody>
            {runs.map((run, i) => {
              const { summary } = run;
              const online = summary.workers.filter((w) => w.connected).length;
              return (
                <tr key={summary.runId} data-run-id={summary.runId} data-status={summary.status} data-scheme={summary.config.scheme}>
                  <td>
                    <span className="legend__swatch" style={{ background: runColor(i) }} />
                    <strong>{summary.config.name}</strong> <span className="muted mono">{summary.runId}</span>
                  </td>
                  <td>{describeCompression(summary.config)}</td>
                  <td>
                    <span className={`pill pill--${summary.status}`}>{STATUS_TEXT[summary.status]}</span>
                    {summary.fault === null ? null : (
                      <div className="run-fault" role="alert" data-testid="run-fault">
                        Paused by the server: {summary.fault}
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
                  <td className="num">{formatPercent(latestAccuracy(run))}</td>
                  <td className="num">{formatBytes(summary.bytesUp)}</td>
                  <td className="export-links">
                    <a href={`/api/runs/${encodeURIComponent(summary.runId)}/metrics.csv`} download>
                      CSV
                    </a>
                    <a href={`/api/runs/${encodeURIComponent(summary.runId)}/metrics.json`} target="_blank" rel="noreferrer">
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
        </table>
      </div>
    </section>
  );
}
