/**
 * The one pipeline cache of a device. Every kernel host (client/gpu/kernels/)
 * asks it for its compute pipelines, so a WGSL module is compiled once per
 * device however many hosts, compressors and backends use it, and a host is
 * cheap to construct.
 *
 * A kernel's workgroup size is a WGSL `override` constant declared in its
 * shader (`override WORKGROUP_SIZE: u32 = 256u;`). The cache hands back, with
 * the pipeline, the value of every override the module declares (the
 * shader's default unless the host set it), so a host sizes its grids from
 * the shader itself instead of repeating its numbers.
 */

/** A compute kernel as a host asks for it. */
export interface KernelSource {
  /** `Family.kernel`, e.g. 'Svd.jacobi': the module is labelled `<label>.module`, the pipeline `<label>.pipeline`. */
  readonly label: string;
  readonly code: string;
  /** Entry point (default 'main'). */
  readonly entryPoint?: string;
  /** Values for the shader's override constants (booleans as 0 / 1). */
  readonly constants?: Readonly<Record<string, number>>;
  /** An explicit pipeline layout (several entry points sharing one bind group), else 'auto'. */
  readonly layout?: GPUPipelineLayout;
}

/** A compiled kernel: its pipeline and the value of every override constant of its module. */
export interface Kernel {
  readonly label: string;
  readonly pipeline: GPUComputePipeline;
  /** Every `override` the module declares with a literal default, set to the value the pipeline was compiled with. */
  readonly constants: Readonly<Record<string, number>>;
}

/** How a kernel binds one buffer (WebGPU's buffer binding types). */
export type BufferBinding = GPUBufferBindingType;

/** Pipelines, modules and explicit layouts of one device, each made once. */
export class PipelineCache {
  static readonly #caches = new WeakMap<GPUDevice, PipelineCache>();

  readonly #device: GPUDevice;
  readonly #modules = new Map<string, GPUShaderModule>();
  readonly #kernels = new Map<string, Kernel>();
  readonly #layouts = new Map<string, { group: GPUBindGroupLayout; pipeline: GPUPipelineLayout }>();
  readonly #layoutIds = new WeakMap<GPUPipelineLayout, string>();

  /** The cache of `device`, made on first use. */
  static for(device: GPUDevice): PipelineCache {
    let cache = PipelineCache.#caches.get(device);
    if (cache === undefined) {
      cache = new PipelineCache(device);
      PipelineCache.#caches.set(device, cache);
    }
    return cache;
  }

  private constructor(device: GPUDevice) {
    this.#device = device;
  }

  /** Number of distinct pipelines compiled so far (tests check that hosts share them). */
  get size(): number {
    return this.#kernels.size;
  }

  /**
   * The kernel of `source`, compiled on first request; later requests with the same code, entry point, constants and
   * layout get the same pipeline.
   */
  kernel(source: KernelSource): Kernel {
    const entryPoint = source.entryPoint ?? 'main';
    const given = source.constants ?? {};
    const layoutId = source.layout === undefined ? 'auto' : this.#layoutIds.get(source.layout);
    if (layoutId === undefined)
      throw new Error(`${source.label}: pipeline layouts must come from PipelineCache.layout`);
    const constantsKey = Object.keys(given)
      .sort()
      .map((name) => `${name}=${given[name]}`)
      .join(',');
    const key = `${entryPoint}|${constantsKey}|${layoutId}|${source.code}`;
    const cached = this.#kernels.get(key);
    if (cached !== undefined) return cached;
    let module = this.#modules.get(source.code);
    if (module === undefined) {
      module = this.#device.createShaderModule({ label: `${source.label}.module`, code: source.code });
      this.#modules.set(source.code, module);
    }
    const declared = wgslOverrides(source.code);
    for (const name of Object.keys(given)) {
      if (!(name in declared)) throw new Error(`${source.label}: the shader declares no override ${name}`);
    }
    const pipeline = this.#device.createComputePipeline({
      label: `${source.label}.pipeline`,
      layout: source.layout ?? 'auto',
      compute: { module, entryPoint, ...(constantsKey === '' ? {} : { constants: { ...given } }) },
    });
    const kernel: Kernel = { label: source.label, pipeline, constants: { ...declared, ...given } };
    this.#kernels.set(key, kernel);
    return kernel;
  }

  /**
   * A bind group layout of buffers at bindings 0, 1, … (compute stage) and
   * its pipeline layout, made once per `label`: for modules whose entry
   * points share one bind group, where 'auto' would give each its own.
   */
  layout(
    label: string,
    bindings: readonly BufferBinding[],
  ): { readonly group: GPUBindGroupLayout; readonly pipeline: GPUPipelineLayout } {
    const key = `${label}|${bindings.join(',')}`;
    let layout = this.#layouts.get(key);
    if (layout === undefined) {
      const group = this.#device.createBindGroupLayout({
        label: `${label}.bindGroupLayout`,
        entries: bindings.map((type, binding) => ({ binding, visibility: GPUShaderStage.COMPUTE, buffer: { type } })),
      });
      const pipeline = this.#device.createPipelineLayout({
        label: `${label}.pipelineLayout`,
        bindGroupLayouts: [group],
      });
      layout = { group, pipeline };
      this.#layouts.set(key, layout);
      this.#layoutIds.set(pipeline, key);
    }
    return layout;
  }
}

/** The kernels of one family by name, each labelled `<family>.<name>`, from the device's cache. */
export function kernelFamily<K extends string>(
  device: GPUDevice,
  family: string,
  sources: Readonly<Record<K, Omit<KernelSource, 'label'>>>,
): Readonly<Record<K, Kernel>> {
  const cache = PipelineCache.for(device);
  const kernels = {} as Record<K, Kernel>;
  for (const name of Object.keys(sources) as K[])
    kernels[name] = cache.kernel({ label: `${family}.${name}`, ...sources[name] });
  return kernels;
}

/** `override NAME: type = literal;` or `const NAME: type = literal;` (the type optional). */
const LITERAL = String.raw`true|false|0x[0-9a-fA-F]+u?|[0-9.]+(?:e[+-]?\d+)?[uif]?`;
const DECLARATION = new RegExp(
  String.raw`\b(override|const)\s+([A-Za-z_]\w*)\s*(?::\s*\w+\s*)?=\s*(${LITERAL})\s*;`,
  'g',
);

/** The literal's value: booleans as 0 / 1, `u` / `i` / `f` suffixes dropped. */
function literalValue(literal: string): number {
  if (literal === 'true') return 1;
  if (literal === 'false') return 0;
  return Number(literal.startsWith('0x') ? literal.replace(/[ui]$/, '') : literal.replace(/[uif]$/, ''));
}

/** The default of every `override` in `code` that has a literal default. */
export function wgslOverrides(code: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [, kind, name, literal] of code.matchAll(DECLARATION)) {
    if (kind === 'override') out[name!] = literalValue(literal!);
  }
  return out;
}

/** The literal value of the module-scope `override` or `const` named `name` in `code`; throws if there is none. */
export function wgslConstant(code: string, name: string): number {
  for (const [, , declared, literal] of code.matchAll(DECLARATION)) {
    if (declared === name) return literalValue(literal!);
  }
  throw new Error(`the shader declares no constant ${name} with a literal value`);
}
