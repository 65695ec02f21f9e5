/**
 * A worker's copy of its run's model under the compressed downlinks
 * (docs/protocol.md, "Downlink"): round:open brings the weights (`full`), the
 * weights and momentum (`sync`), or the update that took the server's model
 * from the previous version to this one (`relay`, `atomo`), which the replica
 * applies with the server's own function (modelUpdate.ts) and checks against
 * the server's hash. The tab, the swarm's workers and the server's simulated
 * workers all keep their model with this class.
 */
import { asBytes, type RoundOpen } from '../protocol';
import type { ModelLayout } from '../model/layout';
import { decodeFlat, decodeWeights, unpackLayers } from './modelCodec';
import { applyDownlink, modelHash, type ModelState, type UpdateRule } from './modelUpdate';

/** What a round:open gave the worker: the weights to train on, or the reason it must ask for a sync first. */
export type ReplicaOutcome =
  | { readonly kind: 'ready'; readonly weights: Float32Array; readonly verified: boolean; readonly hash: string | null }
  | { readonly kind: 'resync'; readonly reason: string };

/** One run's replica: the version it holds, its weights and momentum, or nothing yet. */
export class ModelReplica {
  readonly #layout: ModelLayout;
  #version = -1;
  #state: ModelState | null = null;

  constructor(layout: ModelLayout) {
    this.#layout = layout;
  }

  /** The version the replica holds (−1 when it holds none). */
  get version(): number {
    return this.#state === null ? -1 : this.#version;
  }

  /** modelHash of the replica (null when it holds none). */
  hash(): string | null {
    return this.#state === null ? null : modelHash(this.#state);
  }

  /** Forgets the replica (the worker left, or asked for a sync). */
  clear(): void {
    this.#state = null;
    this.#version = -1;
  }

  /**
   * Brings the replica to `round.version`. `rule` is the run's aggregation
   * and optimiser, as the server applied them. Never throws on what the
   * server sent: anything that cannot be applied, or a hash that does not
   * match, clears the replica and answers 'resync'.
   */
  receive(round: RoundOpen, rule: UpdateRule): ReplicaOutcome {
    const layout = this.#layout;
    try {
      switch (round.delivery) {
        case 'full':
          this.clear();
          return {
            kind: 'ready',
            weights: decodeWeights(layout, round.layers.map(asBytes)),
            verified: false,
            hash: null,
          };
        case 'sync': {
          if (round.velocity === undefined) return this.#resync('a sync without the momentum');
          const state = {
            params: decodeWeights(layout, round.layers.map(asBytes)),
            velocity: decodeFlat(asBytes(round.velocity), layout.parameterCount),
          };
          return this.#adopt(round, state);
        }
        case 'relay':
        case 'atomo':
          return this.#update(round, rule);
      }
    } catch (error) {
      return this.#resync(error instanceof Error ? error.message : String(error));
    }
  }

  #update(round: RoundOpen, rule: UpdateRule): ReplicaOutcome {
    const state = this.#state;
    if (state !== null && this.#version === round.version) return this.#adopt(round, state);
    if (state === null || this.#version !== round.version - 1)
      return this.#resync(`the replica is at version ${this.version}, the update starts at ${round.version - 1}`);
    if (round.delivery === 'atomo')
      return this.#adopt(
        round,
        applyDownlink(this.#layout, state, { kind: 'atomo', layers: round.layers.map(asBytes) }, rule),
      );
    const count = this.#layout.tensors.length;
    const multipliers = round.multipliers ?? [];
    const lengths = round.relayedLengths ?? [];
    if (round.relayed === undefined || lengths.length !== multipliers.length * count) {
      return this.#resync(`${lengths.length} relayed layers for ${multipliers.length} contributions`);
    }
    const layers = unpackLayers(asBytes(round.relayed), lengths);
    const contributions = multipliers.map((multiplier, c) => ({
      layers: layers.slice(c * count, (c + 1) * count),
      multiplier,
    }));
    return this.#adopt(round, applyDownlink(this.#layout, state, { kind: 'relay', contributions }, rule));
  }

  /** Keeps `state` as version round.version if its hash is the server's. */
  #adopt(round: RoundOpen, state: ModelState): ReplicaOutcome {
    const hash = modelHash(state);
    if (round.hash !== undefined && hash !== round.hash)
      return this.#resync(`hash ${hash} differs from the server's ${round.hash} at version ${round.version}`);
    this.#state = state;
    this.#version = round.version;
    // A copy: the caller may hand it to a page or a trainer; the replica's own state must stay the server's.
    return { kind: 'ready', weights: state.params.slice(), verified: round.hash !== undefined, hash };
  }

  #resync(reason: string): ReplicaOutcome {
    this.clear();
    return { kind: 'resync', reason };
  }
}
