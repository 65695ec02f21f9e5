/** The runs as the options of a select, each by its name (the value is the run id). */
import type { RunView } from '../store/dashboardStore';

/** One <option> per run, in the order given. */
export function RunOptions({ runs }: { runs: readonly RunView[] }) {
  return runs.map((run) => (
    <option key={run.summary.runId} value={run.summary.runId}>
      {run.summary.config.name}
    </option>
  ));
}
