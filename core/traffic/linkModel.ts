/**
 * A simulated network link and the wall-clock time of a synchronous round
 * under it (docs/protocol.md, "Link model"). A message of b bytes counts as
 * delivered b·8 / bandwidth + latency after it was sent. One round:
 *
 *   T = max over workers w of (down_w·8/D + ℓ + compute_w + compress_w + up_w·8/U + ℓ)
 *       + the server's decode and update time
 *
 * with U, D the uplink and downlink bandwidth of a worker and ℓ the one-way
 * latency: the round closes when its slowest worker's gradient is in. The
 * swarm and `npm run compare` evaluate this from measured compute times and
 * counted bytes without sleeping; a tab given a link really waits.
 */

/** A worker's link: bandwidth each way (Mbit/s, 10⁶ bit/s) and one-way latency. */
export interface LinkModel {
  readonly name: string;
  readonly uplinkMbps: number;
  readonly downlinkMbps: number;
  readonly latencyMs: number;
}

/** Links to try: a classroom's shared Wi-Fi, a phone, a data centre. */
export const LINK_PRESETS = {
  /** 30 students sharing 20 Mbit/s each way: 0.67 Mbit/s per worker. */
  schoolWifi: {
    name: 'school Wi-Fi, 30 students sharing 20 Mbit/s',
    uplinkMbps: 20 / 30,
    downlinkMbps: 20 / 30,
    latencyMs: 15,
  },
  /** A typical 4G phone: 10 Mbit/s up, 30 down. */
  lte: { name: '4G', uplinkMbps: 10, downlinkMbps: 30, latencyMs: 40 },
  /** A data-centre network. */
  datacenter: { name: 'datacenter 10 Gbit/s', uplinkMbps: 10_000, downlinkMbps: 10_000, latencyMs: 0.1 },
} as const satisfies Record<string, LinkModel>;

/** A symmetric link of `mbps` each way. */
export function symmetricLink(mbps: number, latencyMs: number): LinkModel {
  return { name: `${mbps} Mbit/s`, uplinkMbps: mbps, downlinkMbps: mbps, latencyMs };
}

/** Throws RangeError unless the link's bandwidths are positive and its latency ≥ 0. */
export function checkLink(link: LinkModel): void {
  if (!(
    link.uplinkMbps > 0 &&
    link.downlinkMbps > 0 &&
    Number.isFinite(link.uplinkMbps) &&
    Number.isFinite(link.downlinkMbps)
  )) {
    throw new RangeError(
      `link ${link.name}: bandwidths must be positive, got ${link.uplinkMbps} up, ${link.downlinkMbps} down`,
    );
  }
  if (!(link.latencyMs >= 0 && Number.isFinite(link.latencyMs)))
    throw new RangeError(`link ${link.name}: latency must be ≥ 0, got ${link.latencyMs}`);
}

/** Milliseconds until `bytes` sent at `mbps` are delivered: bytes·8 / bandwidth + latency. */
export function deliveryMs(bytes: number, mbps: number, latencyMs: number): number {
  return (bytes * 8) / (mbps * 1000) + latencyMs;
}

/** One worker's part of a round: what it received and sent (wire bytes) and its compute and compression time. */
export interface WorkerRoundCost {
  readonly downBytes: number;
  readonly upBytes: number;
  /** Forward/backward plus compression and encoding, ms. */
  readonly computeMs: number;
}

/** The simulated wall-clock time of one synchronous round under `link`, ms. */
export function roundTimeMs(workers: readonly WorkerRoundCost[], serverMs: number, link: LinkModel): number {
  let slowest = 0;
  for (const w of workers) {
    const t =
      deliveryMs(w.downBytes, link.downlinkMbps, link.latencyMs) +
      w.computeMs +
      deliveryMs(w.upBytes, link.uplinkMbps, link.latencyMs);
    slowest = Math.max(slowest, t);
  }
  return slowest + serverMs;
}
