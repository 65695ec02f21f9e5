/** The dashboard's table cards: a header (title, hint, controls) above a table that scrolls sideways on a narrow screen. */
import type { ReactNode } from 'react';

/** A card with `header` above a scrolling `<table>` (data-testid `testId`) holding `children` (thead and tbody). */
export function TableCard({ header, testId, children }: { header: ReactNode; testId: string; children: ReactNode }) {
  return (
    <section className="card table-card">
      <header className="table-card__header">{header}</header>
      <div className="table-scroll">
        <table className="table" data-testid={testId}>
          {children}
        </table>
      </div>
    </section>
  );
}
