/** Test helpers of the swarm's tests. */
import { afterAll, beforeAll } from 'vitest';
import { removeDataDir } from '../../server/local';
import { startInProcessServer } from './aggregator';

type InProcessServer = Awaited<ReturnType<typeof startInProcessServer>>;

/**
 * One in-process aggregator for the calling test file: started before its tests, stopped and its data removed after.
 */
export function inProcessServerPerFile(): () => InProcessServer {
  let server: InProcessServer | undefined;
  beforeAll(async () => {
    server = await startInProcessServer();
  });
  afterAll(async () => {
    if (!server) return;
    await server.close();
    removeDataDir(server.dataDir);
  });
  return () => {
    if (!server) throw new Error('the aggregator of this test file has not started');
    return server;
  };
}
