/** Derived views of the dashboard store that several components share. */
import type { RunId, WorkerSummary } from '../../../core/protocol';
import type { DashboardState, RunView } from '../store/dashboardStore';

/** Runs in list order (stable reference while runs and order are unchanged is not needed: callers memoise). */
export function orderedRuns(state: Pick<DashboardState, 'runIds' | 'runs'>): RunView[] {
  return state.runIds.map((id) => state.runs[id]).filter((run): run is RunView => run !== undefined);
}

/** A worker with the run it belongs to. */
export interface WorkerRow extends WorkerSummary {
  readonly runId: RunId;
  /** In the open round: 'sent' its gradient, 'training', or 'idle' (not in the round). */
  readonly roundState: 'sent' | 'training' | 'idle';
}

/** Every worker of every run, by id. */
export function allWorkers(runs: readonly RunView[]): WorkerRow[] {
  const rows: WorkerRow[] = [];
  for (const { summary } of runs) {
    const round = summary.round;
    for (const worker of summary.workers) {
      const roundState = round?.received.includes(worker.workerId)
        ? 'sent'
        : round?.participants.includes(worker.workerId)
          ? 'training'
          : 'idle';
      rows.push({ ...worker, runId: summary.runId, roundState });
    }
  }
  return rows.sort((a, b) => a.workerId - b.workerId);
}

/** The latest held-out accuracy of a run, or null before its first evaluation. */
export function latestAccuracy(run: RunView): number | null {
  return run.evals.points[run.evals.points.length - 1]?.accuracy ?? null;
}

/**
 * Moves that spread the connected workers evenly over the running runs,
 * moving as few as possible: a worker stays unless its run has more than its
 * share or is not running.
 */
export function balancingMoves(runs: readonly RunView[]): { workerId: WorkerSummary['workerId']; runId: RunId }[] {
  const running = runs.filter((r) => r.summary.status === 'running').map((r) => r.summary.runId);
  if (running.length === 0) return [];
  const workers = allWorkers(runs).filter((w) => w.connected);
  const share = Math.ceil(workers.length / running.length);
  const counts = new Map<RunId, number>(running.map((id) => [id, 0]));
  const homeless: typeof workers = [];
  for (const worker of workers) {
    const count = counts.get(worker.runId);
    if (count !== undefined && count < share) counts.set(worker.runId, count + 1);
    else homeless.push(worker);
  }
  return homeless.map((worker) => {
    const [target] = [...counts.entries()].sort((a, b) => a[1] - b[1])[0]!;
    counts.set(target, counts.get(target)! + 1);
    return { workerId: worker.workerId, runId: target };
  });
}
