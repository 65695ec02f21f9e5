/**
 * A teacher's socket from Node, for test set-up only (fast runs): the tests
 * drive what they check through the pages, but a 15 s default deadline and
 * evaluation every 10 rounds would make the suite slow.
 */
import { connectSocket, type AppSocket } from '../../client/net/socket';
import type { Ack, RunConfigPatch, RunId, RunSummary } from '../../core/protocol';

/** The admin token the Playwright config gives the server. */
export const ADMIN_TOKEN = 'e2e-admin-token';

/**
 * Settings that make rounds close and evaluate quickly on a 2-core machine
 * with software WebGPU. The quorum stays at half the participants: with a
 * quorum of one, the first warm tab closes a round every few seconds on its
 * own and keeps the browser's one GPU process so busy that the other tabs'
 * first round (which compiles every kernel on SwiftShader) starves.
 */
export const FAST_RUN: RunConfigPatch = {
  roundDeadlineMs: 3_000,
  quorum: { fraction: 0.5, minimum: 1 },
  evalEvery: 2,
  learningRate: 0.1,
};

/** A connected socket; `adminToken` undefined connects as a student. */
export function connect(baseURL: string, adminToken?: string): Promise<AppSocket> {
  // An --https test server's certificate is self-signed.
  return connectSocket(baseURL, {
    ...(adminToken === undefined ? {} : { adminToken }),
    acceptAnyCertificate: baseURL.startsWith('https:'),
  });
}

function unwrap<T extends object>(answer: Ack<T>, what: string): T {
  if (!answer.ok) throw new Error(`${what} refused: ${answer.error.code} ${answer.error.message}`);
  return answer;
}

/** Creates and starts a run with the fast settings over `patch`; returns its id. */
export async function createFastRun(baseURL: string, patch: RunConfigPatch): Promise<RunId> {
  const socket = await connect(baseURL, ADMIN_TOKEN);
  try {
    const { run } = unwrap(await socket.emitWithAck('run:create', { ...FAST_RUN, ...patch }), 'run:create');
    unwrap(await socket.emitWithAck('run:start', { runId: run.runId }), 'run:start');
    return run.runId;
  } finally {
    socket.close();
  }
}

/** Deletes a run, so that what it reached (the dashboard's best accuracy, say) does not leak into later tests. */
export async function deleteRun(baseURL: string, runId: RunId): Promise<void> {
  const socket = await connect(baseURL, ADMIN_TOKEN);
  try {
    unwrap(await socket.emitWithAck('run:delete', { runId }), 'run:delete');
  } finally {
    socket.close();
  }
}

/** Every run the server holds. */
export async function listRuns(baseURL: string): Promise<RunSummary[]> {
  const response = await fetch(`${baseURL}/api/runs`);
  return (await response.json()) as RunSummary[];
}
