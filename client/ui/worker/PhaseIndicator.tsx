/** What the worker is doing right now, with a progress bar while it downloads, computes or uploads. */
import { useTranslation } from 'react-i18next';
import { useStore } from 'zustand';
import { workerStore, type WorkerPhase } from '../store/workerStore';

const BUSY: ReadonlySet<WorkerPhase> = new Set(['starting', 'joining', 'downloading', 'computing', 'uploading']);

/** The phase line and an indeterminate progress bar (role="progressbar") while busy. */
export function PhaseIndicator() {
  const phase = useStore(workerStore, (s) => s.phase);
  const link = useStore(workerStore, (s) => s.link);
  const firstRound = useStore(workerStore, (s) => s.roundsSent === 0 && s.backend.kind === 'webgpu');
  const { t } = useTranslation();
  const busy = BUSY.has(phase);
  // The first WebGPU round also compiles every kernel: say so, or a slow first round looks like a hang.
  const text =
    link === 'reconnecting' ? t('worker.phase.reconnecting') : phase === 'computing' && firstRound ? t('worker.phase.firstRound') : t(`worker.phase.${phase}`);
  return (
    <div className="phase" data-testid="phase" data-phase={phase}>
      <p className="phase__text">{text}</p>
      <div className={`progress ${busy ? 'progress--busy' : ''}`} role="progressbar" aria-label={text} aria-busy={busy}>
        <div className="progress__bar" />
      </div>
    </div>
  );
}
