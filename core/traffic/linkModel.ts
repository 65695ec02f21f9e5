/**
 * A simulated network and the wall-clock time of a synchronous round on it
 * (docs/protocol.md, "Link model"). Every worker has its own link (uplink U
 * and downlink D, Mbit/s, 10⁶ bit/s, possibly asymmetric) to the server, whose
 * own link of B Mbit/s carries all N workers' traffic: either one shared
 * medium (Wi-Fi: one access point's airtime, both directions together) or a
 * full-duplex link (B each way). A message of b bytes takes b·8/rate, plus
 * the one-way latency ℓ. One round of N workers w, worker w receiving d_w
 * bytes, computing (and compressing and encoding) for C_w ms and sending u_w:
 *
 *   per-worker path  P = max_w (d_w·8/D + C_w + u_w·8/U)
 *   server link      L = Σ_w (d_w + u_w)·8/B          shared medium
 *                    L = max(Σ_w d_w, Σ_w u_w)·8/B     full duplex
 *   T = max(P, max_w C_w + L) + 2ℓ + the server's decode and update time
 *
 * With N equal messages d, u this is the slowest compute plus the larger of
 * the per-worker term d·8/D + u·8/U and the server-link term (N·(d + u)·8/B,
 * or max(N·d, N·u)·8/B: a duplex link sends the model to some workers while
 * it takes in others' gradients). The downlink modes differ only in d_w, the
 * bytes each put on the link: the float32 model (`full`, N unicasts), the
 * round's compressed gradients (`relay`) or one compressed update (`atomo`),
 * each sent to every worker in step, and the model and momentum (a sync) to a
 * worker behind; `auto` sends each worker the smaller of the relay and the
 * model (or a sync), so its d_w differ from worker to worker and the slowest
 * path is the largest download's.
 * A link without a server capacity (null) has no shared bottleneck: every
 * worker's own path sets the pace. The swarm and `npm run compare` evaluate
 * this from measured times and counted bytes without sleeping; a tab given a
 * link really waits (pacingMs).
 */

/** Whether the server link's capacity is shared by both directions (one medium) or available each way (duplex). */
export const SERVER_MEDIA = ['shared', 'duplex'] as const;
export type ServerMedium = (typeof SERVER_MEDIA)[number];

/** A network: every worker's link, the server's link, and the one-way latency. */
export interface LinkModel {
  readonly name: string;
  /** Each worker's own link to the server, Mbit/s each way. */
  readonly uplinkMbps: number;
  readonly downlinkMbps: number;
  /** The server link's capacity, Mbit/s (each way when duplex, both ways together when shared); null: unlimited. */
  readonly serverMbps: number | null;
  readonly serverMedium: ServerMedium;
  readonly latencyMs: number;
}

/** The three networks of the comparison and the dashboard. */
export const LINK_PRESETS = {
  /**
   * One Wi-Fi access point serving the whole room, both ways: 802.11n/ac in a crowded classroom gives some 50 Mbit/s
   * of airtime in all (far below its PHY rate); a device alone on it can use all of it; ~5 ms one way on a LAN.
   */
  classroomWifi: {
    name: 'classroom Wi-Fi',
    uplinkMbps: 50,
    downlinkMbps: 50,
    serverMbps: 50,
    serverMedium: 'shared',
    latencyMs: 5,
  },
  /** Workers at home on typical cable/DSL plans (10 up, 50 down) to a cloud server on a 1 Gbit/s port, ~20 ms away. */
  homeBroadband: {
    name: 'home broadband',
    uplinkMbps: 10,
    downlinkMbps: 50,
    serverMbps: 1000,
    serverMedium: 'duplex',
    latencyMs: 20,
  },
  /** A parameter server on a 10 Gbit/s NIC and workers on 1 Gbit/s ports of one switch, full duplex, ~0.1 ms. */
  datacentre: {
    name: 'datacentre',
    uplinkMbps: 1000,
    downlinkMbps: 1000,
    serverMbps: 10_000,
    serverMedium: 'duplex',
    latencyMs: 0.1,
  },
} as const satisfies Record<string, LinkModel>;

/** A link of `mbps` each way per worker and no shared server bottleneck. */
export function symmetricLink(mbps: number, latencyMs: number): LinkModel {
  return {
    name: `${mbps} Mbit/s`,
    uplinkMbps: mbps,
    downlinkMbps: mbps,
    serverMbps: null,
    serverMedium: 'duplex',
    latencyMs,
  };
}

const positive = (x: number) => x > 0 && Number.isFinite(x);

