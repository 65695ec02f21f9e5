/**
 * Where a session's worker trains, and how it got there: the backend the
 * host picked (WebGPU or the CPU), a calibration per setting that may move
 * it to the faster one (calibration.ts), and the move to the CPU when the
 * WebGPU device is lost or a GPU round fails. It builds each assignment's
 * trainer on the chosen device and reports every change to the sink.
 */
import { createModelLayout, heInitialise } from '../../core/model';
import type { RunConfig, WorkerBackend } from '../../core/protocol';
import { isSoftwareAdapter } from '../gpu/runtime/adapter';
import type { Backend, GpuContext } from '../gpu/runtime/device';
import type { WorkerPhase } from '../ui/store/workerStore';
import { calibrateBackends, type Calibration } from './calibration';
import { createTrainer, type ComputeDevice, type Trainer, type TrainerOptions } from './trainer';
import type { WorkerSessionSink } from './workerSession';

/** SwiftShader, or an adapter the browser marks as a fallback (a CPU implementation of WebGPU). */
function isSoftware(ctx: GpuContext): boolean {
  return (
    isSoftwareAdapter(ctx.device) ||
    (ctx.adapterInfo as GPUAdapterInfo & { isFallbackAdapter?: boolean }).isFallbackAdapter === true
  );
}

function adapterName(info: GPUAdapterInfo): string {
  return info.description || [info.vendor, info.architecture].filter(Boolean).join(' ') || 'unnamed adapter';
}

/** The settings a round's time depends on: a calibration holds for every run that shares them. */
function calibrationKey(config: RunConfig): string {
  const { model, batchSize, scheme, budget, levels, bucketSize, errorFeedback, qsgdCoding, terngradClip } = config;
  const knobs = [budget, levels, bucketSize, errorFeedback === true, qsgdCoding, terngradClip];
  return JSON.stringify([model, batchSize, scheme, ...knobs]);
}

export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** What a backend choice reports to, and asks of, its session. */
export interface BackendChoiceHost {
  readonly sink: WorkerSessionSink;
  readonly setPhase: (phase: WorkerPhase) => void;
  /** The device moved to the CPU: the session's current trainer is rebuilt on it. */
  readonly movedToCpu: (device: ComputeDevice) => void;
}

/** A session's compute device, from the host's backend to the calibrated or fallen-back one. */
export class BackendChoice {
  #device: ComputeDevice;
  // The WebGPU device while it works, whichever backend trains: a later setting may be calibrated again.
  #gpu: GpuContext | null;
  #view: WorkerBackend;
  // Calibrations made, per calibrationKey: a worker moved back and forth between runs times each setting once.
  readonly #calibrations = new Map<string, Calibration>();
  readonly #host: BackendChoiceHost;
  readonly #calibrate: boolean;

  constructor(chosen: Backend, host: BackendChoiceHost, calibrate: boolean) {
    this.#host = host;
    this.#calibrate = calibrate;
    this.#device = chosen.kind === 'webgpu' ? { kind: 'webgpu', ctx: chosen.ctx } : { kind: 'cpu' };
    this.#gpu = chosen.kind === 'webgpu' ? chosen.ctx : null;
    this.#view =
      chosen.kind === 'webgpu'
        ? { kind: 'webgpu', detail: adapterName(chosen.ctx.adapterInfo) }
        : { kind: 'cpu', detail: chosen.reason };
    if (chosen.kind === 'webgpu') {
      this.#showWebgpu(chosen.ctx);
      void chosen.ctx.lost.then((info) => {
        if (info.reason !== 'destroyed') this.fallBackToCpu('lost', info.message || info.reason);
      });
    } else host.sink.setBackend({ ...chosen, code: chosen.code ?? 'unknown', detail: chosen.reason });
  }

  /** What the join tells the teacher; a new object only when the report changed. */
  get view(): WorkerBackend {
    return this.#view;
  }

  get device(): ComputeDevice {
    return this.#device;
  }

