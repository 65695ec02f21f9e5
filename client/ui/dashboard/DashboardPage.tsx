/** The teacher's page (`/dashboard`): join code, live overlay charts, runs, workers and the race. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { useStore } from 'zustand';
import { translate } from '../../i18n';
import { connectDashboard, type DashboardActions } from '../../net/dashboardChannel';
import { LanguageSwitcher } from '../common/LanguageSwitcher';
import { dashboardStore } from '../store/dashboardStore';
import { ActionsContext } from './actionsContext';
import { takeAdminToken } from './adminToken';
import { CreateRunForm } from './CreateRunForm';
import { DashboardKpis } from './DashboardKpis';
import { JoinCard } from './JoinCard';
import { LayerChoices } from './LayerChoices';
import { OverlayCharts } from './OverlayCharts';
import { RaceCard } from './RaceCard';
import { RunsTable } from './RunsTable';
import { SummaryTable } from './SummaryTable';
import { WorkersTable } from './WorkersTable';

let connection: { actions: DashboardActions; teacher: boolean } | null = null;
/** One dashboard socket per page load (React's development double render must not open two). */
function connectOnce(): { actions: DashboardActions; teacher: boolean } {
  if (connection === null) {
    const token = takeAdminToken();
    connection = { actions: connectDashboard(dashboardStore, token), teacher: token !== null };
  }
  return connection;
}

function AuthBanner() {
  const { t } = useTranslation();
  const auth = useStore(dashboardStore, (s) => s.auth);
  const link = useStore(dashboardStore, (s) => s.link);
  const notice = useStore(dashboardStore, (s) => s.notice);
  return (
    <>
      <div className="status-line">
        <span className={`pill pill--${link === 'connected' ? 'running' : 'offline'}`}>
          {link === 'connected' ? t('dashboard.live') : t('dashboard.reconnecting')}
        </span>
        {auth === 'teacher' && <span className="pill pill--teacher">{t('dashboard.teacherOn')}</span>}
        {auth !== 'teacher' && (
          <span className="pill pill--viewer" data-testid="view-only">
            {t('common.viewOnly')}
          </span>
        )}
      </div>
      {auth === 'viewer' && <p className="notice">{t('dashboard.viewerNotice')}</p>}
      {auth === 'rejected' && <p className="notice notice--error">{t('dashboard.rejectedNotice')}</p>}
      {notice !== null && (
        <p className="notice notice--error" role="alert">
          {translate(notice)}
        </p>
      )}
    </>
  );
}

/** The dashboard layout. */
export function DashboardPage() {
  const { t } = useTranslation();
  const [{ actions }] = useState(connectOnce);
  const auth = useStore(dashboardStore, (s) => s.auth);
  // Projector mode (`?projector`, or the header's button): large type, high contrast, the join code and the trade-off
  // only.
  const [projector, setProjector] = useState(() => new URLSearchParams(location.search).has('projector'));
  const projectorButton = (
    <button
      type="button"
      className="button button--small"
      data-testid="projector-toggle"
      onClick={() => setProjector((on) => !on)}
    >
      {projector ? t('dashboard.leaveProjector') : t('dashboard.projector')}
    </button>
  );
  if (projector) {
    return (
      <ActionsContext.Provider value={null}>
        <main className="page page--wide page--projector" data-testid="projector">
          <header className="page__header">
            <h1>{t('dashboard.title')}</h1>
            <div className="page__tools">
              {projectorButton}
              <LanguageSwitcher />
            </div>
          </header>
          <div className="projector">
            <JoinCard />
            <OverlayCharts projector />
          </div>
        </main>
      </ActionsContext.Provider>
    );
  }
  return (
    <ActionsContext.Provider value={auth === 'teacher' ? actions : null}>
      <main className="page page--wide">
        <header className="page__header">
          <div>
            <h1>{t('dashboard.title')}</h1>
            <p className="tagline">{t('dashboard.tagline')}</p>
          </div>
          <div className="page__tools">
            <AuthBanner />
            {projectorButton}
            <LanguageSwitcher />
          </div>
        </header>
        <div className="dash-top">
          <JoinCard />
          <DashboardKpis />
          <RaceCard />
        </div>
        <OverlayCharts />
        <LayerChoices />
        <div className="dash-tables">
          <RunsTable />
          <SummaryTable />
        </div>
        <CreateRunForm />
        <WorkersTable />
      </main>
    </ActionsContext.Provider>
  );
}
