/** What the worker is doing right now, with a progress bar while it downloads, computes or uploads. */
import { useStore } from 'zustand';
import { workerStore, type WorkerPhase } from '../store/workerStore';

const PHASE_TEXT: Readonly<Record<WorkerPhase, string>> = {
  starting: 'Preparing: loading the digits and the GPU…',
  joining: 'Joining the class…',
  waiting: 'Waiting for the next round',
  downloading: 'Downloading the model…',
  computing: 'Computing the gradient and compressing it…',
  uploading: 'Sending the compressed gradient…',
  paused: 'Paused: this tab is not taking part',
  removed: 'Removed by the teacher',
  failed: 'Stopped',
};

const FIRST_ROUND_TEXT = 'Compiling the GPU kernels and computing the first gradient (the first round takes longest)…';

const BUSY: ReadonlySet<WorkerPhase> = new Set(['starting', 'joining', 'downloading', 'computing', 'uploading']);

/** The phase line and an indeterminate progress bar (role="progressbar") while busy. */
export function PhaseIndicator() {
  const phase = useStore(workerStore, (s) => s.phase);
  const link = useStore(workerStore, (s) => s.link);
  const firstRound = useStore(workerStore, (s) => s.roundsSent === 0 && s.backend.kind === 'webgpu');
  const busy = BUSY.has(phase);
  // The first WebGPU round also compiles every kernel: say so, or a slow first round looks like a hang.
  const text = link === 'reconnecting' ? 'Connection lost: reconnecting…' : phase === 'computing' && firstRound ? FIRST_ROUND_TEXT : PHASE_TEXT[phase];
  return (
    <div className="phase" data-testid="phase" data-phase={phase}>
      <p className="phase__text">{text}</p>
      <div className={`progress ${busy ? 'progress--busy' : ''}`} role="progressbar" aria-label={text} aria-busy={busy}>
        <div className="progress__bar" />
      </div>
    </div>
  );
}
