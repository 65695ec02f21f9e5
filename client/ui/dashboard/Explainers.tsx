/** One or two sentences on each idea the controls expose, written for a class, not for a paper's reviewer. */

import { useTranslation } from 'react-i18next';

/** What each scheme and knob means (data-testid="explainers"). */
export function Explainers() {
  const { t } = useTranslation();
  return (
    <aside className="explainers" data-testid="explainers">
      <dl>
        <dt>{t('dashboard.explain.atomo')}</dt>
        <dd>{t('dashboard.explain.atomoText')}</dd>
        <dt>{t('dashboard.explain.budget')}</dt>
        <dd>{t('dashboard.explain.budgetText')}</dd>
        <dt>{t('dashboard.explain.qsgd')}</dt>
        <dd>{t('dashboard.explain.qsgdText')}</dd>
        <dt>{t('dashboard.explain.terngrad')}</dt>
        <dd>{t('dashboard.explain.terngradText')}</dd>
        <dt>{t('dashboard.explain.float32')}</dt>
        <dd>{t('dashboard.explain.float32Text')}</dd>
      </dl>
    </aside>
  );
}
