/** The swarm's progress line: rounds, last test accuracy and upstream megabytes, redrawn in place on a terminal. */
import type { RoundMetrics } from '../../core/protocol';

const WIDTH = 30;

/** A progress reporter for one run of `total` rounds. */
export interface Progress {
  update(metrics: RoundMetrics): void;
  done(): void;
}

/** Draws on stderr: redrawn in place on a TTY, one line per 10% otherwise (logs stay readable). */
export function createProgress(label: string, total: number, enabled: boolean): Progress {
  const tty = process.stderr.isTTY;
  let accuracy: number | null = null;
  let lastDecile = -1;
  return {
    update(metrics) {
      if (!enabled) return;
      if (metrics.testAccuracy !== null) accuracy = metrics.testAccuracy;
      const done = metrics.version + 1;
      const filled = Math.round((WIDTH * done) / total);
      const line = `${label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${done}/${total} rounds  acc ${
        accuracy === null ? '  —  ' : `${(100 * accuracy).toFixed(1)}%`
      }  up ${(metrics.cumulativeBytesUp / 1e6).toFixed(2)} MB`;
      if (tty) process.stderr.write(`\r${line}`);
      else {
        const decile = Math.floor((10 * done) / total);
        if (decile !== lastDecile) process.stderr.write(`${line}\n`);
        lastDecile = decile;
      }
    },
    done() {
      if (enabled && tty) process.stderr.write('\n');
    },
  };
}
