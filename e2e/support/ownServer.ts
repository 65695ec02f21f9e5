/**
 * An aggregator process a test owns, unlike the one Playwright's webServer
 * starts for the whole suite: the test can stop it (SIGTERM, as an operator
 * would) and start it again on the same port and data folder to check that
 * a restart resumes the runs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { get as httpsGet } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ADMIN_TOKEN } from './admin';
import { serverArgs } from '../../scripts/startCommand';

/** A server process the test starts, stops and restarts. */
export interface OwnServer {
  readonly baseURL: string;
  readonly dataDir: string;
  /** Starts the process and resolves once /api/health answers. */
  start(): Promise<void>;
  /** SIGTERM (the server checkpoints every run and exits), resolving when the process has exited. */
  stop(): Promise<void>;
  /** Stops the process if it runs and removes the data folder; safe to call twice. */
  dispose(): Promise<void>;
  /** What the server printed so far (its banner). */
  output(): string;
}

/** Options of ownServer. */
export interface OwnServerOptions {
  /** Start it with `--https` (a self-signed certificate made in its data folder). */
  readonly https?: boolean;
  /**
   * Run it at this niceness (`nice -n`, 0–19): a test that measures a
   * student's page runs the aggregator, which in a classroom is the teacher's
   * machine, behind the browser on the machine's few cores.
   */
  readonly niceness?: number;
}

async function healthy(baseURL: string): Promise<boolean> {
  if (baseURL.startsWith('https:')) {
    // The server's own self-signed certificate: trusted here as a student clicking through the warning would.
    return new Promise((resolve) => {
      httpsGet(`${baseURL}/api/health`, { rejectUnauthorized: false }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      }).on('error', () => resolve(false));
    });
  }
  try {
    return (await fetch(`${baseURL}/api/health`)).ok;
  } catch {
    return false;
  }
}

/** An aggregator on `port` with a fresh temporary data folder (not started yet). */
export function ownServer(port: number, options: OwnServerOptions = {}): OwnServer {
  const baseURL = `${options.https === true ? 'https' : 'http'}://localhost:${port}`;
  const dataDir = mkdtempSync(join(tmpdir(), 'atomo-e2e-own-'));
  let child: ChildProcess | null = null;
  let output = '';

  /** Kills the whole process group: the server and anything it started. */
  const killGroup = (process_: ChildProcess) => {
    try {
      if (process_.pid !== undefined) process.kill(-process_.pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  };
  // If the test runner's worker exits before afterAll could stop the server (a timed-out test), take it along.
  const onExit = () => {
    if (child !== null) killGroup(child);
  };
  process.once('exit', onExit);

  const stop = async () => {
    const running = child;
    if (running === null) return;
    child = null;
    if (running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
    // SIGTERM, as an operator would send it: the server checkpoints every run and exits.
    running.kill('SIGTERM');
    // A server that does not close within the grace time is killed, so no test leaves a process behind.
    const timer = setTimeout(() => killGroup(running), 15_000);
    await exited;
    clearTimeout(timer);
  };

  return {
    baseURL,
    dataDir,
    async start() {
      if (child !== null) throw new Error('ownServer: already started');
      // A stale server left on the port would answer the health check and fool the test.
      if (await healthy(baseURL)) throw new Error(`ownServer: something already answers on ${baseURL}`);
      // The same command as the suite's webServer, so the test runs the server users run.
      const args = serverArgs(options.https === true ? ['--https'] : []);
      // `nice` runs the command in the same process (its pid is the server's), so stop and killGroup reach it as
      // before.
      const [program, programArgs] =
        options.niceness === undefined
          ? [process.execPath, args]
          : ['nice', ['-n', String(options.niceness), process.execPath, ...args]];
      const started = spawn(program, programArgs, {
        env: { ...process.env, PORT: String(port), ADMIN_TOKEN, DATA_DIR: dataDir },
        stdio: ['ignore', 'pipe', 'pipe'],
        // Its own process group, so killGroup reaches any thread or child it started.
        detached: true,
      });
      child = started;
      started.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      started.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const deadline = Date.now() + 60_000;
      while (!(await healthy(baseURL))) {
        if (started.exitCode !== null)
          throw new Error(`ownServer: the server exited (${started.exitCode}):\n${output}`);
        if (Date.now() > deadline) throw new Error(`ownServer: no /api/health on ${baseURL} after 60 s:\n${output}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    stop,
    output: () => output,
    async dispose() {
      await stop();
      process.removeListener('exit', onExit);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
