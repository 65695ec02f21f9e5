/**
 * The GPU runtime shared by every kernel: one `GpuContext` shape whether the
 * device came from a browser tab (`requestBrowserGpu`) or from Dawn in Node
 * (`requestNodeGpu` in nodeDevice.ts), and the choice between WebGPU and the
 * CPU backend (`chooseBackend`). Pools and timing live in runtime/pools.ts and
 * runtime/timer.ts.
 */

/** Device limits that the kernels size their work by (bytes or counts, as in GPUSupportedLimits). */
export interface GpuLimits {
  readonly maxStorageBuffersPerShaderStage: number;
  readonly maxComputeWorkgroupStorageSize: number; // bytes
  readonly maxStorageBufferBindingSize: number; // bytes
  readonly maxBufferSize: number; // bytes
  readonly maxComputeInvocationsPerWorkgroup: number;
  readonly maxComputeWorkgroupsPerDimension: number;
}

/** Optional features the kernels may use, as granted on the device (not merely offered by the adapter). */
export interface GpuFeatures {
  /** `timestamp-query`: GPU-side pass timing (runtime/timer.ts); else wall time. */
  readonly timestampQuery: boolean;
  /** `subgroups`: subgroup built-ins in WGSL. */
  readonly subgroups: boolean;
  /** `shader-f16`: f16 in WGSL. */
  readonly shaderF16: boolean;
}

/** Why a device went away: GPUDeviceLostInfo, flattened. `destroyed` means we destroyed it on purpose. */
export interface GpuLostInfo {
  readonly reason: GPUDeviceLostReason;
  readonly message: string;
}

/** A ready WebGPU device with what the kernels need to know about it. */
export interface GpuContext {
  readonly device: GPUDevice;
  readonly adapterInfo: GPUAdapterInfo;
  readonly features: GpuFeatures;
  readonly limits: GpuLimits;
  /** Resolves (never rejects) once the device is lost; after that Dawn and browsers need a fresh device. */
  readonly lost: Promise<GpuLostInfo>;
}

/** The limits requested from the adapter: the adapter's own maxima, so big layers fit where the hardware allows. */
const WANTED_LIMITS = [
  'maxStorageBuffersPerShaderStage',
  'maxComputeWorkgroupStorageSize',
  'maxStorageBufferBindingSize',
  'maxBufferSize',
  'maxComputeInvocationsPerWorkgroup',
  'maxComputeWorkgroupsPerDimension',
] as const satisfies readonly (keyof GpuLimits & keyof GPUSupportedLimits)[];

/** Optional features requested when the adapter offers them. */
const WANTED_FEATURES: readonly GPUFeatureName[] = ['timestamp-query', 'subgroups', 'shader-f16'];

/** Why no WebGPU device could be had; `message` says what to do about it. */
export type GpuUnavailableReason =
  | 'insecure-context' // navigator.gpu is hidden outside https / localhost
  | 'unsupported' // the browser has no WebGPU (or it is switched off)
  | 'no-adapter' // WebGPU exists but offers no adapter (blocklisted GPU, disabled)
  | 'device-failed'; // the adapter refused a device

/** Thrown by the device requests: a readable message plus a machine-readable reason. */
export class GpuUnavailableError extends Error {
  override readonly name = 'GpuUnavailableError';
  constructor(
    readonly reason: GpuUnavailableReason,
    message: string,
  ) {
    super(message);
  }
}

/** Options of `openGpuContext`. */
export interface OpenGpuOptions {
  /** Label of the device (shows in validation errors). */
  readonly label?: string;
  /**
   * Called once when the device is lost, with the reason (also when it is destroyed on purpose: reason `destroyed`).
   */
  readonly onLost?: (info: GpuLostInfo) => void;
  /** Adapter preference, browsers only. */
  readonly powerPreference?: GPUPowerPreference;
}

/**
 * Opens a device on the first adapter of `gpu` (navigator.gpu, or Dawn's GPU
 * object in Node) with the adapter's maximum limits for the ones in
 * `GpuLimits` and the optional features it offers.
 */
