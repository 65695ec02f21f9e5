/**
 * Validation of every client message before it touches state (docs/design.md,
 * "Server: rounds and validation").
 * Each parser takes what socket.io delivered (unknown: any JSON and binary a
 * client chose to send) and returns a typed value or throws ProtocolFault
 * naming the first thing wrong.
 */
import { indicatorRange } from '../../core/atomo/indicator';
import { sampleDecomposition, type LayerSample } from '../../core/atomo/types';
import { maxLayerBytes } from '../../core/codec';
import type { ModelLayout } from '../../core/model/layout';
import {
  asModelVersion,
  asRunId,
  asWorkerId,
  asWorkerKey,
  type GradientSubmission,
  type AttackWorkerRequest,
  type BackendTimes,
  type ConfigureRequest,
  type JoinRequest,
  type LayerSentAs,
  type LayerStats,
  type ModelRequest,
  type MoveWorkerRequest,
  type RemoveWorkerRequest,
  type RunConfig,
  type RunRequest,
  type SubscribeRequest,
  type WorkerBackend,
  type WorkerTimes,
  TIME_SOURCES,
} from '../../core/protocol';
import { parseAttackWorkerRequest } from '../../core/schema';
import { EstimateOverflow, LayerCodecError } from '../../core/training/modelUpdate';
import { RoundEstimate } from '../../core/training/roundEstimate';
import { ProtocolFault } from './fault';

/** Most layers any model has; bounds the work of parsing before the run's layout is known. */
const MAX_LAYERS = 64;
const MAX_ID_LENGTH = 64;

/** A gradient submission whose fields have the right types (binary layers as Uint8Array). */
export type SubmissionEnvelope = Omit<GradientSubmission, 'layers'> & { readonly layers: readonly Uint8Array[] };

/**
 * A decoded gradient: each layer's unbiased estimate (dense), the bytes received, and per layer its bytes and how it
 * was sent.
 */
export interface DecodedGradient {
  /** The estimate times the worker's multiplier, kept for the round's sum. */
  readonly estimate: RoundEstimate;
  readonly bytes: number;
  readonly layerBytes: readonly number[];
  /** The decomposition each layer's message carried, 'dense' for float32, null for the schemes that are not ATOMO. */
  readonly sentAs: readonly (LayerSentAs | null)[];
}

function bad(message: string): never {
  throw new ProtocolFault('bad-message', message);
}

function object(raw: unknown, what: string): Record<string, unknown> {
  if (
    typeof raw !== 'object' ||
    raw === null ||
    Array.isArray(raw) ||
    raw instanceof Uint8Array ||
    raw instanceof ArrayBuffer
  ) {
    bad(`${what} must be an object`);
  }
  return raw as Record<string, unknown>;
}

function id(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_ID_LENGTH)
    bad(`${field} must be a string of 1–${MAX_ID_LENGTH} characters`);
  return value;
}

function integer(value: unknown, field: string, max = 0xffffffff): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max)
    bad(`${field} must be an integer in 0..${max}`);
  return value;
}

function finite(value: unknown, field: string, min = -Infinity): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min)
    bad(`${field} must be a finite number${min > -Infinity ? ` ≥ ${min}` : ''}`);
  return value;
}

function bytes(value: unknown, field: string): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  return bad(`${field} must be binary (ArrayBuffer or Uint8Array), got ${value === null ? 'null' : typeof value}`);
}

/** worker:join */
export function parseJoinRequest(raw: unknown): JoinRequest {
  const o = object(raw, 'join request');
  const protocol = integer(o['protocol'], 'protocol', 0xffff);
  const request: { -readonly [K in keyof JoinRequest]: JoinRequest[K] } = { protocol };
  if (o['runId'] !== undefined) request.runId = asRunId(id(o['runId'], 'runId'));
  if (o['workerKey'] !== undefined) request.workerKey = asWorkerKey(id(o['workerKey'], 'workerKey'));
  if (o['name'] !== undefined) {
    if (typeof o['name'] !== 'string' || o['name'].length > MAX_RAW_TEXT)
      bad(`name must be a string of at most ${MAX_RAW_TEXT} characters`);
    const name = sanitiseText(o['name'], MAX_NAME_LENGTH);
    // A name that was only control characters or spaces is no name: the server's default applies.
    if (name.length > 0) request.name = name;
  }
  if (o['backend'] !== undefined) request.backend = parseBackend(o['backend']);
  return request;
}

