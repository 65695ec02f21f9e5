/** Routes the two pages by path: `/dashboard` for the teacher, anything else is a worker tab. */
import { lazy, Suspense } from 'react';
import { useTranslation } from 'react-i18next';
import '../i18n';

// Each page loads only its own code: a student's phone never downloads the dashboard, nor the teacher's laptop the GPU
// kernels.
const DashboardPage = lazy(() => import('./dashboard/DashboardPage').then((m) => ({ default: m.DashboardPage })));
const WorkerPage = lazy(() => import('./worker/WorkerPage').then((m) => ({ default: m.WorkerPage })));

/**
 * The application root; a language switch re-renders the page in the new language (the stores outside React keep their
 * state).
 */
export function App() {
  const { t, i18n } = useTranslation();
  const dashboard = location.pathname.replace(/\/+$/, '') === '/dashboard';
  return (
    <Suspense key={i18n.language} fallback={<p className="loading">{t('common.loading')}</p>}>
      {dashboard ? <DashboardPage /> : <WorkerPage />}
    </Suspense>
  );
}
