/** The student's page (`/`): this tab as one worker of the swarm. */
import { useEffect, useState } from 'react';
import { asRunId } from '../../../core/protocol';
import { useTranslation } from 'react-i18next';
import { startWorkerSession } from '../../session/browserSession';
import type { WorkerControls } from '../../session/workerSession';
import { LanguageSwitcher } from '../common/LanguageSwitcher';
import { workerStore } from '../store/workerStore';
import { DigitGallery } from './DigitGallery';
import { DrawDigit } from './DrawDigit';
import { LayerCard } from './LayerCard';
import { WorkerCharts } from './WorkerCharts';
import { WorkerSummary } from './WorkerSummary';

/** Starts this tab's worker once and lays out its cards. */
export function WorkerPage() {
  const { t } = useTranslation();
  const [controls, setControls] = useState<WorkerControls | null>(null);
  useEffect(() => {
    const run = new URLSearchParams(location.search).get('run');
    // One session per page load; React's development double effect must not start two.
    void startOnce(run === null ? undefined : asRunId(run)).then(setControls);
  }, []);

  return (
    <main className="page">
      <header className="page__header">
        <div>
          <h1>atomo-swarm</h1>
          <p className="tagline">{t('worker.tagline')}</p>
        </div>
        <div className="page__tools">
          <LanguageSwitcher />
        </div>
      </header>
      <div className="worker-layout">
        <div className="worker-layout__side">
          <WorkerSummary controls={controls} />
          <DrawDigit />
          <DigitGallery />
          <LayerCard />
        </div>
        <WorkerCharts />
      </div>
    </main>
  );
}

let started: Promise<WorkerControls> | null = null;
function startOnce(runId: ReturnType<typeof asRunId> | undefined): Promise<WorkerControls> {
  started ??= startWorkerSession(workerStore, runId);
  return started;
}
