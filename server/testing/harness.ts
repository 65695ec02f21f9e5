/** Test helpers: the MNIST splits (loaded once per process), a server on an ephemeral loopback port, clients, waiting. */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { io } from 'socket.io-client';
import { loadMnist, type MnistData } from '../../core/data';
import { createApp, type App, type AppOptions } from '../app';
import { createCpuModelRuntime } from '../cpuModel';
import { createFileReader } from '../data/fileReader';
import type { ClientSocket } from './simulatedWorker';

let mnist: Promise<MnistData> | null = null;

/** The MNIST splits, loaded once per test process. */
export function loadTestData(): Promise<MnistData> {
  mnist ??= loadMnist(createFileReader());
  return mnist;
}

/** A fresh temporary data directory; remove it with removeDataDir. */
export function makeDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'atomo-swarm-test-'));
}

/** Deletes a directory made by makeDataDir. */
export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** The admin token of test servers. */
export const TEST_ADMIN_TOKEN = 'test-admin-token';

/** A running test server. */
export interface TestServer {
  readonly app: App;
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Server-side failures (logError); a test asserts it stays empty. */
  readonly errors: unknown[];
  close(): Promise<void>;
}

/** Starts an aggregator on 127.0.0.1 (port 0 unless given) with the CPU model and a temp data dir. */
export async function startServer(options: Partial<AppOptions> & { port?: number } = {}): Promise<TestServer> {
  const { test } = await loadTestData();
  const dataDir = options.dataDir ?? makeDataDir();
  const errors: unknown[] = [];
  const app = await createApp({
    clientDir: join(dataDir, 'no-client'),
    adminToken: TEST_ADMIN_TOKEN,
    model: createCpuModelRuntime(test),
    logError: (error) => errors.push(error),
    ...options,
    dataDir,
  });
  await new Promise<void>((resolve) => app.httpServer.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (app.httpServer.address() as AddressInfo).port;
  return { app, url: `http://127.0.0.1:${port}`, port, dataDir, errors, close: () => app.close() };
}

/** A connected client socket (admin when a token is given). */
export async function connectClient(url: string, adminToken?: string): Promise<ClientSocket> {
  const socket: ClientSocket = io(url, { transports: ['websocket'], reconnection: false, ...(adminToken === undefined ? {} : { auth: { adminToken } }) });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', () => resolve());
    socket.once('connect_error', (error) => reject(error));
  });
  return socket;
}

/** Polls `predicate` until it holds, or throws after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
