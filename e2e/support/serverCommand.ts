/**
 * The command that runs the aggregator, read from package.json's "start"
 * script: the end-to-end tests start exactly the server `npm start` starts
 * (after its set-up step), so a change to how it is launched is tested too.
 */
import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } };

/** `npm start`'s command line, e.g. `node --import tsx server/index.ts`. */
export const SERVER_COMMAND = packageJson.scripts.start;

/** The same command as an argument list for `spawn(process.execPath, …)` (its leading `node` dropped). */
export function serverArgs(extra: readonly string[] = []): string[] {
  const [program, ...args] = SERVER_COMMAND.split(/\s+/);
  if (program !== 'node') throw new Error(`package.json "start" must run node directly (see scripts/startSignals.test.ts), not ${program}`);
  return [...args, ...extra];
}