/** The link in words, e.g. `workers 10 up / 50 down Mbit/s, server 1000 Mbit/s full duplex, 20 ms one way`. */
export function describeLink(link: LinkModel): string {
  const workers =
    link.uplinkMbps === link.downlinkMbps
      ? `workers ${link.uplinkMbps} Mbit/s each way`
      : `workers ${link.uplinkMbps} up / ${link.downlinkMbps} down Mbit/s`;
  const server =
    link.serverMbps === null
      ? 'no shared server link'
      : link.serverMedium === 'shared'
        ? `server link ${link.serverMbps} Mbit/s shared by every worker both ways`
        : `server link ${link.serverMbps} Mbit/s full duplex`;
  return `${workers}, ${server}, ${link.latencyMs} ms one way`;
}

/** Throws RangeError unless the link's bandwidths are positive and finite and its latency ≥ 0. */
export function checkLink(link: LinkModel): void {
  if (!(positive(link.uplinkMbps) && positive(link.downlinkMbps))) {
    throw new RangeError(
      `link ${link.name}: bandwidths must be positive, got ${link.uplinkMbps} up, ${link.downlinkMbps} down`,
    );
  }
  if (link.serverMbps !== null && !positive(link.serverMbps))
    throw new RangeError(`link ${link.name}: the server link must be positive or null, got ${link.serverMbps}`);
  if (link.serverMedium !== 'shared' && link.serverMedium !== 'duplex')
    throw new RangeError(`link ${link.name}: serverMedium must be shared or duplex, got ${String(link.serverMedium)}`);
  if (!(link.latencyMs >= 0 && Number.isFinite(link.latencyMs)))
    throw new RangeError(`link ${link.name}: latency must be ≥ 0, got ${link.latencyMs}`);
}

/** Milliseconds for `bytes` at `mbps`: bytes·8 / bandwidth. */
export function transferMs(bytes: number, mbps: number): number {
  return (bytes * 8) / (mbps * 1000);
}

/** Milliseconds until `bytes` sent at `mbps` are delivered: bytes·8 / bandwidth + latency. */
export function deliveryMs(bytes: number, mbps: number, latencyMs: number): number {
  return transferMs(bytes, mbps) + latencyMs;
}

/**
 * The server link's busy time in a round that carries `downBytes` to the workers and `upBytes` from them, all
 * workers together, ms: (down + up)·8/B on a shared medium, max(down, up)·8/B on a duplex link, 0 when unlimited.
 */
export function serverLinkMs(link: LinkModel, downBytes: number, upBytes: number): number {
  if (link.serverMbps === null) return 0;
  const bytes = link.serverMedium === 'shared' ? downBytes + upBytes : Math.max(downBytes, upBytes);
  return transferMs(bytes, link.serverMbps);
}

/** One worker's part of a round: what it received and sent (wire bytes) and its compute time. */
export interface WorkerRoundCost {
  readonly downBytes: number;
  readonly upBytes: number;
  /** Forward/backward plus compression and encoding, ms. */
  readonly computeMs: number;
}

/** What the server link carried in a round, when not just the sums over `workers` (e.g. models to non-contributors). */
export interface ServerBytes {
  readonly downBytes: number;
  readonly upBytes: number;
}

/**
 * Where one round's time goes, ms: its parts add up to the round's time (roundTimeMs). The round waits for the
 * larger of two chains (the module comment's T): one worker's download, compute and upload on its own link (the
 * slowest such path), or the slowest compute and then the server link's busy time. The chain that sets the round
 * keeps its parts; the other chain's are 0 (a worker's link is then idle while the server link is busy, or the
 * server link has slack). Both latencies and the server's own time are always there.
 */
export interface RoundTimeParts {
  /** The compute (with compression and encoding) of the worker whose chain sets the round. */
  readonly computeMs: number;
  /** That worker's download and upload on its own link (0 when the server link sets the round). */
  readonly downMs: number;
  readonly upMs: number;
  /** The server link's busy time for every worker's messages (0 when a worker's own path sets the round). */
  readonly serverLinkMs: number;
  /** Both one-way latencies. */
  readonly latencyMs: number;
  /** The server's decode and update. */
  readonly serverMs: number;
}

/** The round's time from its parts, added in the order of the module comment's T. */
export function partsTotalMs(p: RoundTimeParts): number {
  return p.downMs + p.computeMs + p.upMs + p.serverLinkMs + p.latencyMs + p.serverMs;
}

