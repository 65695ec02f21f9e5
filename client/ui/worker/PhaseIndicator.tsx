/** What the worker is doing right now, with a progress bar while it calibrates, downloads, computes or uploads. */
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useStore } from 'zustand';
import { workerStore, type WorkerPhase } from '../store/workerStore';

const BUSY: ReadonlySet<WorkerPhase> = new Set([
  'starting',
  'joining',
  'calibrating',
  'downloading',
  'computing',
  'uploading',
]);

/**
 * The bar moves only once a phase has lasted this long. A round is often
 * shorter; a bar that animated through every one would keep the browser
 * drawing frames all the time (in software, on a machine without a GPU,
 * that costs half a core), and nobody needs progress for a tenth of a second.
 */
const ANIMATE_AFTER_MS = 1_000;

/** Whether `phase` has been the phase for ANIMATE_AFTER_MS. */
function useLasting(phase: WorkerPhase): boolean {
  const [lasting, setLasting] = useState<WorkerPhase | null>(null);
  useEffect(() => {
    const timer = setTimeout(() => setLasting(phase), ANIMATE_AFTER_MS);
    return () => clearTimeout(timer);
  }, [phase]);
  return lasting === phase;
}

/**
 * The phase line and a progress bar (role="progressbar"): in steps while calibrating, indeterminate once a busy phase
 * lasts.
 */
export function PhaseIndicator() {
  const phase = useStore(workerStore, (s) => s.phase);
  const link = useStore(workerStore, (s) => s.link);
  const firstRound = useStore(workerStore, (s) => s.roundsSent === 0 && s.backend.kind === 'webgpu');
  const calibration = useStore(workerStore, (s) => s.calibration);
  const { t } = useTranslation();
  const busy = BUSY.has(phase);
  const moving = useLasting(phase) && busy;
  const steps = phase === 'calibrating' && calibration?.state === 'measuring' ? calibration : null;
  // The first WebGPU round also compiles every kernel: say so, or a slow first round looks like a hang.
  const text =
    link === 'reconnecting'
      ? t('worker.phase.reconnecting')
      : steps !== null
        ? t('worker.calibration.measuring', { done: steps.done, total: steps.total })
        : phase === 'computing' && firstRound
          ? t('worker.phase.firstRound')
          : t(`worker.phase.${phase}`);
  return (
    <div className="phase" data-testid="phase" data-phase={phase}>
      <p className="phase__text">{text}</p>
      <div
        className={`progress ${moving ? 'progress--busy' : ''} ${steps === null ? '' : 'progress--steps'}`}
        role="progressbar"
        aria-label={text}
        aria-busy={busy}
        {...(steps === null ? {} : { 'aria-valuemin': 0, 'aria-valuemax': steps.total, 'aria-valuenow': steps.done })}
      >
        <div
          className="progress__bar"
          style={steps === null ? undefined : { width: `${(100 * Math.max(0.5, steps.done)) / steps.total}%` }}
        />
      </div>
    </div>
  );
}