/** Longest worker name kept; longer ones are cut (names are for display only). */
export const MAX_NAME_LENGTH = 40;
/** Longest backend detail kept (an adapter description or a fallback reason). */
export const MAX_BACKEND_DETAIL_LENGTH = 80;
/** Longest text field read at all before cutting: anything longer is garbage, not a long name. */
const MAX_RAW_TEXT = 256;

/**
 * Display text from a client: whitespace runs (newlines, tabs) become one
 * space, control and format characters (bidi overrides, zero-width joiners)
 * are removed so a name cannot spoof or break the teacher's table, trimmed,
 * cut to `max` code points.
 */
export function sanitiseText(raw: string, max: number): string {
  const clean = raw
    .replace(/\s+/gu, ' ') // newlines and tabs separate words: keep them as spaces
    .replace(/[\p{Cc}\p{Cf}]/gu, '')
    .replace(/ {2,}/gu, ' ')
    .trim();
  return [...clean].slice(0, max).join('').trim();
}

/** Longest calibration time accepted, ms: an hour per round is already no training. */
const MAX_CALIBRATION_MS = 3_600_000;

function parseCalibration(raw: unknown): BackendTimes {
  const o = object(raw, 'backend.calibration');
  const time = (name: 'webgpuMs' | 'cpuMs'): number => {
    const value = o[name];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_CALIBRATION_MS) {
      bad(`backend.calibration.${name} must be a number of ms in [0, ${MAX_CALIBRATION_MS}]`);
    }
    return value;
  };
  return { webgpuMs: time('webgpuMs'), cpuMs: time('cpuMs') };
}

function parseBackend(raw: unknown): WorkerBackend {
  const o = object(raw, 'backend');
  const kind = o['kind'];
  if (kind !== 'webgpu' && kind !== 'cpu') bad("backend.kind must be 'webgpu' or 'cpu'");
  const calibration = o['calibration'] === undefined ? {} : { calibration: parseCalibration(o['calibration']) };
  const detailRaw = o['detail'];
  if (detailRaw === undefined) return { kind, ...calibration };
  if (typeof detailRaw !== 'string' || detailRaw.length > MAX_RAW_TEXT)
    bad(`backend.detail must be a string of at most ${MAX_RAW_TEXT} characters`);
  const detail = sanitiseText(detailRaw, MAX_BACKEND_DETAIL_LENGTH);
  return detail.length > 0 ? { kind, detail, ...calibration } : { kind, ...calibration };
}

/** gradient:submit, its types only; counts and contents are checked against the run by decodeGradient. */
export function parseSubmission(raw: unknown): SubmissionEnvelope {
  const o = object(raw, 'gradient submission');
  const layersRaw = o['layers'];
  if (!Array.isArray(layersRaw) || layersRaw.length > MAX_LAYERS)
    bad(`layers must be an array of at most ${MAX_LAYERS} binary layers`);
  const statsRaw = o['layerStats'];
  if (!Array.isArray(statsRaw) || statsRaw.length > MAX_LAYERS)
    bad(`layerStats must be an array of at most ${MAX_LAYERS} entries`);
  const computeMs = finite(o['computeMs'], 'computeMs', 0);
  const layerStats = statsRaw.map((entry, layer): LayerStats => {
    const s = object(entry, `layerStats[${layer}]`);
    const stats = {
      closedForm: finite(s['closedForm'], `layerStats[${layer}].closedForm`, 0),
      realised: finite(s['realised'], `layerStats[${layer}].realised`, 0),
      gradientNormSq: finite(s['gradientNormSq'], `layerStats[${layer}].gradientNormSq`, 0),
    };
    // Optional: a worker measures it on some rounds only; its range is checked against the layer's shape in
    // decodeGradient.
    return s['indicator'] === undefined
      ? stats
      : { ...stats, indicator: finite(s['indicator'], `layerStats[${layer}].indicator`, 0) };
  });
  return {
    runId: asRunId(id(o['runId'], 'runId')),
    workerId: asWorkerId(integer(o['workerId'], 'workerId')),
    version: asModelVersion(integer(o['version'], 'version', Number.MAX_SAFE_INTEGER)),
    layers: layersRaw.map((layer, index) => bytes(layer, `layers[${index}]`)),
    loss: finite(o['loss'], 'loss', 0),
    layerStats,
    computeMs,
    ...(o['times'] === undefined ? {} : { times: workerTimes(o['times'], computeMs) }),
  };
}

