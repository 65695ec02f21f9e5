/** Routes the two pages by path: `/dashboard` for the teacher, anything else is a worker tab. */
import { lazy, Suspense } from 'react';

// Each page loads only its own code: a student's phone never downloads the dashboard, nor the teacher's laptop the GPU kernels.
const DashboardPage = lazy(() => import('./dashboard/DashboardPage').then((m) => ({ default: m.DashboardPage })));
const WorkerPage = lazy(() => import('./worker/WorkerPage').then((m) => ({ default: m.WorkerPage })));

/** The application root. */
export function App() {
  const dashboard = location.pathname.replace(/\/+$/, '') === '/dashboard';
  return <Suspense fallback={<p className="loading">Loading…</p>}>{dashboard ? <DashboardPage /> : <WorkerPage />}</Suspense>;
}
