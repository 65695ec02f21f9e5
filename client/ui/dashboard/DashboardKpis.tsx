/** The class at a glance: rounds closed, best accuracy, megabytes sent, workers online. */
import { useTranslation } from 'react-i18next';
import { useStore } from 'zustand';
import { downlinkBytes, uplinkBytes } from '../../../core/traffic/frames';
import { formatBytes, formatPercent } from '../common/format';
import { dashboardStore } from '../store/dashboardStore';
import { useThrottledStore } from '../store/useThrottled';
import type { DashboardState } from '../store/dashboardStore';
import { allWorkers, latestAccuracy, orderedRuns } from './selectors';

const selectRuns = (s: DashboardState) => s.runs;

/** Four headline numbers (data-testids round, test-accuracy, bytes-up). */
export function DashboardKpis() {
  const { t } = useTranslation();
  const runsById = useThrottledStore(dashboardStore, selectRuns);
  const runIds = useStore(dashboardStore, (s) => s.runIds);
  const runs = orderedRuns({ runIds, runs: runsById });
  const rounds = runs.reduce((n, r) => n + r.summary.version, 0);
  const accuracies = runs.map(latestAccuracy).filter((a): a is number => a !== null);
  const best = accuracies.length === 0 ? null : Math.max(...accuracies);
  const up = runs.reduce((n, r) => n + uplinkBytes(r.summary.traffic), 0);
  const down = runs.reduce((n, r) => n + downlinkBytes(r.summary.traffic), 0);
  const online = allWorkers(runs).filter((w) => w.connected).length;
  return (
    <section className="card kpis kpis--dashboard">
      <div className="kpi">
        <span className="kpi__label">{t('dashboard.kpis.rounds')}</span>
        <span className="kpi__value" data-testid="round" data-value={rounds}>
          {rounds}
        </span>
        <span className="kpi__hint">{t('dashboard.kpis.overRuns', { count: runs.length })}</span>
      </div>
      <div className="kpi">
        <span className="kpi__label">{t('dashboard.kpis.best')}</span>
        <span className="kpi__value" data-testid="test-accuracy" data-value={best ?? 0}>
          {formatPercent(best)}
        </span>
      </div>
      <div className="kpi">
        <span className="kpi__label">{t('dashboard.kpis.wire')}</span>
        <span className="kpi__value" data-testid="bytes-total" data-value={up + down}>
          {formatBytes(up + down)}
        </span>
        <span className="kpi__hint">
          {t('dashboard.kpis.up')}{' '}
          <span data-testid="bytes-up" data-value={up}>
            {formatBytes(up)}
          </span>
          , {t('dashboard.kpis.down')}{' '}
          <span data-testid="bytes-down" data-value={down}>
            {formatBytes(down)}
          </span>
        </span>
      </div>
      <div className="kpi">
        <span className="kpi__label">{t('dashboard.kpis.online')}</span>
        <span className="kpi__value" data-testid="workers-online" data-value={online}>
          {online}
        </span>
      </div>
    </section>
  );
}
