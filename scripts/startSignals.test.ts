/**
 * `npm start` must hand a stop signal to the aggregator itself: the server
 * writes its last checkpoints on SIGTERM or SIGINT (Ctrl-C). tsx's command-line
 * launcher runs the script in a child process and kills that child with
 * SIGKILL when it does not acknowledge a relayed signal within about 60 ms,
 * which a server whose event loop is busy cannot do, so its last round was
 * lost (the swarm-race end-to-end test saw a run resume one version back).
 * This runs the start command with a busy stand-in in place of the server.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SERVER_COMMAND as START } from './startCommand';
const FIXTURE = 'scripts/fixtures/busyUntilSignal.ts';

/**
 * Runs `command` with the server entry replaced by the fixture; sends `signal` during a busy spell; resolves its exit
 * code and output.
 */
function stopWhileBusy(
  command: string,
  signal: 'SIGTERM' | 'SIGINT',
): Promise<{ code: number | null; signal: string | null; output: string }> {
  const [program, ...args] = command.split(/\s+/);
  const entry = args.indexOf('server/index.ts');
  if (entry < 0) throw new Error(`the start script does not run server/index.ts: ${command}`);
  args[entry] = FIXTURE;
  const child = spawn(program === 'node' ? process.execPath : `node_modules/.bin/${program}`, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      // 300 ms into the first busy spell: the signal waits for the spell to end.
      if (output.includes('ready\n') && !output.includes('sent')) {
        output += 'sent\n';
        setTimeout(() => child.kill(signal), 300);
      }
    });
    child.on('exit', (code, exitSignal) => resolve({ code, signal: exitSignal, output }));
  });
}

describe('npm start and a stop signal', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`lets a busy server finish on ${signal}`, async () => {
      const result = await stopWhileBusy(START, signal);
      expect(result.output, `start script: ${START}`).toContain(`stopped cleanly on ${signal}`);
      expect(result.code).toBe(0);
    }, 30_000);
  }

  it('would fail under the tsx launcher (the check can tell them apart)', async () => {
    const result = await stopWhileBusy('tsx server/index.ts', 'SIGTERM');
    expect(result.output).not.toContain('stopped cleanly');
    expect(result.code).not.toBe(0);
  }, 30_000);
});
