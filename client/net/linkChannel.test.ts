import { describe, expect, it } from 'vitest';
import type { GradientSubmission, RoundMetrics, RoundOpen } from '../../core/protocol';
import { NO_TRAFFIC } from '../../core/traffic/frames';
import { LINK_PRESETS, pacingMs } from '../../core/traffic/linkModel';
import { linkedChannelFactory } from './linkChannel';
import type { WorkerChannel, WorkerChannelListener, WorkerChannelOptions } from './workerChannel';

/** A linked channel over a stub, the waits it asked for, and the stub's listener to play the server. */
function linked() {
  const waits: number[] = [];
  let server: WorkerChannelListener | null = null;
  const stub: WorkerChannel = {
    workerId: null,
    traffic: NO_TRAFFIC,
    join: async () => true,
    leave: () => {},
    requestModel: () => {},
    close: () => {},
    submit: async () => ({ ok: true, value: { version: 0, bytes: 0 } }) as never,
  };
  const opened: RoundOpen[] = [];
  const factory = linkedChannelFactory(
    (options) => {
      server = options.listener;
      return stub;
    },
    () => LINK_PRESETS.classroomWifi,
    async (ms) => {
      waits.push(ms);
    },
  );
  const listener = { onRoundOpen: (round: RoundOpen) => opened.push(round), onMetrics: () => {} };
  const channel = factory({ listener } as unknown as WorkerChannelOptions);
  return { channel, waits, opened, server: () => server! };
}

const round = (bytes: number) =>
  ({ runId: 'r', version: 0, deadline: 0, delivery: 'full', layers: [new Uint8Array(bytes)] }) as unknown as RoundOpen;
const gradient = (bytes: number) => ({ layers: [new Uint8Array(bytes)] }) as unknown as GradientSubmission;

describe('a tab behind a simulated network', () => {
  it('waits its share of the server link, for as many participants as the last round had', async () => {
    const wifi = LINK_PRESETS.classroomWifi;
    const { channel, waits, opened, server } = linked();
    // Before any metrics: alone on the link.
    server().onRoundOpen(round(400_000));
    await channel.submit(gradient(9000));
    expect(waits[0]).toBeCloseTo(pacingMs(wifi, 1, 400_000, 0).downMs, 9);
    expect(waits[1]).toBeCloseTo(pacingMs(wifi, 1, 400_000, 9000).upMs, 9);
    // The last round had 30 participants: the access point carries 30 such models and gradients.
    server().onMetrics({ participants: 30 } as RoundMetrics);
    server().onRoundOpen(round(400_000));
    await channel.submit(gradient(9000));
    expect(waits[2]).toBeCloseTo(pacingMs(wifi, 30, 400_000, 0).downMs, 9);
    expect(waits[2]! + waits[3]!).toBeCloseTo((30 * 409_000 * 8) / 50_000 + 2 * 5, 9);
    await Promise.resolve();
    expect(opened).toHaveLength(2);
  });
});
