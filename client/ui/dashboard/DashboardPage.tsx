/** The teacher's page (`/dashboard`): join code, live overlay charts, runs, workers and the race. */
import { useState } from 'react';
import { useStore } from 'zustand';
import { connectDashboard, type DashboardActions } from '../../net/dashboardChannel';
import { dashboardStore } from '../store/dashboardStore';
import { ActionsContext } from './actionsContext';
import { takeAdminToken } from './adminToken';
import { CreateRunForm } from './CreateRunForm';
import { DashboardKpis } from './DashboardKpis';
import { JoinCard } from './JoinCard';
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
  const auth = useStore(dashboardStore, (s) => s.auth);
  const link = useStore(dashboardStore, (s) => s.link);
  const notice = useStore(dashboardStore, (s) => s.notice);
  return (
    <>
      <div className="status-line">
        <span className={`pill pill--${link === 'connected' ? 'running' : 'offline'}`}>{link === 'connected' ? 'live' : 'reconnecting…'}</span>
        {auth === 'teacher' && <span className="pill pill--teacher">teacher controls on</span>}
        {auth !== 'teacher' && (
          <span className="pill pill--viewer" data-testid="view-only">
            view only
          </span>
        )}
      </div>
      {auth === 'viewer' && <p className="notice">View only: open the dashboard link the server printed at start (it carries the admin token) to control runs.</p>}
      {auth === 'rejected' && <p className="notice notice--error">The admin token in the link was refused: this dashboard can only watch.</p>}
      {notice !== null && (
        <p className="notice notice--error" role="alert">
          {notice}
        </p>
      )}
    </>
  );
}

/** The dashboard layout. */
export function DashboardPage() {
  const [{ actions }] = useState(connectOnce);
  const auth = useStore(dashboardStore, (s) => s.auth);
  return (
    <ActionsContext.Provider value={auth === 'teacher' ? actions : null}>
      <main className="page page--wide">
        <header className="page__header">
          <div>
            <h1>atomo-swarm · class dashboard</h1>
            <p className="tagline">Every tab trains on its own digits and sends a compressed gradient. How many bytes does accuracy cost?</p>
          </div>
          <AuthBanner />
        </header>
        <div className="dash-top">
          <JoinCard />
          <DashboardKpis />
          <RaceCard />
        </div>
        <OverlayCharts />
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