/** A submission's optional split of its computeMs: two or three parts of it, and the clock's name. */
function workerTimes(raw: unknown, computeMs: number): WorkerTimes {
  const o = object(raw, 'times');
  const compressMs = finite(o['compressMs'], 'times.compressMs', 0);
  const encodeMs = finite(o['encodeMs'], 'times.encodeMs', 0);
  const applyMs = o['applyMs'] === undefined ? undefined : finite(o['applyMs'], 'times.applyMs', 0);
  const clock = o['clock'];
  if (!TIME_SOURCES.includes(clock as WorkerTimes['clock']))
    bad(`times.clock must be one of ${TIME_SOURCES.join(', ')}`);
  // Parts of computeMs: their sum may not exceed it (beyond rounding).
  const parts = compressMs + encodeMs + (applyMs ?? 0);
  if (parts > computeMs * (1 + 1e-9) + 1e-9)
    bad(`times.compressMs + times.encodeMs + times.applyMs (${parts}) exceed computeMs (${computeMs})`);
  return { compressMs, encodeMs, ...(applyMs === undefined ? {} : { applyMs }), clock: clock as WorkerTimes['clock'] };
}

/**
 * Decodes a submission's layers for a run: the layer count, each layer's size
 * against the largest its scheme can produce (before any decoding work), the
 * codec's own checks with the expected layer index and shape, the run's
 * scheme and levels, and a finite reconstruction, kept with its statistics
 * times `multiplier` (the classroom attack). Throws ProtocolFault.
 */
