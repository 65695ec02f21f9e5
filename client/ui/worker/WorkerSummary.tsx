/** The worker's identity card: who it is, which run, which scheme, and the pause / take-part switch. */
import { useStore } from 'zustand';
import type { WorkerControls } from '../../session/workerSession';
import { downlinkBytes, uplinkBytes } from '../../../core/traffic/frames';
import { describeCompression, formatBytes, formatPercent } from '../common/format';
import { workerStore } from '../store/workerStore';
import { BackendBadge } from './BackendBadge';
import { PhaseIndicator } from './PhaseIndicator';

/** Props of WorkerSummary. */
export interface WorkerSummaryProps {
  readonly controls: WorkerControls | null;
}

/** Identity, run, backend, phase and the three headline numbers. */
export function WorkerSummary({ controls }: WorkerSummaryProps) {
  const workerId = useStore(workerStore, (s) => s.workerId);
  const runId = useStore(workerStore, (s) => s.runId);
  const config = useStore(workerStore, (s) => s.config);
  const shard = useStore(workerStore, (s) => s.shard);
  const phase = useStore(workerStore, (s) => s.phase);
  const round = useStore(workerStore, (s) => s.round);
  const accuracy = useStore(workerStore, (s) => s.testAccuracy);
  const traffic = useStore(workerStore, (s) => s.traffic);
  const up = uplinkBytes(traffic);
  const down = downlinkBytes(traffic);
  const roundsSent = useStore(workerStore, (s) => s.roundsSent);
  const notice = useStore(workerStore, (s) => s.notice);
  const stopped = phase === 'paused' || phase === 'removed';

  return (
    <section className="card summary">
      <div className="summary__identity">
        <div>
          <p className="eyebrow">This tab is worker</p>
          <p className="summary__id" data-testid="worker-id" data-value={workerId ?? ''}>
            {workerId === null ? '…' : `#${workerId}`}
          </p>
        </div>
        <dl className="facts">
          <div>
            <dt>Run</dt>
            <dd data-testid="run-name">{config === null ? '…' : `${config.name} (${runId})`}</dd>
          </div>
          <div>
            <dt>Compression</dt>
            <dd data-testid="scheme">{config === null ? '…' : describeCompression(config)}</dd>
          </div>
          <div>
            <dt>Data</dt>
            <dd>{config === null || shard === null ? '…' : `shard ${shard + 1} of ${config.shards}, ${config.model.toUpperCase()}, batch ${config.batchSize}`}</dd>
          </div>
        </dl>
        <button
          type="button"
          className={`button ${stopped ? 'button--primary' : ''}`}
          disabled={controls === null || phase === 'starting'}
          onClick={() => (stopped ? controls?.resume() : controls?.pause())}
        >
          {stopped ? (phase === 'removed' ? 'Join again' : 'Take part again') : 'Pause this tab'}
        </button>
      </div>
      <BackendBadge />
      <PhaseIndicator />
      <div className="kpis">
        <div className="kpi">
          <span className="kpi__label">Round</span>
          <span className="kpi__value" data-testid="round" data-value={round ?? 0}>
            {round ?? '–'}
          </span>
        </div>
        <div className="kpi">
          <span className="kpi__label">Test accuracy</span>
          <span className="kpi__value" data-testid="test-accuracy" data-value={accuracy ?? 0}>
            {formatPercent(accuracy)}
          </span>
        </div>
        <div className="kpi">
          <span className="kpi__label">This tab on the wire</span>
          <span className="kpi__value" data-testid="bytes-total" data-value={up + down}>
            {formatBytes(up + down)}
          </span>
          <span className="kpi__hint">
            up <span data-testid="bytes-up" data-value={up}>{formatBytes(up)}</span>, down{' '}
            <span data-testid="bytes-down" data-value={down}>{formatBytes(down)}</span>, {roundsSent} gradients
          </span>
        </div>
      </div>
      {notice !== null && (
        <p className="notice" role="status">
          {notice}
        </p>
      )}
    </section>
  );
}
