/**
 * The swarm: every worker, its backend (and the round times that chose it), run (a menu to move it), last round, bytes,
 * server-measured latency, last seen, status, and remove.
 */
import { useTranslation } from 'react-i18next';
import { asRunId, type WorkerAttack, type WorkerBackend } from '../../../core/protocol';
import { formatBytes, formatClock, formatMs } from '../common/format';
import { TableHead } from '../common/TableHead';
import { dashboardStore, type DashboardState } from '../store/dashboardStore';
import { useThrottledStore } from '../store/useThrottled';
import { useActions } from './actionsContext';
import { allWorkers, balancingMoves } from './selectors';
import { RunOptions } from './RunOptions';
import { TableCard } from './TableCard';
import { useOrderedRuns } from './useOrderedRuns';

const selectLastRounds = (s: DashboardState) => s.lastRounds;

/** The classroom attacks the dashboard offers: a sign flip ×10 and a scale ×100. */
const ATTACKS = {
  none: null,
  flip: { kind: 'sign-flip', factor: 10 },
  scale: { kind: 'scale', factor: 100 },
} as const satisfies Record<string, WorkerAttack | null>;
type AttackChoice = keyof typeof ATTACKS;

function attackChoice(attack: WorkerAttack | null): AttackChoice {
  if (attack === null) return 'none';
  return attack.kind === 'sign-flip' ? 'flip' : 'scale';
}

function attackLabel(attack: WorkerAttack): 'dashboard.workers.attackFlip' | 'dashboard.workers.attackScale' {
  return attack.kind === 'sign-flip' ? 'dashboard.workers.attackFlip' : 'dashboard.workers.attackScale';
}

/** "WebGPU" or "CPU", as the worker reported at join; its adapter or fallback reason goes in the cell's tooltip. */
function backendLabel(backend: WorkerBackend | null): string {
  if (backend === null) return '–';
  return backend.kind === 'webgpu' ? 'WebGPU' : 'CPU';
}

const COLUMNS = [
  'id',
  'device',
  'backend',
  'calibration',
  'run',
  'lastRound',
  'sent',
  'latency',
  'lastSeen',
  'status',
  'attack',
  'remove',
] as const;
const NUMERIC: readonly (typeof COLUMNS)[number][] = ['id', 'calibration', 'lastRound', 'sent', 'latency', 'lastSeen'];

/** The workers table (data-testid="workers-table"; rows carry data-worker-id). */
export function WorkersTable() {
  const { t } = useTranslation();
  const actions = useActions();
  const runs = useOrderedRuns();
  const lastRounds = useThrottledStore(dashboardStore, selectLastRounds);
  const workers = allWorkers(runs);
  const balance = async () => {
    if (actions === null) return;
    for (const move of balancingMoves(runs)) await actions.moveWorker(move.workerId, move.runId);
  };
  return (
    <TableCard
      testId="workers-table"
      title={t('dashboard.workers.title')}
      hint={t('dashboard.workers.hint')}
      controls={
        actions !== null && (
          <button type="button" className="button button--small" onClick={() => void balance()}>
            {t('dashboard.workers.balance')}
          </button>
        )
      }
    >
      <TableHead
        columns={COLUMNS}
        numeric={NUMERIC}
        titles={{ latency: t('dashboard.workers.latencyTitle') }}
        // The last column holds the remove button and has no heading.
        label={(column) => (column === 'remove' ? '' : t(`dashboard.workers.${column}`))}
      />
      <tbody>
        {workers.length === 0 && (
          <tr>
            <td colSpan={12} className="muted">
              {t('dashboard.workers.none')}
            </td>
          </tr>
        )}
        {workers.map((worker) => {
          const last = lastRounds[worker.workerId];
          const status = !worker.connected
            ? 'offline'
            : worker.roundState === 'training'
              ? 'training'
              : worker.roundState === 'sent'
                ? 'sent'
                : 'online';
          return (
            <tr key={worker.workerId} data-worker-id={worker.workerId} data-run-id={worker.runId}>
              <td className="num mono">#{worker.workerId}</td>
              {worker.simulated ? (
                <td data-cell="device" data-simulated="true" title={t('dashboard.workers.simulatedTitle')}>
                  {t('dashboard.workers.simulated', { id: worker.workerId })}
                </td>
              ) : (
                <td data-cell="device" translate="no">
                  {worker.name || '–'}
                </td>
              )}
              {/* The tooltip is the worker's own report (adapter, or why no GPU), in the worker's language. */}
              <td
                data-cell="backend"
                data-backend={worker.backend?.kind ?? 'unknown'}
                title={worker.backend?.detail}
                translate="no"
              >
                {backendLabel(worker.backend)}
              </td>
              <td className="num" data-cell="calibration">
                {worker.backend?.calibration === undefined
                  ? '–'
                  : t('dashboard.workers.calibrationValue', {
                      gpu: formatMs(worker.backend.calibration.webgpuMs),
                      cpu: formatMs(worker.backend.calibration.cpuMs),
                    })}
              </td>
              <td>
                {actions === null ? (
                  <span translate="no">
                    {runs.find((run) => run.summary.runId === worker.runId)?.summary.config.name ?? worker.runId}
                  </span>
                ) : (
                  <select
                    className="select select--small"
                    aria-label={t('dashboard.workers.runOf', { id: worker.workerId })}
                    translate="no"
                    value={worker.runId}
                    onChange={(event) => void actions.moveWorker(worker.workerId, asRunId(event.target.value))}
                  >
                    <RunOptions runs={runs} />
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
                <span className={`pill pill--${status}`}>{t(`dashboard.workers.statuses.${status}`)}</span>
              </td>
              <td data-cell="attack">
                {actions === null ? (
                  worker.attack === null ? (
                    '–'
                  ) : (
                    t(attackLabel(worker.attack))
                  )
                ) : (
                  <select
                    aria-label={t('dashboard.workers.attackOf', { id: worker.workerId })}
                    value={attackChoice(worker.attack)}
                    onChange={(event) =>
                      void actions.setAttack(worker.workerId, ATTACKS[event.target.value as AttackChoice])
                    }
                  >
                    <option value="none">{t('dashboard.workers.attackNone')}</option>
                    <option value="flip">{t('dashboard.workers.attackFlip')}</option>
                    <option value="scale">{t('dashboard.workers.attackScale')}</option>
                  </select>
                )}
              </td>
              <td>
                {actions !== null && (
                  <button
                    type="button"
                    className="button button--small button--danger"
                    onClick={() => void actions.removeWorker(worker.workerId)}
                  >
                    {t('dashboard.workers.remove')}
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </tbody>
    </TableCard>
  );
}
