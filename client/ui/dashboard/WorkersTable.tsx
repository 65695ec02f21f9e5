/** The swarm: every worker, its run (a menu to move it), backend, last round, bytes, latency, status, and remove. */
import { useStore } from 'zustand';
import { asRunId } from '../../../core/protocol';
import { formatBytes, formatMs } from '../common/format';
import { dashboardStore } from '../store/dashboardStore';
import { useActions } from './actionsContext';
import { allWorkers, balancingMoves, orderedRuns } from './selectors';

/** The workers table (data-testid="workers-table"; rows carry data-worker-id). */
export function WorkersTable() {
  const actions = useActions();
  const runIds = useStore(dashboardStore, (s) => s.runIds);
  const runsById = useStore(dashboardStore, (s) => s.runs);
  const lastRounds = useStore(dashboardStore, (s) => s.lastRounds);
  const runs = orderedRuns({ runIds, runs: runsById });
  const workers = allWorkers(runs);
  const balance = async () => {
    if (actions === null) return;
    for (const move of balancingMoves(runs)) await actions.moveWorker(move.workerId, move.runId);
  };
  return (
    <section className="card table-card">
      <header className="table-card__header">
        <h2>Workers</h2>
        <p className="muted">Move a worker with its run menu, or spread everyone evenly over the running runs.</p>
        {actions !== null && (
          <button type="button" className="button button--small" onClick={() => void balance()}>
            Balance workers
          </button>
        )}
      </header>
      <div className="table-scroll">
        <table className="table" data-testid="workers-table">
          <thead>
            <tr>
              <th className="num">Id</th>
              <th>Device</th>
              <th>Run</th>
              <th className="num">Last round</th>
              <th className="num">Sent</th>
              <th className="num">Compute</th>
              <th>Status</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {workers.length === 0 && (
              <tr>
                <td colSpan={8} className="muted">
                  No workers yet: open the join link in a few tabs.
                </td>
              </tr>
            )}
            {workers.map((worker) => {
              const last = lastRounds[worker.workerId];
              const status = !worker.connected ? 'offline' : worker.roundState === 'training' ? 'training' : worker.roundState === 'sent' ? 'sent' : 'online';
              return (
                <tr key={worker.workerId} data-worker-id={worker.workerId} data-run-id={worker.runId}>
                  <td className="num mono">#{worker.workerId}</td>
                  <td>{worker.name || '–'}</td>
                  <td>
                    {actions === null ? (
                      runsById[worker.runId]?.summary.config.name ?? worker.runId
                    ) : (
                      <select
                        className="select select--small"
                        aria-label={`Run of worker ${worker.workerId}`}
                        value={worker.runId}
                        onChange={(event) => void actions.moveWorker(worker.workerId, asRunId(event.target.value))}
                      >
                        {runs.map((run) => (
                          <option key={run.summary.runId} value={run.summary.runId}>
                            {run.summary.config.name}
                          </option>
                        ))}
                      </select>
                    )}
                  </td>
                  <td className="num">{last === undefined ? '–' : last.round}</td>
                  <td className="num">{formatBytes(worker.bytesUp)}</td>
                  <td className="num">{last === undefined ? '–' : formatMs(last.computeMs)}</td>
                  <td>
                    <span className={`pill pill--${status}`}>{status}</span>
                  </td>
                  <td>
                    {actions !== null && (
                      <button type="button" className="button button--small button--danger" onClick={() => void actions.removeWorker(worker.workerId)}>
                        Remove
                      </button>
                    )}
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
