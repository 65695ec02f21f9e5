/** Test helpers: the MNIST splits (loaded once per process), a server on an ephemeral loopback port, clients. */
import { loadMnist, type MnistData } from '../../core/data';
import { connectSocket, type AppSocket } from '../../client/net/socket';
import type { AppOptions } from '../app';
import { createFileReader } from '../data/fileReader';
import { startLocalServer, type LocalServer } from '../local';

export { makeDataDir, removeDataDir, waitFor } from '../local';

let mnist: Promise<MnistData> | null = null;

/** The MNIST splits, loaded once per test process. */
export function loadTestData(): Promise<MnistData> {
  mnist ??= loadMnist(createFileReader());
  return mnist;
}

/** The admin token of test servers. */
export const TEST_ADMIN_TOKEN = 'test-admin-token';

/** A running test server; a test asserts its `errors` stay empty. */
export type TestServer = LocalServer;

/**
 * Starts an aggregator on 127.0.0.1 (port 0 unless given) with the CPU model, the training split (for simulated
 * workers), a temp data dir and the test token.
 */
export async function startServer(options: Partial<AppOptions> & { port?: number } = {}): Promise<TestServer> {
  const { train, test } = await loadTestData();
  return startLocalServer(test, { adminToken: TEST_ADMIN_TOKEN, train, ...options });
}

/** A connected client socket (admin when a token is given), through the client's own network module. */
export function connectClient(url: string, adminToken?: string): Promise<AppSocket> {
  return connectSocket(url, adminToken === undefined ? {} : { adminToken });
}
