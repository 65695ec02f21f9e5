/** A hand-driven worker for tests that craft their own payloads: join, wait for round:open, send anything. */
import { PROTOCOL_VERSION, type JoinAccepted, type RoundOpen, type RunId } from '../../core/protocol';
import { connectClient } from './harness';
import type { AppSocket as ClientSocket } from '../../client/net/socket';

/** A joined socket and a queue of the rounds it was sent. */
export interface RawWorker {
  readonly socket: ClientSocket;
  readonly accepted: JoinAccepted;
  /** The next round:open not yet taken (waits for it). */
  nextRound(timeoutMs?: number): Promise<RoundOpen>;
  close(): void;
}

/** Connects and joins `runId` (or the default run). */
export async function joinRaw(url: string, runId?: RunId): Promise<RawWorker> {
  const socket = await connectClient(url);
  const rounds: RoundOpen[] = [];
  const waiters: ((round: RoundOpen) => void)[] = [];
  socket.on('round:open', (round) => {
    const waiter = waiters.shift();
    if (waiter) waiter(round);
    else rounds.push(round);
  });
  const response = await socket
    .timeout(10_000)
    .emitWithAck('worker:join', { protocol: PROTOCOL_VERSION, ...(runId === undefined ? {} : { runId }) });
  if (!response.ok) throw new Error(`join refused: ${response.error.message}`);
  return {
    socket,
    accepted: response,
    nextRound: (timeoutMs = 10_000) =>
      new Promise<RoundOpen>((resolve, reject) => {
        const queued = rounds.shift();
        if (queued) return resolve(queued);
        const timer = setTimeout(() => reject(new Error('no round:open')), timeoutMs);
        waiters.push((round) => {
          clearTimeout(timer);
          resolve(round);
        });
      }),
    close: () => socket.disconnect(),
  };
}
