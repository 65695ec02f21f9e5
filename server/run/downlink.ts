/**
 * What goes down to a run's workers (docs/protocol.md, "Downlink"): the dense
 * model (`full`), or under `auto`, `relay` and `atomo` the update that took
 * the model to its version, and syncs (weights and momentum) for replicas
 * that are behind. Each version's encodings and hash are built once.
 */
import type { Aggregate } from '../../core/aggregation';
import type { ModelLayout } from '../../core/model/layout';
import type {
  DownlinkChoice,
  DownlinkLayerVariance,
  DownlinkMode,
  ModelVersion,
  RoundOpen,
  RunConfig,
  RunId,
  WorkerId,
} from '../../core/protocol';
import { relaysGradients } from '../../core/schema/runConfig';
import { encodeFlat, encodeWeights, packLayers } from '../../core/training/modelCodec';
import { compressUpdate, modelHash, stepModel, type ModelState } from '../../core/training/modelUpdate';
import type { Member, Members } from './members';
import type { OpenRound } from './round';

/** One round:open message and the workers it goes to. */
export interface RoundDelivery {
  readonly workers: readonly WorkerId[];
  readonly message: RoundOpen;
}

/** A round:open message, whom it goes to, how it delivers the model and its bytes. */
type KindedDelivery = RoundDelivery & { kind: 'full' | 'sync' | 'update'; bytes: number };

/** The fields every round:open message of a round shares. */
type MessageBase = { readonly runId: RunId; readonly version: ModelVersion; readonly deadline: number };

/** The run's model at its current version, as the downlink reads it. */
export interface ModelView {
  readonly runId: RunId;
  readonly version: ModelVersion;
  readonly params: Float32Array;
  readonly velocity: Float32Array;
  readonly layout: ModelLayout;
  /** How the model travels: the run's setting, in one process and in a cluster alike. */
  readonly mode: DownlinkMode;
}

/**
 * What takes the model from version `base` to base + 1 under a compressed downlink, as round:open sends it, and its
 * bytes.
 */
interface DownlinkUpdate {
  readonly base: number;
  /** Built when a round:open sends it (a relay larger than the model is never packed). */
  readonly message: () => Pick<RoundOpen, 'delivery' | 'layers' | 'relayed' | 'relayedLengths' | 'multipliers'>;
  readonly bytes: number;
  /** How many workers' gradients a relay update forwards (1 for the `atomo` downlink's one compressed update). */
  readonly messages: number;
}

/** Σ of the buffers' byte lengths. */
function byteSum(layers: readonly Uint8Array[]): number {
  return layers.reduce((sum, layer) => sum + layer.byteLength, 0);
}

/**
 * The relay message of a closed round: its contributions' layers in one
 * buffer (socket.io refuses a packet of more than 10 attachments). When
 * some were not kept (received before the run switched to `relay`), the
 * round cannot be relayed: its bytes are infinite, so everyone gets the
 * full model (Downlink.deliveries).
 */
function relayOf(round: OpenRound, base: number): DownlinkUpdate {
  const contributions = round.orderedContributors().map((id) => round.contributions.get(id)!);
  if (contributions.some((c) => c.layers === undefined))
    return { base, message: () => ({ delivery: 'relay', layers: [] }), bytes: Number.POSITIVE_INFINITY, messages: 0 };
  const layers = contributions.flatMap((c) => c.layers!);
  const multipliers = contributions.map((c) => c.multiplier ?? 1);
  let message: ReturnType<DownlinkUpdate['message']> | null = null;
  return {
    base,
    message: () => {
      if (message === null) {
        const { packed, lengths } = packLayers(layers);
        message = { delivery: 'relay', layers: [], relayed: packed, relayedLengths: lengths, multipliers };
      }
      return message;
    },
    bytes: byteSum(layers),
    messages: contributions.length,
  };
}

/**
 * Over how many rounds a sync under `auto` must pay for itself: it costs the momentum's bytes more than the dense
 * model, and each later round in step saves the dense model's bytes less the relay update's.
 */
export const AUTO_SYNC_PAYBACK_ROUNDS = 4;

/**
 * Whether `auto` sends a member behind a sync rather than the dense model: when the `extra` bytes of the momentum
 * are repaid within AUTO_SYNC_PAYBACK_ROUNDS rounds of relaying `updateBytes` instead of `modelBytes`.
 */
export function autoSyncPays(extra: number, modelBytes: number, updateBytes: number): boolean {
  return extra <= AUTO_SYNC_PAYBACK_ROUNDS * (modelBytes - updateBytes);
}

/** What `auto` weighs: the relay update (if any can be sent) against the dense model. */
function autoChoice(update: DownlinkUpdate | null, modelBytes: number): DownlinkChoice {
  const relayable = update !== null && Number.isFinite(update.bytes);
  return {
    relayBytes: relayable ? update.bytes : null,
    messages: relayable ? update.messages : 0,
    modelBytes,
  };
}

/** A run's downlink: the encodings of its current version and the update that took the model there. */
export class Downlink {
  /** The encoded weights (and momentum, and hash) of the current version, built once per version. */
  #encodedModel: { version: number; layers: Uint8Array[]; bytes: number } | null = null;
  #encodedState: { version: number; velocity: Uint8Array } | null = null;
  #stateHash: { version: number; hash: string } | null = null;
  /** The message that took the model to the current version (compressed downlinks only), or null. */
  #lastUpdate: DownlinkUpdate | null = null;