export function decodeGradient(
  submission: SubmissionEnvelope,
  layout: ModelLayout,
  config: RunConfig,
  multiplier = 1,
): DecodedGradient {
  const { layers } = submission;
  if (layers.length !== layout.tensors.length) {
    throw new ProtocolFault('layer-count', `${layers.length} layers sent, ${layout.kind} has ${layout.tensors.length}`);
  }
  if (submission.layerStats.length !== layout.tensors.length) {
    throw new ProtocolFault(
      'bad-stats',
      `${submission.layerStats.length} layerStats entries, ${layout.kind} has ${layout.tensors.length} layers`,
    );
  }
  let total = 0;
  layout.tensors.forEach((tensor, layer) => {
    const indicator = submission.layerStats[layer]!.indicator;
    if (indicator !== undefined) {
      // Every gradient's indicator lies in this range (core/atomo/indicator.ts); 1e-6 covers the σ a worker leaves out
      // as float32 noise.
      const { min, max } = indicatorRange(tensor.shape);
      if (!(indicator >= min * (1 - 1e-6) && indicator <= max * (1 + 1e-6))) {
        throw new ProtocolFault(
          'bad-stats',
          `layerStats[${layer}].indicator is ${indicator}; ` +
            `a ${tensor.shape[0]}×${tensor.shape[1]} gradient's lies in [${min}, ${max}]`,
        );
      }
    }
    const limit = maxLayerBytes(config.scheme, tensor.shape, config.levels, config.bucketSize ?? 0, config.qsgdCoding);
    const size = layers[layer]!.byteLength;
    if (size > limit) {
      throw new ProtocolFault(
        'payload-too-large',
        `layer ${layer} (${tensor.name}) is ${size} bytes; ${config.scheme} never needs more than ${limit}`,
      );
    }
    total += size;
  });
  const sentAs: (LayerSentAs | null)[] = [];
  const check = (layer: number, sample: LayerSample) => {
    // A dense layer is always accepted: a worker sends one where its scheme's encoding would be larger (core/codec
    // encodeForWire).
    if (sample.scheme !== config.scheme && sample.scheme !== 'none') {
      throw new ProtocolFault(
        'wrong-scheme',
        `layer ${layer} is encoded with ${sample.scheme}; this run uses ${config.scheme}`,
      );
    }
    if (sample.scheme === 'qsgd' && sample.levels !== config.levels) {
      throw new ProtocolFault(
        'wrong-scheme',
        `layer ${layer} uses ${sample.levels} QSGD levels; this run uses ${config.levels}`,
      );
    }
    if (sample.scheme === 'qsgd' && sample.bucketSize !== (config.bucketSize ?? 0)) {
      throw new ProtocolFault(
        'wrong-scheme',
        `layer ${layer} uses QSGD buckets of ${sample.bucketSize}; this run uses ${config.bucketSize ?? 0}`,
      );
    }
    if (sample.scheme === 'qsgd' && sample.coding !== config.qsgdCoding) {
      throw new ProtocolFault(
        'wrong-scheme',
        `layer ${layer} uses QSGD's ${sample.coding} coding; this run uses ${config.qsgdCoding}`,
      );
    }
    sentAs.push(sampleDecomposition(sample));
  };
  let estimate: RoundEstimate;
  try {
    // The one decoding path, the relay replicas' too (core/training/roundEstimate.ts), with the run's scheme rules.
    estimate = RoundEstimate.decode(layout, layers, multiplier, check);
  } catch (error) {
    const at = (layer: number) => `layer ${layer} (${layout.tensors[layer]!.name})`;
    if (error instanceof LayerCodecError)
      throw new ProtocolFault('codec', `${at(error.layer)}: ${error.message}`, error.codecError.code);
    // Finite inputs can still overflow float32 when multiplied out (u·σ/p·vᵀ).
    if (error instanceof EstimateOverflow)
      throw new ProtocolFault('codec', `${at(error.layer)}: ${error.message}`, 'non-finite');
    throw error;
  }
  return { estimate, bytes: total, layerBytes: layers.map((l) => l.byteLength), sentAs };
}

/** model:request */
export function parseModelRequest(raw: unknown): ModelRequest {
  return { runId: asRunId(id(object(raw, 'request')['runId'], 'runId')) };
}

/** run:start, run:pause, run:resume, run:reset, run:delete */
export function parseRunRequest(raw: unknown): RunRequest {
  return { runId: asRunId(id(object(raw, 'request')['runId'], 'runId')) };
}

/** run:configure */
export function parseConfigureRequest(raw: unknown): ConfigureRequest {
  const o = object(raw, 'request');
  return { runId: asRunId(id(o['runId'], 'runId')), config: object(o['config'], 'config') };
}

/** run:create: the patch itself is validated by applyConfigPatch. */
export function parseCreateRequest(raw: unknown): Record<string, unknown> {
  return object(raw, 'run configuration');
}

/** worker:move */
export function parseMoveRequest(raw: unknown): MoveWorkerRequest {
  const o = object(raw, 'request');
  return { workerId: asWorkerId(integer(o['workerId'], 'workerId')), runId: asRunId(id(o['runId'], 'runId')) };
}

/** worker:remove */
export function parseRemoveRequest(raw: unknown): RemoveWorkerRequest {
  return { workerId: asWorkerId(integer(object(raw, 'request')['workerId'], 'workerId')) };
}

/** worker:attack */
export function parseAttackRequest(raw: unknown): AttackWorkerRequest {
  const parsed = parseAttackWorkerRequest(raw);
  if (!parsed.ok) bad(parsed.message);
  return { workerId: asWorkerId(parsed.value.workerId), attack: parsed.value.attack };
}

/** dashboard:subscribe */
export function parseSubscribeRequest(raw: unknown): SubscribeRequest {
  if (raw === undefined || raw === null) return {};
  const o = object(raw, 'request');
  return o['runId'] === undefined ? {} : { runId: asRunId(id(o['runId'], 'runId')) };
}
