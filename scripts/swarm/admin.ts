/**
 * The swarm's teacher side: one admin socket (token in the handshake) that
 * creates and starts a run, follows its metrics:round events, and fetches
 * the final history over HTTP, exactly as the dashboard would.
 */
import { connectSocket } from '../../client/net/socket';
import type { RoundMetrics, RunConfigPatch, RunId, RunSummary, WorkerAttack, WorkerId } from '../../core/protocol';

/** A connected admin client. */
export interface AdminClient {
  createRun(patch: RunConfigPatch): Promise<RunSummary>;
  startRun(runId: RunId): Promise<void>;
  /** The classroom attacker toggle (worker:attack) on one worker. */
  setAttack(workerId: WorkerId, attack: WorkerAttack | null): Promise<void>;
  /** Calls `onRound` for each closed round of `runId`; resolves when the run is finished. */
  followRun(runId: RunId, onRound: (metrics: RoundMetrics) => void): Promise<void>;
  /** The run's whole history from GET /api/runs/<id>/metrics.json. */
  fetchHistory(runId: RunId): Promise<readonly RoundMetrics[]>;
  close(): void;
}

function unwrap<T extends object>(
  event: string,
  response: ({ ok: true } & T) | { ok: false; error: { code: string; message: string } },
): T {
  if (!response.ok) throw new Error(`${event} refused: ${response.error.code}: ${response.error.message}`);
  return response;
}

/** Connects to `url` as the teacher. */
export async function connectAdmin(url: string, adminToken: string): Promise<AdminClient> {
  const socket = await connectSocket(url, { adminToken, reconnect: true }).catch((error: Error) => {
    throw new Error(`cannot reach the aggregator at ${url}: ${error.message}`);
  });
  const ackTimeout = 30_000;
  return {
    createRun: async (patch) =>
      unwrap('run:create', await socket.timeout(ackTimeout).emitWithAck('run:create', patch)).run,
    startRun: async (runId) => {
      unwrap('run:start', await socket.timeout(ackTimeout).emitWithAck('run:start', { runId }));
    },
    setAttack: async (workerId, attack) => {
      unwrap('worker:attack', await socket.timeout(ackTimeout).emitWithAck('worker:attack', { workerId, attack }));
    },
    followRun: (runId, onRound) =>
      new Promise<void>((resolve, reject) => {
        // A run is finished from its last round's close, before that round's evaluation is published (the server
        // evaluates between turns of its event loop, and a run:state may go out meanwhile): wait for both.
        let lastVersion = -1;
        let finished: RunSummary | null = null;
        const settle = () => {
          if (finished === null || lastVersion < finished.config.maxRounds - 1) return;
          socket.off('metrics:round', onMetrics);
          socket.off('run:state', onState);
          resolve();
        };
        const onMetrics = (metrics: RoundMetrics) => {
          if (metrics.runId !== runId) return;
          onRound(metrics);
          lastVersion = Math.max(lastVersion, metrics.version);
          settle();
        };
        const onState = (run: RunSummary) => {
          if (run.runId !== runId || run.status !== 'finished') return;
          finished = run;
          settle();
        };
        socket.on('metrics:round', onMetrics);
        socket.on('run:state', onState);
        socket
          .timeout(ackTimeout)
          .emitWithAck('dashboard:subscribe', { runId })
          .then((response) => unwrap('dashboard:subscribe', response))
          .catch(reject);
      }),
    fetchHistory: async (runId) => {
      const response = await fetch(new URL(`/api/runs/${encodeURIComponent(runId)}/metrics.json`, url));
      if (!response.ok) throw new Error(`GET metrics.json of ${runId}: HTTP ${response.status}`);
      return ((await response.json()) as { history: RoundMetrics[] }).history;
    },
    close: () => void socket.disconnect(),
  };
}