  /**
   * Who gets which round:open (docs/protocol.md, "Downlink"). `full` runs
   * send every participant the dense model. Under `relay` and `atomo` a
   * member whose replica is at the previous version gets the update that took
   * the model here, the others a sync (weights and momentum); when the update
   * is larger than the dense model (relaying many workers' messages),
   * everyone gets the dense model instead, and their replicas restart later.
   * `auto` sends a member in step the relay update when it is smaller than
   * the dense model, and a member behind a sync only when it pays back
   * (autoSyncPays); everyone else gets the dense model. `choice` is what
   * `auto` weighed (null under the other modes).
   */
  deliveries(
    view: ModelView,
    members: Members,
    participants: readonly WorkerId[],
    deadline: number,
  ): { deliveries: KindedDelivery[]; choice: DownlinkChoice | null } {
    const base = { runId: view.runId, version: view.version, deadline };
    const model = this.#currentModel(view);
    const full = {
      kind: 'full' as const,
      bytes: model.bytes,
      message: { ...base, delivery: 'full' as const, layers: model.layers },
    };
    const asked = participants.map((id) => members.get(id)!);
    const update = this.#lastUpdate?.base === view.version - 1 ? this.#lastUpdate : null;
    const auto = view.mode === 'auto';
    const choice = auto ? autoChoice(update, model.bytes) : null;
    const relayPays = update !== null && (auto ? update.bytes < model.bytes : update.bytes <= model.bytes);
    if (view.mode === 'full' || (update !== null && !relayPays) || (auto && update === null)) {
      for (const m of asked) m.replicaVersion = null;
      return { deliveries: [{ ...full, workers: participants }], choice };
    }
    const current = (m: Member) =>
      m.replicaVersion === view.version || (update !== null && m.replicaVersion === view.version - 1);
    const inStep = asked.filter(current).map((m) => m.workerId);
    const behind = asked.filter((m) => !current(m));
    const sync = this.sync(view, base);
    // A sync costs the momentum's bytes more than the dense model; `auto` sends one only when later updates repay it.
    const syncs = !auto || autoSyncPays(sync.bytes - model.bytes, model.bytes, update!.bytes);
    const synced = syncs ? behind : [];
    for (const m of asked) m.replicaVersion = syncs || current(m) ? view.version : null;
    const out: KindedDelivery[] = [{ kind: 'sync', workers: synced.map((m) => m.workerId), ...sync }];
    if (!syncs) out.push({ ...full, workers: behind.map((m) => m.workerId) });
    if (update !== null) {
      const message: RoundOpen = { ...base, ...update.message(), hash: this.hash(view) };
      out.push({ kind: 'update', workers: inStep, message, bytes: update.bytes });
    }
    return { deliveries: out, choice };
  }

  /** The sync message of the current version: dense weights and momentum, and their hash. */
  sync(view: ModelView, base: MessageBase): { message: RoundOpen; bytes: number } {
    const model = this.#currentModel(view);
    if (this.#encodedState?.version !== view.version)
      this.#encodedState = { version: view.version, velocity: encodeFlat(view.velocity) };
    const { velocity } = this.#encodedState;
    return {
      message: { ...base, delivery: 'sync', layers: model.layers, velocity, hash: this.hash(view) },
      bytes: model.bytes + velocity.byteLength,
    };
  }

  /** modelHash of the current weights and momentum, computed once per version. */
  hash(view: ModelView): string {
    if (this.#stateHash?.version !== view.version) {
      this.#stateHash = { version: view.version, hash: modelHash({ params: view.params, velocity: view.velocity }) };
    }
    return this.#stateHash.hash;
  }

  /**
   * The SGD step of a closed round from its aggregate, the same step that moves every worker's replica
   * (core/training/modelUpdate.ts); it keeps the update that round:open sends next under `relay` and `atomo`.
   */
  step(
    view: ModelView,
    round: OpenRound,
    combined: Aggregate,
    config: RunConfig,
  ): { next: ModelState; layers: DownlinkLayerVariance[] } {
    const state: ModelState = { params: view.params, velocity: view.velocity };
    let next: ModelState;
    let lastUpdate: DownlinkUpdate | null = null;
    let layers: DownlinkLayerVariance[] = [];
    if (view.mode === 'atomo') {
      // Compress the aggregate, then apply exactly what the workers will decode from those bytes.
      const sent = compressUpdate(view.layout, combined.value, config.downlinkBudget, config.seed, view.version);
      next = stepModel(state, sent.estimate, config.learningRate, config.momentum);
      lastUpdate = {
        base: view.version,
        message: () => ({ delivery: 'atomo', layers: sent.layers }),
        bytes: byteSum(sent.layers),
        messages: 1,
      };
      layers = sent.stats;
    } else {
      next = stepModel(state, combined.value, config.learningRate, config.momentum);
      if (relaysGradients(view.mode)) lastUpdate = relayOf(round, view.version);
    }
    this.#lastUpdate = lastUpdate;
    return { next, layers };
  }

  /** Drops the last update and every member's replica: each gets a sync at its next round. */
  forget(members: Members): void {
    this.#lastUpdate = null;
    this.#encodedState = null;
    this.#stateHash = null;
    for (const m of members.values()) m.replicaVersion = null;
  }

  /** Forgets everything, the encoded weights too: the model restarts at version 0 with other weights. */
  reset(members: Members): void {
    this.#encodedModel = null;
    this.forget(members);
  }

  #currentModel(view: ModelView): { layers: Uint8Array[]; bytes: number } {
    if (this.#encodedModel?.version !== view.version) {
      const layers = encodeWeights(view.layout, view.params);
      this.#encodedModel = { version: view.version, layers, bytes: layers.reduce((sum, l) => sum + l.length, 0) };
    }
    return this.#encodedModel;
  }
}
