/**
 * An aggregator in this process, for the swarm, the benchmarks and the
 * server's tests: the CPU model on the MNIST test split, on 127.0.0.1 (an
 * ephemeral port unless given), with a temporary data directory unless given
 * one (removeDataDir deletes it once the server is closed). All its workers
 * share one address, so identities are bounded only in total.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dataset } from '../core/data';
import { createApp, type App, type AppOptions } from './app';
import { createCpuModelRuntime } from './model/cpuModel';
import { loadTestSet } from './data/testSets';
import { DEFAULT_IDENTITY_LIMITS } from './protocol/limits';

/** A running in-process aggregator. */
export interface LocalServer {
  readonly app: App;
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Server-side failures (logError). */
  readonly errors: unknown[];
  close(): Promise<void>;
}

/** A fresh temporary data directory. */
export function makeDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'atomo-swarm-'));
}

/** Deletes a data directory and everything in it. */
export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Starts an aggregator evaluating on `test` (another dataset's test split read when a run uses it); `options`
 * override the defaults (adminToken is required).
 */
export async function startLocalServer(
  test: Dataset,
  options: Partial<AppOptions> & Pick<AppOptions, 'adminToken'> & { readonly port?: number },
): Promise<LocalServer> {
  const dataDir = options.dataDir ?? makeDataDir();
  const errors: unknown[] = [];
  const app = await createApp({
    clientDir: join(dataDir, 'no-client'),
    model: createCpuModelRuntime(test, (dataset) => loadTestSet(dataset)),
    logError: (error) => errors.push(error),
    // Every worker of a swarm, a benchmark or a test comes from this machine: only the total is bounded.
    identityLimits: { maxPerAddress: DEFAULT_IDENTITY_LIMITS.maxTotal },
    ...options,
    dataDir,
  });
  await new Promise<void>((resolve) => app.httpServer.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (app.httpServer.address() as AddressInfo).port;
  return { app, url: `http://127.0.0.1:${port}`, port, dataDir, errors, close: () => app.close() };
}

/** Polls `predicate` until it holds, or throws after `timeoutMs`. */
export async function waitFor(predicate: () => boolean, timeoutMs = 30_000, what = 'condition'): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
