/**
 * What a cluster process tells its operator (docs/scaling.md, "Logs"): the
 * events that change who does what (a leader elected, a lease lost, a
 * process written off, a heartbeat that had lapsed) as they happen, and,
 * every STATS_EVERY_MS in which anything happened, one line of counts:
 * sockets connected, recovered and closed (by socket.io's reason), joins
 * and rejoins, calls to the leader and their timeouts, bus traffic, and the
 * longest event-loop delay. `npm run bench -- cluster` counts these lines.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** How often the counts are logged (ms). */
export const STATS_EVERY_MS = 5000;
/** An event-loop delay this long is worth a line even when nothing else happened (ms). */
const NOTABLE_DELAY_MS = 1000;

/** The counts of one period; every field starts at zero again after each line. */
export class ProcessCounters {
  connected = 0;
  recovered = 0;
  readonly closed = new Map<string, number>();
  /** Joins the leader took (this process leading), and how many were an identity back on a new socket. */
  joins = 0;
  rejoins = 0;
  calls = 0;
  callTimeouts = 0;
  busSent = 0;
  busSentBytes = 0;
  busReceived = 0;
  busReceivedBytes = 0;

  /** A socket closed, for `reason` (socket.io's disconnect reason). */
  close(reason: string): void {
    this.closed.set(reason, (this.closed.get(reason) ?? 0) + 1);
  }

  /** Whether anything was counted. */
  any(): boolean {
    return this.connected + this.closed.size + this.joins + this.calls + this.busSent + this.busReceived > 0;
  }

  /** The counts as one line. */
  format(): string {
    const closed = [...this.closed].map(([reason, n]) => `${reason} ${n}`).join(', ');
    const closedTotal = [...this.closed.values()].reduce((a, b) => a + b, 0);
    return (
      `sockets +${this.connected} (recovered ${this.recovered}) -${closedTotal} [${closed}]; ` +
      `joins ${this.joins} (rejoins ${this.rejoins}); calls ${this.calls} (timed out ${this.callTimeouts}); ` +
      `bus out ${this.busSent} (${mb(this.busSentBytes)} MB) in ${this.busReceived} (${mb(this.busReceivedBytes)} MB)`
    );
  }
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

/** A process's counters and the timer that logs them. */
export interface Health {
  /** The current period's counts (replaced after each line). */
  counters(): ProcessCounters;
  stop(): void;
}

/** Starts counting; `log` receives one line per period in which anything happened. */
export function startHealth(processId: string, log: (line: string) => void): Health {
  let counters = new ProcessCounters();
  const delay = monitorEventLoopDelay({ resolution: 20 });
  delay.enable();
  const timer = setInterval(() => {
    try {
      const maxDelayMs = delay.max / 1e6;
      delay.reset();
      if (!counters.any() && maxDelayMs < NOTABLE_DELAY_MS) return;
      log(
        `process ${processId} stats ${STATS_EVERY_MS / 1000} s: ${counters.format()}; ` +
          `event loop delay max ${maxDelayMs.toFixed(0)} ms`,
      );
      counters = new ProcessCounters();
    } catch {
      // a log line is never worth a crash
    }
  }, STATS_EVERY_MS);
  timer.unref();
  return {
    counters: () => counters,
    stop: () => {
      clearInterval(timer);
      delay.disable();
    },
  };
}
