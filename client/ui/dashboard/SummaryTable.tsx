/** Rounds and megabytes each run needed to reach a test accuracy the teacher picks. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { formatNumber, formatPercent } from '../common/format';
import { runColour } from '../common/palette';
import { TableHead } from '../common/TableHead';
import type { RunView } from '../store/dashboardStore';
import { TableCard } from './TableCard';
import { useOrderedRuns } from './useOrderedRuns';

const TARGETS = [0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.95];

/** The first evaluation at or above `target`: its round and cumulative MB. */
function reached(run: RunView, target: number): { round: number; mb: number } | null {
  const hit = run.evals.points.find((p) => p.accuracy >= target);
  return hit === undefined ? null : { round: hit.round, mb: hit.totalMB };
}

/** The summary table with its accuracy menu (data-testid="summary-table"). */
export function SummaryTable() {
  const { t } = useTranslation();
  const [target, setTarget] = useState(0.8);
  const runs = useOrderedRuns();
  const rows = runs.map((run, i) => ({ run, colour: runColour(i), hit: reached(run, target) }));
  const fewest = Math.min(...rows.map((r) => r.hit?.mb ?? Infinity));
  return (
    <TableCard
      testId="summary-table"
      title={t('dashboard.summary.title')}
      controls={
        <label className="inline-field">
          {t('dashboard.summary.target')}{' '}
          <select
            className="select select--small"
            value={target}
            onChange={(e) => setTarget(Number(e.target.value))}
            aria-label={t('dashboard.summary.target')}
          >
            {TARGETS.map((value) => (
              <option key={value} value={value}>
                {formatPercent(value).replace(/[.,]0(?=\D*$)/, '')}
              </option>
            ))}
          </select>
        </label>
      }
    >
      <TableHead
        columns={['run', 'rounds', 'mb']}
        numeric={['rounds', 'mb']}
        label={(column) => t(`dashboard.summary.${column}`)}
      />
      <tbody>
        {rows.map(({ run, colour, hit }) => (
          <tr key={run.summary.runId} className={hit !== null && hit.mb === fewest ? 'row--best' : ''}>
            <td>
              <span className="legend__swatch" style={{ background: colour }} />
              <span translate="no">{run.summary.config.name}</span>
            </td>
            <td className="num">{hit === null ? <span className="muted">{t('common.notYet')}</span> : hit.round}</td>
            <td className="num">{hit === null ? <span className="muted">–</span> : formatNumber(hit.mb)}</td>
          </tr>
        ))}
      </tbody>
    </TableCard>
  );
}
