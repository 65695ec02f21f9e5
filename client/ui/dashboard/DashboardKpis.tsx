/** The class at a glance: rounds closed, best accuracy, megabytes sent, workers online. */
import { useTranslation } from 'react-i18next';
import { downlinkBytes, uplinkBytes } from '../../../core/traffic/frames';
import { formatPercent } from '../common/format';
import { Kpi, TrafficKpi } from '../common/Kpi';
import { allWorkers, latestAccuracy } from './selectors';
import { useOrderedRuns } from './useOrderedRuns';

/** Four headline numbers (data-testids round, test-accuracy, bytes-up). */
export function DashboardKpis() {
  const { t } = useTranslation();
  const runs = useOrderedRuns();
  const rounds = runs.reduce((n, r) => n + r.summary.version, 0);
  const accuracies = runs.map(latestAccuracy).filter((a): a is number => a !== null);
  const best = accuracies.length === 0 ? null : Math.max(...accuracies);
  const up = runs.reduce((n, r) => n + uplinkBytes(r.summary.traffic), 0);
  const down = runs.reduce((n, r) => n + downlinkBytes(r.summary.traffic), 0);
  const online = allWorkers(runs).filter((w) => w.connected).length;
  return (
    <section className="card kpis kpis--dashboard">
      <Kpi
        label={t('dashboard.kpis.rounds')}
        testId="round"
        value={rounds}
        hint={t('dashboard.kpis.overRuns', { count: runs.length })}
      >
        {rounds}
      </Kpi>
      <Kpi label={t('dashboard.kpis.best')} testId="test-accuracy" value={best ?? 0}>
        {formatPercent(best)}
      </Kpi>
      <TrafficKpi label={t('dashboard.kpis.wire')} up={up} down={down} />
      <Kpi label={t('dashboard.kpis.online')} testId="workers-online" value={online}>
        {online}
      </Kpi>
    </section>
  );
}