  /** Moves training to the CPU for good: the WebGPU device was lost, or a round on it failed. */
  fallBackToCpu(code: 'lost' | 'failed', detail: string): void {
    this.#gpu = null;
    // Already on the CPU by calibration: nothing to move, only no more GPU to time.
    if (this.#device.kind === 'cpu') return;
    this.#device = { kind: 'cpu' };
    const reason =
      code === 'lost'
        ? `The WebGPU device was lost (${detail}); training on the CPU.`
        : `WebGPU training failed (${detail}); training on the CPU.`;
    this.#view = { kind: 'cpu', detail: reason };
    this.#host.sink.setBackend({ kind: 'cpu', code, detail, reason });
    this.#host.movedToCpu(this.#device);
  }

  /** The trainer of an assignment: after a calibration when one is due, else on the current device. */
  async trainer(inputs: Omit<TrainerOptions, 'device'>): Promise<Trainer> {
    const gpu = this.#gpu;
    if (this.#calibrate && gpu !== null) return this.#calibratedTrainer(inputs, gpu);
    return createTrainer({ ...inputs, device: this.#device });
  }

  #showWebgpu(ctx: GpuContext): void {
    this.#host.sink.setBackend({
      kind: 'webgpu',
      adapterName: adapterName(ctx.adapterInfo),
      software: isSoftware(ctx),
    });
  }

  #trainOn(choice: Calibration['choice'], ctx: GpuContext, times: Calibration): void {
    const calibration = { webgpuMs: times.webgpuMs, cpuMs: times.cpuMs };
    let next: WorkerBackend;
    if (choice === 'webgpu') {
      this.#device = { kind: 'webgpu', ctx };
      next = { kind: 'webgpu', detail: adapterName(ctx.adapterInfo), calibration };
      this.#showWebgpu(ctx);
    } else {
      this.#device = { kind: 'cpu' };
      const detail = adapterName(ctx.adapterInfo);
      const reason = `The CPU was faster than WebGPU (${detail}) on this device.`;
      next = { kind: 'cpu', detail: reason, calibration };
      this.#host.sink.setBackend({ kind: 'cpu', code: 'calibrated', detail, reason });
    }
    // A new object only for a new report: the session rejoins when the report changed.
    if (JSON.stringify(next) !== JSON.stringify(this.#view)) this.#view = next;
    this.#host.sink.setCalibration({ state: 'done', ...times });
  }

  /**
   * Times both backends on this setting's rounds (the first time it is seen) and returns a fresh trainer on the faster.
   */
  async #calibratedTrainer(inputs: Omit<TrainerOptions, 'device'>, ctx: GpuContext): Promise<Trainer> {
    const { sink, setPhase } = this.#host;
    const key = calibrationKey(inputs.config);
    const known = this.#calibrations.get(key);
    if (known !== undefined) {
      this.#trainOn(known.choice, ctx, known);
      return createTrainer({ ...inputs, device: this.#device });
    }
    setPhase('calibrating');
    const onGpu = createTrainer({ ...inputs, device: { kind: 'webgpu', ctx } });
    const onCpu = createTrainer({ ...inputs, device: { kind: 'cpu' } });
    const weights = heInitialise(createModelLayout(inputs.config.model), inputs.config.seed);
    let result: Calibration;
    try {
      result = await calibrateBackends(onGpu, onCpu, weights, {
        now: () => performance.now(),
        onProgress: (done, total) => sink.setCalibration({ state: 'measuring', done, total }),
      });
    } catch (error) {
      onGpu.dispose();
      this.fallBackToCpu('failed', errorText(error));
      return onCpu.restart();
    }
    this.#calibrations.set(key, result);
    this.#trainOn(result.choice, ctx, result);
    const [winner, loser] = result.choice === 'webgpu' ? [onGpu, onCpu] : [onCpu, onGpu];
    loser.dispose();
    return winner.restart();
  }
}
