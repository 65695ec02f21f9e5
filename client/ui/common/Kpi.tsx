/** The headline numbers both pages show: a label, a value tests read by data-testid, a hint. */
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { formatBytes } from './format';

/** One headline number; `value` is what tests read (data-value), `children` how it reads. */
export function Kpi({
  label,
  testId,
  value,
  hint,
  children,
}: {
  label: string;
  testId: string;
  value: number;
  hint?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="kpi">
      <span className="kpi__label">{label}</span>
      <span className="kpi__value" data-testid={testId} data-value={value}>
        {children}
      </span>
      {hint !== undefined && <span className="kpi__hint">{hint}</span>}
    </div>
  );
}

/** Bytes on the wire both ways: the total, then up and down (data-testids bytes-total, bytes-up, bytes-down). */
export function TrafficKpi({ label, up, down, extra }: { label: string; up: number; down: number; extra?: string }) {
  const { t } = useTranslation();
  const hint = (
    <>
      {t('common.up')}{' '}
      <span data-testid="bytes-up" data-value={up}>
        {formatBytes(up)}
      </span>
      , {t('common.down')}{' '}
      <span data-testid="bytes-down" data-value={down}>
        {formatBytes(down)}
      </span>
      {extra !== undefined && `, ${extra}`}
    </>
  );
  return (
    <Kpi label={label} testId="bytes-total" value={up + down} hint={hint}>
      {formatBytes(up + down)}
    </Kpi>
  );
}
