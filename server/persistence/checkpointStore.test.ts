/**
 * CheckpointStore's writes (server/persistence/checkpoint.ts): saves of one run that
 * arrive while its write is in flight are coalesced, and each snapshot is
 * encoded only when its turn to be written comes. A whole class rejoining
 * after a restart saves the run once per join; encoding each of those
 * snapshots (the history grows with rounds × workers) blocked the event loop
 * long enough that the teacher's socket could not connect.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createModelLayout } from '../../core/model/layout';
import { asModelVersion, asRunId } from '../../core/protocol';
import { DEFAULT_RUN_CONFIG } from '../../core/schema';
import { CheckpointStore, decodeCheckpoint, type StoredRun } from './checkpoint';
import { makeDataDir, removeDataDir } from '../local';
import type { RunSnapshot } from '../run/run';

const PARAMETERS = createModelLayout(DEFAULT_RUN_CONFIG.model).parameterCount;

/**
 * A stored run at version 0 whose `bytesUp` tells the saves apart; `onEncode` is called each time its weights are read.
 */
function storedRun(bytesUp: number, onEncode: () => void): StoredRun {
  const snapshot: RunSnapshot = {
    runId: asRunId('burst'),
    config: DEFAULT_RUN_CONFIG,
    status: 'running',
    version: asModelVersion(0),
    params: new Float32Array(PARAMETERS),
    velocity: new Float32Array(PARAMETERS),
    history: [],
    members: [],
    bytesUp,
    bytesDown: 0,
  };
  const params = snapshot.params;
  Object.defineProperty(snapshot, 'params', {
    enumerable: true,
    get: () => {
      onEncode();
      return params;
    },
  });
  return { snapshot, createdAt: 1 };
}

describe('CheckpointStore', () => {
  const dataDir = makeDataDir();
  afterAll(() => removeDataDir(dataDir));

  it('encodes a burst of saves of one run twice (the first, then the newest), and writes the newest', async () => {
    const errors: unknown[] = [];
    const store = new CheckpointStore(dataDir, (error) => errors.push(error));
    await store.init();
    let encodes = 0;
    for (let i = 1; i <= 50; i++) store.saveRun(storedRun(i, () => encodes++));
    await store.flush();
    expect(errors).toEqual([]);
    expect(encodes).toBe(2);
    const written = decodeCheckpoint(readFileSync(join(dataDir, 'runs', 'burst.ckpt')));
    expect(written.snapshot.bytesUp).toBe(50);
    // The first save was written, then moved to .prev by the newest.
    expect(decodeCheckpoint(readFileSync(join(dataDir, 'runs', 'burst.ckpt.prev'))).snapshot.bytesUp).toBe(1);
  });

  it('never writes a snapshot that is not finite, and reports it', async () => {
    const errors: unknown[] = [];
    const store = new CheckpointStore(dataDir, (error) => errors.push(error));
    await store.init();
    const bad = storedRun(7, () => undefined);
    bad.snapshot.velocity[3] = Number.NaN;
    store.saveRun(bad);
    await store.flush();
    expect(errors.map(String)).toEqual([
      expect.stringContaining('refusing to checkpoint non-finite momentum (parameter 3)'),
    ]);
    expect(decodeCheckpoint(readFileSync(join(dataDir, 'runs', 'burst.ckpt'))).snapshot.bytesUp).toBe(50);
  });
});
