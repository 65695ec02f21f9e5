/** The worker's identity card: who it is, which run, which scheme, and the pause / take-part switch. */
import { useTranslation } from 'react-i18next';
import { useStore } from 'zustand';
import { translate } from '../../i18n';
import type { WorkerControls } from '../../session/workerSession';
import { downlinkBytes, uplinkBytes } from '../../../core/traffic/frames';
import {
  describeCompression,
  describeDeliveries,
  describeDownlink,
  describeDownlinkChoice,
  formatBytes,
  formatNumber,
  formatPercent,
} from '../common/format';
import { Kpi, TrafficKpi } from '../common/Kpi';
import { workerStore } from '../store/workerStore';
import { BackendBadge } from './BackendBadge';
import { PhaseIndicator } from './PhaseIndicator';

/** Props of WorkerSummary. */
export interface WorkerSummaryProps {
  readonly controls: WorkerControls | null;
}

/** Identity, run, backend, phase and the three headline numbers. */
export function WorkerSummary({ controls }: WorkerSummaryProps) {
  const { t } = useTranslation();
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
  const downlink = useStore(workerStore, (s) => s.downlink);
  const uplinkVariance = useStore(workerStore, (s) => s.history.points.at(-1)?.closedRel ?? null);
  const stopped = phase === 'paused' || phase === 'removed';

  return (
    <section className="card summary">
      <div className="summary__identity">
        <div>
          <p className="eyebrow">{t('worker.thisTabIs')}</p>
          <p className="summary__id" data-testid="worker-id" data-value={workerId ?? ''}>
            {workerId === null ? '…' : `#${workerId}`}
          </p>
        </div>
        <dl className="facts">
          <div>
            <dt>{t('worker.run')}</dt>
            <dd data-testid="run-name" translate="no">
              {config === null ? '…' : config.name === runId ? config.name : `${config.name} (${runId})`}
            </dd>
          </div>
          <div>
            <dt>{t('worker.compression')}</dt>
            <dd data-testid="scheme">{config === null ? '…' : describeCompression(config)}</dd>
          </div>
          <div>
            <dt>{t('worker.downlink')}</dt>
            <dd
              data-testid="downlink"
              data-delivery={downlink?.delivery ?? ''}
              data-verified={downlink?.verified ?? 0}
              data-resyncs={downlink?.resyncs ?? 0}
            >
              {config === null ? '…' : describeDownlink(config)}
              {downlink === null ? null : (
                <div className="muted">
                  {t(`worker.delivery.${downlink.delivery}`, { bytes: formatBytes(downlink.bytes) })}
                  {downlink.verified > 0 ? ` · ${t('worker.verified', { count: downlink.verified })}` : ''}
                  {downlink.resyncs > 0 ? ` · ${t('worker.resyncs', { count: downlink.resyncs })}` : ''}
                </div>
              )}
              {downlink === null || downlink.choice === null ? null : (
                <div className="muted" data-testid="downlink-choice">
                  {describeDeliveries(downlink.choice.version, downlink.choice.downlink)} ·{' '}
                  {describeDownlinkChoice(downlink.choice.choice)}
                </div>
              )}
              {downlink === null || downlink.closedRel === null ? null : (
                <div className="muted" data-testid="downlink-variance" data-value={downlink.closedRel}>
                  {t('worker.downlinkVariance', {
                    down: formatNumber(downlink.closedRel),
                    up: uplinkVariance === null ? '–' : formatNumber(uplinkVariance),
                  })}
                </div>
              )}
            </dd>
          </div>
          <div>
            <dt>{t('worker.data')}</dt>
            <dd>
              {config === null || shard === null
                ? '…'
                : t('worker.dataValue', {
                    shard: shard + 1,
                    shards: config.shards,
                    model: config.model.toUpperCase(),
                    batch: config.batchSize,
                  })}
            </dd>
          </div>
        </dl>
        <button
          type="button"
          className={`button ${stopped ? 'button--primary' : ''}`}
          disabled={controls === null || phase === 'starting'}
          onClick={() => (stopped ? controls?.resume() : controls?.pause())}
        >
          {stopped ? (phase === 'removed' ? t('worker.joinAgain') : t('worker.takePartAgain')) : t('worker.pause')}
        </button>
      </div>
      <BackendBadge />
      <PhaseIndicator />
      <div className="kpis">
        <Kpi label={t('worker.kpiRound')} testId="round" value={round ?? 0}>
          {round ?? '–'}
        </Kpi>
        <Kpi label={t('worker.kpiAccuracy')} testId="test-accuracy" value={accuracy ?? 0}>
          {formatPercent(accuracy)}
        </Kpi>
        <TrafficKpi
          label={t('worker.kpiWire')}
          up={up}
          down={down}
          extra={t('worker.gradients', { count: roundsSent })}
        />
      </div>
      {notice !== null && (
        <p className="notice" role="status">
          {translate(notice)}
        </p>
      )}
    </section>
  );
}
