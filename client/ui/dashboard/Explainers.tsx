/** One or two sentences on each idea the controls expose, written for a class, not for a paper's reviewer. */

import { Fragment } from 'react';
import { useTranslation } from 'react-i18next';

/** The terms explained, in order; each has its text under the key `<term>Text`. */
const TERMS = ['atomo', 'budget', 'qsgd', 'terngrad', 'float32'] as const;

/** What each scheme and knob means (data-testid="explainers"). */
export function Explainers() {
  const { t } = useTranslation();
  return (
    <aside className="explainers" data-testid="explainers">
      <dl>
        {TERMS.map((term) => (
          <Fragment key={term}>
            <dt>{t(`dashboard.explain.${term}`)}</dt>
            <dd>{t(`dashboard.explain.${term}Text`)}</dd>
          </Fragment>
        ))}
      </dl>
    </aside>
  );
}
