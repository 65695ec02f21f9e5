/** The swarm: every worker, its backend, run (a menu to move it), last round, bytes, server-measured latency, last seen, status, and remove. */
import { useStore } from 'zustand';
import { asRunId, type WorkerBackend } from '../../../core/protocol';
import { formatBytes, formatMs } from '../common/format';
import { dashboardStore } from '../store/dashboardStore';
import { useActions } from './actionsContext';
import { allWorkers, balancingMoves, orderedRuns } from './selectors';

/** "WebGPU" or "CPU", as the worker reported at join; its adapter or fallback reason goes in the cell's tooltip. */
function backendLabel(backend: WorkerBackend | null): string {
  if (backend === null) return '–';
  return backend.kind === 'webgpu' ? 'WebGPU' : 'CPU';
}

/** A server timestamp (ms since epoch) as this browser's time of day, e.g. "10:52:07". */
function formatClock(epochMs: number): string {
  return new Date(epochMs).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

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
              <th>Backend</th>
              <th>Run</th>
              <th className="num">Last round</th>
              <th className="num">Sent</th>
              <th className="num" title="Round trip measured by the server: round opened to gradient received">
                Latency
              </th>
              <th className="num">Last seen</th>
              <th>Status</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {workers.length === 0 && (
              <tr>
                <td colSpan={10} className="muted">
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
                  <td data-cell="backend" data-backend={worker.backend?.kind ?? 'unknown'} title={worker.backend?.detail}>
                    {backendLabel(worker.backend)}
                  </td>
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
                  <td className="num" data-cell="latency">
                    {worker.latencyMs === null ? '–' : formatMs(worker.latencyMs)}
                  </td>
                  <td className="num" data-cell="last-seen">
                    {worker.lastSeenAt === null ? '–' : formatClock(worker.lastSeenAt)}
                  </td>
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
