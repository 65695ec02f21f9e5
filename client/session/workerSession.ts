/**
 * A worker tab from start to finish: picks the backend, loads the digits,
 * claims an identity, and then for every round:open decodes the model,
 * trains and compresses on the backend, submits the gradient and records the
 * result in the worker store. React renders the store; nothing here renders.
 */
import { HEADER_BYTES } from '../../core/codec';
import { loadMnist, type MnistData } from '../../core/data';
import type { ModelLayout } from '../../core/model';
import { asBytes, type ProtocolErrorCode, type RoundOpen, type RunId, type WorkerAssignment } from '../../core/protocol';
import { decodeWeights } from '../../core/training/modelCodec';
import { shardIndices } from '../../core/training/shard';
import { createFetchReader } from '../data/fetchReader';
import { isSoftwareAdapter } from '../gpu/adapter';
import { chooseBackend, type GpuContext } from '../gpu/runtime';
import { WorkerChannel } from '../net/workerChannel';
import { claimWorkerIdentity } from '../net/workerIdentity';
import type { WorkerStore } from '../ui/store/workerStore';
import { browserName } from './browserName';
import { sampleDigits, type DigitSample } from './digits';
import { createTrainer, type ComputeDevice, type Trainer } from './trainer';

/** What the page can ask of the session. */
export interface WorkerControls {
  /** Stop taking part in rounds (the identity and the charts stay). */
  pause(): void;
  /** Take part again (or join again after being removed). */
  resume(): void;
}

/** Refusals that only mean "too late for this round": the next round:open follows. */
const ROUND_RACES: ReadonlySet<ProtocolErrorCode | 'timeout' | 'disconnected'> = new Set([
  'stale-version',
  'future-version',
  'not-participant',
  'round-closed',
  'duplicate',
  'wrong-run',
  'disconnected',
]);