/** Where one synchronous round's time goes under `link`; the server link carries `server`'s bytes (see roundTimeMs). */
export function roundTimeParts(
  workers: readonly WorkerRoundCost[],
  serverMs: number,
  link: LinkModel,
  server?: ServerBytes,
): RoundTimeParts {
  const latencyMs = 2 * link.latencyMs;
  if (workers.length === 0) return { computeMs: 0, downMs: 0, upMs: 0, serverLinkMs: 0, latencyMs: 0, serverMs };
  let path = -Infinity;
  let slowest = { computeMs: 0, downMs: 0, upMs: 0 };
  let compute = 0;
  let down = 0;
  let up = 0;
  for (const w of workers) {
    const downMs = transferMs(w.downBytes, link.downlinkMbps);
    const upMs = transferMs(w.upBytes, link.uplinkMbps);
    if (downMs + w.computeMs + upMs > path) {
      path = downMs + w.computeMs + upMs;
      slowest = { computeMs: w.computeMs, downMs, upMs };
    }
    compute = Math.max(compute, w.computeMs);
    down += w.downBytes;
    up += w.upBytes;
  }
  const shared = serverLinkMs(link, server?.downBytes ?? down, server?.upBytes ?? up);
  return compute + shared >= path
    ? { computeMs: compute, downMs: 0, upMs: 0, serverLinkMs: shared, latencyMs, serverMs }
    : { ...slowest, serverLinkMs: 0, latencyMs, serverMs };
}

/**
 * The simulated wall-clock time of one synchronous round under `link`, ms (the module comment's T); the server link
 * carries `server`'s bytes, by default the sums over `workers`.
 */
export function roundTimeMs(
  workers: readonly WorkerRoundCost[],
  serverMs: number,
  link: LinkModel,
  server?: ServerBytes,
): number {
  return partsTotalMs(roundTimeParts(workers, serverMs, link, server));
}

/** A closed round as its totals record it: the wire bytes each way, who was sent the model and who contributed. */
export interface RoundTotals {
  readonly wireUp: number;
  readonly wireDown: number;
  readonly contributors: number;
  readonly participants: number;
  /**
   * The payload bytes each contributor was sent and the round's payload down, where recorded: its downloads are then
   * shared in proportion (a sync, the dense model and an update differ in size), else evenly.
   */
  readonly downPayload?: { readonly perContributor: readonly number[]; readonly total: number };
}

/**
 * Where the time of a round known by its totals (a history's or a dashboard's round) goes: each contributor with its
 * own compute time, the round's wire bytes shared (up evenly over the contributors, down in proportion to
 * `downPayload` or else evenly over the participants) and all of them on the server link, models sent to
 * participants that did not contribute included.
 */
export function roundTotalsParts(
  round: RoundTotals,
  contributorMs: readonly number[],
  serverMs: number,
  link: LinkModel,
): RoundTimeParts {
  const upBytes = round.wireUp / Math.max(1, round.contributors);
  const evenDown = round.wireDown / Math.max(1, round.participants);
  const payload = round.downPayload;
  const downBytes = (i: number) =>
    payload === undefined || !(payload.total > 0)
      ? evenDown
      : (round.wireDown * (payload.perContributor[i] ?? 0)) / payload.total;
  return roundTimeParts(
    contributorMs.map((computeMs, i) => ({ computeMs, upBytes, downBytes: downBytes(i) })),
    serverMs,
    link,
    { downBytes: round.wireDown, upBytes: round.wireUp },
  );
}

/** The time of a round known by its totals, ms: the sum of roundTotalsParts. */
export function roundTotalsTimeMs(
  round: RoundTotals,
  contributorMs: readonly number[],
  serverMs: number,
  link: LinkModel,
): number {
  return partsTotalMs(roundTotalsParts(round, contributorMs, serverMs, link));
}

/** How long one worker waits for each direction of its round (both include the latency). */
export interface Pacing {
  readonly downMs: number;
  readonly upMs: number;
}

/**
 * How a tab paces its own round when it knows only its own messages (`downBytes` received, `upBytes` sent) and that
 * `participants` workers send and receive messages like them: together the two waits are the round's communication
 * in roundTimeMs (the part beyond compute and the server's time). The download waits for its own link or for the
 * server link to send every participant its message, whichever is slower: N·down·8/B (either medium); the upload
 * waits for the rest. `upBytes` may be 0 while the upload is not known yet: `downMs` does not depend on it.
 */
export function pacingMs(link: LinkModel, participants: number, downBytes: number, upBytes: number): Pacing {
  if (!(Number.isInteger(participants) && participants >= 1))
    throw new RangeError(`pacing: participants must be an integer ≥ 1, got ${participants}`);
  const own = transferMs(downBytes, link.downlinkMbps);
  const down = Math.max(own, serverLinkMs(link, participants * downBytes, 0));
  const both = Math.max(
    own + transferMs(upBytes, link.uplinkMbps),
    serverLinkMs(link, participants * downBytes, participants * upBytes),
  );
  return { downMs: down + link.latencyMs, upMs: both - down + link.latencyMs };
}
