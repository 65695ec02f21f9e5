import { describe, expect, it } from 'vitest';
import {
  LINK_PRESETS,
  checkLink,
  deliveryMs,
  describeLink,
  pacingMs,
  partsTotalMs,
  roundTimeMs,
  roundTimeParts,
  roundTotalsTimeMs,
  serverLinkMs,
  symmetricLink,
  type LinkModel,
  type WorkerRoundCost,
} from './linkModel';

/** N workers with the same messages and compute time. */
const same = (n: number, cost: WorkerRoundCost): WorkerRoundCost[] => Array.from({ length: n }, () => cost);
/** A round's communication: its time less the slowest compute, both latencies and the server's time. */
const communicationMs = (workers: readonly WorkerRoundCost[], link: LinkModel, serverMs = 0) =>
  roundTimeMs(workers, serverMs, link) - Math.max(...workers.map((w) => w.computeMs)) - 2 * link.latencyMs - serverMs;

const duplex = (serverMbps: number, up = 100, down = 100): LinkModel => ({
  name: 'duplex test',
  uplinkMbps: up,
  downlinkMbps: down,
  serverMbps,
  serverMedium: 'duplex',
  latencyMs: 3,
});

describe('link model', () => {
  it('delivers bytes·8/bandwidth + latency', () => {
    // 1 MB at 8 Mbit/s is one second, plus 20 ms.
    expect(deliveryMs(1_000_000, 8, 20)).toBeCloseTo(1020, 9);
    expect(deliveryMs(0, 8, 20)).toBe(20);
  });

  it('without a server link, makes a round as slow as its slowest worker’s path, plus the server', () => {
    const link = { ...symmetricLink(1, 10), downlinkMbps: 4 };
    const fast = { downBytes: 500_000, upBytes: 1000, computeMs: 5 };
    const slow = { downBytes: 500_000, upBytes: 125_000, computeMs: 50 };
    // slow: 1000 + 10 + 50 + 1000 + 10; server 7.
    expect(roundTimeMs([fast, slow], 7, link)).toBeCloseTo(2077, 9);
    expect(roundTimeMs([fast], 0, link)).toBeCloseTo(1000 + 10 + 5 + 8 + 10, 9);
    // Nothing depends on N.
    expect(roundTimeMs(same(50, slow), 7, link)).toBeCloseTo(2077, 9);
  });

  it('splits a round into the parts of the chain that sets it, which add up to its time', () => {
    const link = duplex(100);
    // Two workers: the slower path is the second's (1 + 9 + 10 ms); the server link takes in 2 · 125 kB (20 ms).
    const workers = [
      { downBytes: 12_500, upBytes: 125_000, computeMs: 4 },
      { downBytes: 12_500, upBytes: 125_000, computeMs: 9 },
    ];
    // The server link's chain: the slowest compute, 9, then 20 ms; both latencies, 6; the server, 2.
    expect(roundTimeParts(workers, 2, link)).toEqual({
      computeMs: 9,
      downMs: 0,
      upMs: 0,
      serverLinkMs: 20,
      latencyMs: 6,
      serverMs: 2,
    });
    // On a faster server link the second worker's own path sets the round.
    const parts = roundTimeParts(workers, 2, duplex(1000));
    expect(parts).toEqual({ computeMs: 9, downMs: 1, upMs: 10, serverLinkMs: 0, latencyMs: 6, serverMs: 2 });
    // The parts add up to the round's time, on any link and any mix of workers.
    for (const l of [duplex(50), duplex(5000), symmetricLink(2, 20), LINK_PRESETS.classroomWifi]) {
      const mixed = [...workers, { downBytes: 400_000, upBytes: 3_000, computeMs: 1 }];
      expect(partsTotalMs(roundTimeParts(mixed, 3, l))).toBe(roundTimeMs(mixed, 3, l));
      const max = Math.max(
        ...mixed.map(
          (w) => (w.downBytes * 8) / (l.downlinkMbps * 1000) + w.computeMs + (w.upBytes * 8) / (l.uplinkMbps * 1000),
        ),
        9 + serverLinkMs(l, 425_000, 253_000),
      );
      expect(roundTimeMs(mixed, 3, l)).toBeCloseTo(max + 2 * l.latencyMs + 3, 9);
    }
  });

  it('costs N·b_up·8/B_server when the server link is the bottleneck, and grows with N', () => {
    // Workers 100 Mbit/s each way, server 100 Mbit/s duplex; 125 kB up (10 ms on one link), 12.5 kB down (1 ms).
    const link = duplex(100);
    const worker = { downBytes: 12_500, upBytes: 125_000, computeMs: 4 };
    for (const n of [2, 8, 30]) {
      // The server takes in n·125 kB: n·10 ms, above one worker's 11 ms from n = 2 on.
      expect(communicationMs(same(n, worker), link)).toBeCloseTo(n * 10, 9);
      expect(roundTimeMs(same(n, worker), 2, link)).toBeCloseTo(4 + n * 10 + 6 + 2, 9);
    }
    // Uplink-heavy or downlink-heavy, a duplex link is busy for the larger direction only.
    const downHeavy = { downBytes: 125_000, upBytes: 12_500, computeMs: 4 };
    expect(communicationMs(same(8, downHeavy), link)).toBeCloseTo(80, 9);
  });

  it('on a shared medium, costs the sum of both directions: N·(b_up + b_down)·8/B', () => {
    const wifi = LINK_PRESETS.classroomWifi; // 50 Mbit/s for the room, both ways
    const worker = { downBytes: 407_128, upBytes: 9_024, computeMs: 10 };
    for (const n of [1, 4, 30]) {
      const expected = (n * (407_128 + 9_024) * 8) / 50_000;
      expect(communicationMs(same(n, worker), wifi)).toBeCloseTo(expected, 9);
    }
    // The same traffic on a duplex server link of the same capacity costs only the larger direction.
    const asDuplex: LinkModel = { ...wifi, serverMedium: 'duplex' };
    expect(communicationMs(same(30, worker), asDuplex)).toBeCloseTo((30 * 407_128 * 8) / 50_000, 9);
    expect(serverLinkMs(wifi, 1000, 250)).toBeCloseTo((1250 * 8) / 50_000, 12);
    expect(serverLinkMs(asDuplex, 1000, 250)).toBeCloseTo((1000 * 8) / 50_000, 12);
  });

  it('costs the per-worker term when the server link is not the bottleneck', () => {
    // The datacentre's 10 Gbit/s server and 1 Gbit/s workers: up to 10 workers the workers' own links set the pace.
    const dc = LINK_PRESETS.datacentre;
    const worker = { downBytes: 407_128, upBytes: 407_128, computeMs: 3 };
    const perWorker = (2 * 407_128 * 8) / 1_000_000;
    for (const n of [1, 5, 10]) expect(communicationMs(same(n, worker), dc)).toBeCloseTo(perWorker, 9);
    // At 40 the server takes in 40 models at 10 Gbit/s: twice the per-worker term.
    expect(communicationMs(same(40, worker), dc)).toBeCloseTo((40 * 407_128 * 8) / 10_000_000, 9);
  });

  it('takes asymmetric links each way at their own speed', () => {
    const home = LINK_PRESETS.homeBroadband; // 10 up, 50 down per worker; server 1 Gbit/s
    const worker = { downBytes: 407_128, upBytes: 25_500, computeMs: 20 };
    const perWorker = (407_128 * 8) / 50_000 + (25_500 * 8) / 10_000;
    expect(communicationMs(same(4, worker), home)).toBeCloseTo(perWorker, 9);
    // Uploading the model instead of downloading it is five times slower.
    const swapped = { downBytes: 25_500, upBytes: 407_128, computeMs: 20 };
    expect(communicationMs(same(4, swapped), home)).toBeCloseTo((25_500 * 8) / 50_000 + (407_128 * 8) / 10_000, 9);
    // At 100 workers the server's 1 Gbit/s port sending 100 models is the bottleneck.
    expect(communicationMs(same(100, worker), home)).toBeCloseTo((100 * 407_128 * 8) / 1_000_000, 9);
  });

  it('puts what the server sent to every participant on its link, not only the contributors’ share', () => {
    const link = duplex(100);
    const contributor = { downBytes: 12_500, upBytes: 1250, computeMs: 0 };
    // Two contributors, but the server sent the 12.5 kB model to 10 participants: 10 ms on its link.
    expect(roundTimeMs(same(2, contributor), 0, link, { downBytes: 125_000, upBytes: 2500 })).toBeCloseTo(10 + 6, 9);
    expect(roundTimeMs(same(2, contributor), 0, link)).toBeCloseTo(2 + 6, 9);
    expect(roundTimeMs([], 5, link)).toBe(5);
  });

  it('times a round from its totals: bytes shared evenly, all of them on the server link', () => {
    const link = LINK_PRESETS.classroomWifi;
    // 4 contributors of 10 participants: 40 kB up (10 kB each), 1 MB down (100 kB each), one 40 ms slower worker.
    const totals = { wireUp: 40_000, wireDown: 1_000_000, contributors: 4, participants: 10 };
    const computeMs = [10, 10, 10, 50];
    // The shared medium carries all 1.04 MB at 50 Mbit/s: 166.4 ms after the slowest compute.
    const expected = 50 + (1_040_000 * 8) / 50_000 + 2 * link.latencyMs + 7;
    expect(roundTotalsTimeMs(totals, computeMs, 7, link)).toBeCloseTo(expected, 9);
    const each = computeMs.map((ms) => ({ computeMs: ms, upBytes: 10_000, downBytes: 100_000 }));
    expect(roundTotalsTimeMs(totals, computeMs, 7, link)).toBe(
      roundTimeMs(each, 7, link, { downBytes: 1_000_000, upBytes: 40_000 }),
    );
  });

  it('shares a round’s download in proportion to what each contributor was sent, where recorded', () => {
    const link = { ...LINK_PRESETS.homeBroadband, latencyMs: 0 };
    // One sync of 800 kB and three updates of 100 kB: the synced worker's 50 Mbit/s download sets the pace (128 ms).
    const totals = { wireUp: 4000, wireDown: 1_100_000, contributors: 4, participants: 4 };
    const downPayload = { perContributor: [800_000, 100_000, 100_000, 100_000], total: 1_100_000 };
    const proportional = roundTotalsTimeMs({ ...totals, downPayload }, [0, 0, 0, 0], 0, link);
    expect(proportional).toBeCloseTo((800_000 * 8) / 50_000 + (1000 * 8) / 10_000, 9);
    // Evenly, each would get 275 kB: 44 ms.
    expect(roundTotalsTimeMs(totals, [0, 0, 0, 0], 0, link)).toBeCloseTo((275_000 * 8) / 50_000 + 0.8, 9);
  });

  it('paces a tab so that its two waits add up to the round’s communication', () => {
    const d = 407_128;
    const u = 9_024;
    const worker = { downBytes: d, upBytes: u, computeMs: 0 };
    for (const link of [...Object.values(LINK_PRESETS), duplex(20, 10, 50), symmetricLink(2, 30)]) {
      for (const n of [1, 3, 30]) {
        const { downMs, upMs } = pacingMs(link, n, d, u);
        expect(downMs + upMs).toBeCloseTo(roundTimeMs(same(n, worker), 0, link), 9);
        expect(downMs).toBe(pacingMs(link, n, d, 0).downMs);
        expect(upMs).toBeGreaterThanOrEqual(link.latencyMs);
      }
    }
    // On the shared classroom Wi-Fi, 30 tabs: the model reaches each after the AP sent all 30.
    const wifi = pacingMs(LINK_PRESETS.classroomWifi, 30, d, u);
    expect(wifi.downMs).toBeCloseTo((30 * d * 8) / 50_000 + 5, 9);
    expect(wifi.upMs).toBeCloseTo((30 * u * 8) / 50_000 + 5, 9);
    expect(() => pacingMs(LINK_PRESETS.classroomWifi, 0, d, u)).toThrow(RangeError);
  });

  it('has sane presets and refuses a link without bandwidth', () => {
    for (const link of Object.values(LINK_PRESETS)) expect(() => checkLink(link)).not.toThrow();
    expect(LINK_PRESETS.classroomWifi.serverMedium).toBe('shared');
    expect(LINK_PRESETS.homeBroadband.uplinkMbps).toBeLessThan(LINK_PRESETS.homeBroadband.downlinkMbps);
    expect(LINK_PRESETS.datacentre.serverMbps).toBe(10_000);
    expect(describeLink(LINK_PRESETS.homeBroadband)).toBe(
      'workers 10 up / 50 down Mbit/s, server link 1000 Mbit/s full duplex, 20 ms one way',
    );
    expect(describeLink(symmetricLink(2, 30))).toBe('workers 2 Mbit/s each way, no shared server link, 30 ms one way');
    expect(() => checkLink(symmetricLink(0, 1))).toThrow(RangeError);
    expect(() => checkLink(symmetricLink(0, 1))).toThrow(/positive/);
    expect(() => checkLink({ ...symmetricLink(1, 1), downlinkMbps: Number.POSITIVE_INFINITY })).toThrow(/positive/);
    expect(() => checkLink({ ...symmetricLink(1, 1), serverMbps: 0 })).toThrow(/server link/);
    expect(() => checkLink({ ...symmetricLink(1, 1), serverMbps: -5 })).toThrow(RangeError);
    expect(() => checkLink({ ...symmetricLink(1, 1), serverMedium: 'half' as 'shared' })).toThrow(/serverMedium/);
    expect(() => checkLink({ ...symmetricLink(1, 1), latencyMs: -1 })).toThrow(/latency/);
    expect(() => checkLink({ ...symmetricLink(1, 1), latencyMs: Number.NaN })).toThrow(/latency/);
  });
});
