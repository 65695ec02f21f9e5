/**
 * The command that runs the aggregator, read from package.json's "start"
 * script, its one home: the end-to-end tests start exactly the server
 * `npm start` starts (after its set-up step), and scripts/startSignals.test.ts
 * checks that this command hands a stop signal to the server itself.
 */
import { readFileSync } from 'node:fs';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  scripts: { start: string };
};

/** `npm start`'s command line, e.g. `node --import tsx server/index.ts`. */
export const SERVER_COMMAND = packageJson.scripts.start;

/** The same command as an argument list for `spawn(process.execPath, …)` (its leading `node` dropped). */
export function serverArgs(extra: readonly string[] = []): string[] {
  const [program, ...args] = SERVER_COMMAND.split(/\s+/);
  if (program !== 'node')
    throw new Error(`package.json "start" must run node directly (see scripts/startSignals.test.ts), not ${program}`);
  return [...args, ...extra];
}
