/** A titled card around one chart, with a one-line takeaway and an empty state until data arrives. */
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';

/** One series in a chart's legend. */
export interface LegendEntry {
  readonly name: string;
  readonly colour: string;
}

/** Props of ChartCard. */
export interface ChartCardProps {
  readonly title: string;
  /** The one sentence a reader should take away, shown under the title. */
  readonly caption?: ReactNode | undefined;
  readonly testId: string;
  /** Number of data points the chart draws; 0 shows the empty state instead. */
  readonly points: number;
  readonly emptyText?: string | undefined;
  /** A legend in HTML under the chart: unlike recharts' own, it is not measured again at every redraw. */
  readonly legend?: readonly LegendEntry[];
  /**
   * Figures the chart shows, as data-* attributes of the card (name → value), for a reader that cannot see the
   * drawing.
   */
  readonly data?: Readonly<Record<string, number>>;
  readonly children: ReactNode;
}

/** Card with a fixed-height chart area, so the page does not jump as data arrives. */
export function ChartCard({ title, caption, testId, points, emptyText, legend, data, children }: ChartCardProps) {
  const { t } = useTranslation();
  const attributes = Object.fromEntries(Object.entries(data ?? {}).map(([name, value]) => [`data-${name}`, value]));
  return (
    <section className="card chart-card" data-testid={testId} data-points={points} {...attributes}>
      <header className="chart-card__header">
        <h3>{title}</h3>
        {caption !== undefined && <p className="chart-card__caption">{caption}</p>}
      </header>
      <div className="chart-card__body">
        {points > 0 ? children : <p className="chart-card__empty">{emptyText ?? t('common.waitingFirstRounds')}</p>}
      </div>
      {points > 0 && legend !== undefined && (
        <ul className="chart-legend">
          {legend.map((entry) => (
            <li key={entry.name}>
              <span className="chart-legend__swatch" style={{ background: entry.colour }} aria-hidden="true" />
              {entry.name}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