/** Bytes of the model's gradient as dense float32 layers (the baseline every chart compares to). */
export function denseBytes(layout: ModelLayout): number {
  return layout.tensors.reduce((sum, tensor) => sum + HEADER_BYTES + 4 * tensor.size, 0);
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** SwiftShader, or an adapter the browser marks as a fallback (a CPU implementation of WebGPU). */
function isSoftware(ctx: GpuContext): boolean {
  return isSoftwareAdapter(ctx.device) || (ctx.adapterInfo as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter === true;
}

function adapterName(info: GPUAdapterInfo): string {
  return info.description || [info.vendor, info.architecture].filter(Boolean).join(' ') || 'unnamed adapter';
}

/** The per-assignment state: its trainer and digits, rebuilt when the run, config or shard changes. */
interface Assigned {
  readonly key: string;
  readonly assignment: WorkerAssignment;
  readonly trainer: Trainer;
  readonly digits: DigitSample;
  readonly denseBytes: number;
}

/** Starts this tab's worker; `runId` is the `?run=` of the page. */
export async function startWorkerSession(store: WorkerStore, runId?: RunId): Promise<WorkerControls> {
  const state = () => store.getState();
  state().setPhase('starting');
  const chosen = await chooseBackend();
  let device: ComputeDevice = chosen.kind === 'webgpu' ? { kind: 'webgpu', ctx: chosen.ctx } : { kind: 'cpu' };
  state().setBackend(chosen.kind === 'webgpu' ? { kind: 'webgpu', adapterName: adapterName(chosen.ctx.adapterInfo), software: isSoftware(chosen.ctx) } : chosen);

  let data: MnistData;
  try {
    data = await loadMnist(createFetchReader());
  } catch (error) {
    state().setPhase('failed');
    state().setNotice({ key: 'worker.notice.digitsFailed', params: { detail: errorText(error) } });
    return { pause() {}, resume() {} };
  }

  let participating = true;
  let current: Assigned | null = null;
  let pending: RoundOpen | null = null;
  let busy = false;

  const fallBackToCpu = (code: 'lost' | 'failed', detail: string) => {
    device = { kind: 'cpu' };
    const reason =
      code === 'lost' ? `The WebGPU device was lost (${detail}); training on the CPU.` : `WebGPU training failed (${detail}); training on the CPU.`;
    state().setBackend({ kind: 'cpu', code, detail, reason });
    if (current !== null) {
      current.trainer.dispose();
      current = { ...current, key: '', trainer: createTrainer({ ...trainerInputs(current.assignment), device }) };
    }
  };
  if (chosen.kind === 'webgpu') {
    void chosen.ctx.lost.then((info) => {
      if (info.reason !== 'destroyed') fallBackToCpu('lost', info.message || info.reason);
    });
  }

  const trainerInputs = (assignment: WorkerAssignment) => ({
    config: assignment.config,
    slot: assignment.slot,
    train: data.train,
    shard: shardIndices(data.train.labels, { split: assignment.config.split, shards: assignment.config.shards, seed: assignment.config.seed }, assignment.shard),
  });

  const assign = (assignment: WorkerAssignment) => {
    const key = `${assignment.runId}|${assignment.slot}|${assignment.shard}|${JSON.stringify(assignment.config)}`;
    state().assigned(assignment);
    if (current?.key === key) return;
    current?.trainer.dispose();
    const inputs = trainerInputs(assignment);
    const trainer = createTrainer({ ...inputs, device });
    const digits = sampleDigits(data.train, inputs.shard);
    current = { key, assignment, trainer, digits, denseBytes: denseBytes(trainer.layout) };
    state().setDigits(digits.pixels.map((pixels, i) => ({ pixels, label: digits.labels[i]!, prediction: null })));
  };

  const train = async (round: RoundOpen, trainer: Trainer, weights: Float32Array) => {
    try {
      return await trainer.round(weights, round.version);
    } catch (error) {
      if (trainer.kind !== 'webgpu') throw error;
      fallBackToCpu('failed', errorText(error));
      return current!.trainer.round(weights, round.version);
    }
  };

  const play = async (round: RoundOpen, here: Assigned) => {
    state().roundOpened(round.version);
    state().setPhase('downloading');
    const weights = decodeWeights(here.trainer.layout, round.layers.map(asBytes));
    state().setPhase('computing');
    const result = await train(round, here.trainer, weights);
    const active = current ?? here;
    if (!participating) return;
    state().setPhase('uploading');
    const sentAt = performance.now();
    const receipt = await channel.submit({
      runId: round.runId,
      workerId: active.assignment.workerId,
      version: round.version,
      layers: result.layers,
      loss: result.loss,
      layerStats: result.layerStats,
      computeMs: result.computeMs + result.compressMs,
    });
    const uploadMs = performance.now() - sentAt;
    if (receipt.ok) {
      let closed = 0;
      let realised = 0;
      let normSq = 0;
      for (const layer of result.layerStats) {
        closed += layer.closedForm;
        realised += layer.realised;
        normSq += layer.gradientNormSq;
      }
      state().roundSent({
        round: round.version,
        loss: result.loss,
        bytes: receipt.bytes,
        denseBytes: active.denseBytes,
        closedRel: normSq > 0 ? closed / normSq : 0,
        realisedRel: normSq > 0 ? realised / normSq : 0,
        computeMs: result.computeMs,
        compressMs: result.compressMs,
        uploadMs,
      });
      state().setNotice(null);
    } else if (!ROUND_RACES.has(receipt.error.code)) {
      state().setNotice({ key: 'worker.notice.refused', params: { round: round.version, detail: receipt.error.message } });
    }
    const { digits } = active;
    const predictions = await active.trainer.predict(weights, digits.images, digits.count);
    state().setDigits(digits.pixels.map((pixels, i) => ({ pixels, label: digits.labels[i]!, prediction: predictions[i]! })));
  };

  const pump = async () => {
    if (busy) return;
    busy = true;
    try {
      // The server may open a round before the join's answer arrives: such a round waits here for its assignment.
      while (pending !== null && current !== null && participating) {
        const round = pending;
        const here = current;
        if (round.runId !== here.assignment.runId) break;
        pending = null;
        try {
          await play(round, here);
        } catch (error) {
          state().setNotice({ key: 'worker.notice.roundFailed', params: { round: round.version, detail: errorText(error) } });
        }
      }
    } finally {
      busy = false;
      const phase = state().phase;
      if (participating && phase !== 'removed' && phase !== 'failed') state().setPhase('waiting');
    }
  };

  const identity = await claimWorkerIdentity();
  state().setPhase('joining');
  const channel = new WorkerChannel({
    identity,
    name: browserName(),
    // Read at every join, so a tab that fell back to the CPU says so when it next rejoins.
    backend: () => {
      const shown = state().backend;
      if (shown.kind === 'webgpu') return { kind: 'webgpu', detail: shown.adapterName };
      return shown.kind === 'cpu' ? { kind: 'cpu', detail: shown.reason } : { kind: 'cpu' };
    },
    ...(runId === undefined ? {} : { runId }),
    listener: {
      onLink: (link) => state().setLink(link),
      onAssigned: (assignment) => {
        assign(assignment);
        if (pending !== null && pending.runId !== assignment.runId) pending = null;
        if (participating && !busy) state().setPhase('waiting');
        void pump();
      },
      onRoundOpen: (round) => {
        if (!participating) return;
        pending = round;
        void pump();
      },
      onRoundClosed: () => {},
      onMetrics: (metrics) => {
        if (current === null || metrics.runId !== current.assignment.runId) return;
        if (metrics.testAccuracy !== null) state().runEvaluated(metrics.testAccuracy);
      },
      onRemoved: (reason) => {
        participating = false;
        pending = null;
        state().setPhase('removed');
        state().setNotice({ key: 'worker.notice.removed', params: { detail: reason } });
      },
      onError: (error) => {
        if (ROUND_RACES.has(error.code)) return;
        state().setNotice({ key: 'common.raw', params: { detail: error.message } });
      },
    },
  });

  return {
    pause() {
      participating = false;
      pending = null;
      channel.leave();
      state().setPhase('paused');
    },
    resume() {
      participating = true;
      state().setNotice(null);
      state().setPhase('joining');
      void channel.join().then((joined) => {
        if (joined && !busy) state().setPhase('waiting');
      });
    },
  };
}