export async function openGpuContext(gpu: GPU, options: OpenGpuOptions = {}): Promise<GpuContext> {
  // Some browsers reject instead of answering null when WebGPU is switched off.
  const adapter = await gpu
    .requestAdapter(options.powerPreference === undefined ? {} : { powerPreference: options.powerPreference })
    .catch(() => null);
  if (adapter === null) {
    throw new GpuUnavailableError(
      'no-adapter',
      'WebGPU is present but offers no adapter: the GPU may be blocklisted or hardware acceleration switched off ' +
        '(in Chrome, see chrome://gpu). Using the CPU instead.',
    );
  }
  const requiredLimits: Record<string, number> = {};
  for (const name of WANTED_LIMITS) requiredLimits[name] = adapter.limits[name];
  const requiredFeatures = WANTED_FEATURES.filter((feature) => adapter.features.has(feature));
  let device: GPUDevice;
  try {
    device = await adapter.requestDevice({ label: options.label ?? 'atomo', requiredLimits, requiredFeatures });
  } catch (error) {
    throw new GpuUnavailableError(
      'device-failed',
      `The WebGPU adapter refused a device: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const lost = device.lost.then((info): GpuLostInfo => ({ reason: info.reason, message: info.message }));
  // A separate chain, so a throwing callback cannot turn `lost` into a rejection.
  if (options.onLost !== undefined) void lost.then(options.onLost);
  const limits = {} as Record<(typeof WANTED_LIMITS)[number], number>;
  for (const name of WANTED_LIMITS) limits[name] = device.limits[name];
  return {
    device,
    adapterInfo: adapter.info,
    features: {
      timestampQuery: device.features.has('timestamp-query'),
      subgroups: device.features.has('subgroups'),
      shaderF16: device.features.has('shader-f16'),
    },
    limits,
    lost,
  };
}

/** Options of `requestBrowserGpu`; the overrides exist so tests can play a browser. */
export interface BrowserGpuOptions extends OpenGpuOptions {
  /** navigator.gpu by default; `null` plays a browser without WebGPU. */
  readonly gpu?: GPU | null;
  /** globalThis.isSecureContext by default. */
  readonly secureContext?: boolean;
}

/**
 * A WebGPU device in a browser tab. Throws GpuUnavailableError with a message
 * a student can act on: no WebGPU (and whether the page or the browser is the
 * cause), no adapter, or no device.
 */
export async function requestBrowserGpu(options: BrowserGpuOptions = {}): Promise<GpuContext> {
  const gpu = options.gpu === undefined ? (globalThis.navigator as Navigator | undefined)?.gpu : options.gpu;
  if (gpu === undefined || gpu === null) {
    const secure = options.secureContext ?? globalThis.isSecureContext ?? false;
    if (!secure) {
      throw new GpuUnavailableError(
        'insecure-context',
        'This browser has no WebGPU on this page: WebGPU needs a secure context, and this page is not one. ' +
          'Open it over https, or as http://localhost / http://127.0.0.1.',
      );
    }
    throw new GpuUnavailableError(
      'unsupported',
      'This browser has no WebGPU: it does not support it, or it is switched off. ' +
        'A recent Chrome or Edge has it on by default; other browsers may need it enabled.',
    );
  }
  return openGpuContext(gpu, options);
}

/** Where the training maths runs: a WebGPU device, or plain TypeScript with the reason it is not the GPU. */
export type Backend =
  | { readonly kind: 'webgpu'; readonly ctx: GpuContext }
  | { readonly kind: 'cpu'; readonly reason: string; readonly code?: CpuReason };

/**
 * Why a tab is on the CPU, machine-readable (the page translates it): no GPU for one of GpuUnavailableReason, or
 * forced.
 */
export type CpuReason = GpuUnavailableReason | 'forced' | 'forced-url';

/** Options of `chooseBackend`. */
export interface ChooseBackendOptions extends BrowserGpuOptions {
  /** Forces the CPU backend (a setting, a test); the reason names who forced it. */
  readonly forceCpu?: boolean;
  /** The page address; `?cpu` in its query forces the CPU. Defaults to location.href in a browser. */
  readonly url?: string;
}

function flagInUrl(url: string, name: string): boolean {
  const value = new URL(url, 'http://localhost/').searchParams.get(name);
  return value !== null && value !== '0' && value !== 'false';
}

/** True when the query string asks for the CPU backend: `?cpu`, `?cpu=1`, `?cpu=true` (not `?cpu=0` / `?cpu=false`). */
export function cpuRequestedByUrl(url: string): boolean {
  return flagInUrl(url, 'cpu');
}

/** True when the query string forces WebGPU, untimed against the CPU: `?webgpu` (spelt like `?cpu`). */
export function webgpuRequestedByUrl(url: string): boolean {
  return flagInUrl(url, 'webgpu');
}

/**
 * Picks the backend for this tab: WebGPU when it can be had, otherwise the
 * CPU with a reason to show on screen. Never throws for a missing GPU.
 */
export async function chooseBackend(options: ChooseBackendOptions = {}): Promise<Backend> {
  if (options.forceCpu === true) return { kind: 'cpu', code: 'forced', reason: 'CPU backend forced by a setting.' };
  const url = options.url ?? (globalThis.location as Location | undefined)?.href;
  if (url !== undefined && cpuRequestedByUrl(url)) {
    return { kind: 'cpu', code: 'forced-url', reason: 'CPU backend forced by ?cpu in the page address.' };
  }
  try {
    return { kind: 'webgpu', ctx: await requestBrowserGpu(options) };
  } catch (error) {
    if (error instanceof GpuUnavailableError) return { kind: 'cpu', code: error.reason, reason: error.message };
    throw error;
  }
}
