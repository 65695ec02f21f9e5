/**
 * The dashboard's table cards: a header (title, hint, controls) above a table that scrolls sideways on a narrow screen.
 */
import type { ReactNode } from 'react';

/**
 * A card headed by `title`, `hint` and `controls`, above a scrolling `<table>` (data-testid `testId`) holding
 * `children` (thead and tbody).
 */
export function TableCard({
  title,
  hint,
  controls,
  testId,
  children,
}: {
  title: string;
  hint?: string;
  controls?: ReactNode;
  testId: string;
  children: ReactNode;
}) {
  return (
    <section className="card table-card">
      <header className="table-card__header">
        <h2>{title}</h2>
        {hint !== undefined && <p className="muted">{hint}</p>}
        {controls}
      </header>
      <div className="table-scroll">
        <table className="table" data-testid={testId}>
          {children}
        </table>
      </div>
    </section>
  );
}
