/**
 * A WebGPU device in Node, through Dawn (npm package `webgpu`).
 *
 * The same WGSL and host wrappers that run in a tab run here, for kernel
 * tests, headless swarms and benchmarks. Without a GPU, Vulkan is pointed at
 * the SwiftShader driver that Debian's `chromium` package ships: the Mesa
 * software driver on this kind of machine is too old for Dawn.
 */
import { existsSync } from 'node:fs';
import { GpuUnavailableError, openGpuContext, type GpuContext, type GpuLostInfo } from './device';

/** Where Debian's chromium package puts SwiftShader's Vulkan driver manifest. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

/** A Node device: the same GpuContext a tab gets, plus the way to let the process exit. */
export interface NodeGpu extends GpuContext {
  /** Destroys the device and drops the Dawn instance so the process can exit. */
  release(): void;
}

/**
 * Opens a device on the first adapter Dawn finds, with the same limits and
 * features a browser tab would request (runtime.ts).
 * Throws (never returns null) with what to install when there is no adapter,
 * so a kernel test fails loudly instead of being skipped.
 */
export async function requestNodeGpu(label = 'node', onLost?: (info: GpuLostInfo) => void): Promise<NodeGpu> {
  if (process.env.VK_ICD_FILENAMES === undefined && existsSync(SWIFTSHADER_ICD)) {
    // The Vulkan loader reads this when Dawn creates its instance, below.
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  }
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  // Timestamp quantisation would round kernel timings to 100 µs.
  let gpu: GPU | null = create(['disable-dawn-features=timestamp_quantization']);
  let ctx: GpuContext;
  try {
    ctx = await openGpuContext(gpu, onLost === undefined ? { label } : { label, onLost });
  } catch (error) {
    if (error instanceof GpuUnavailableError && error.reason === 'no-adapter') {
      throw new Error(
        "No WebGPU adapter in Node. Dawn needs a Vulkan driver: install Debian's " +
          '`chromium` (it ships SwiftShader) and `libvulkan1`, e.g. ' +
          "`apt-get install -y chromium libvulkan1`, or set VK_ICD_FILENAMES to your GPU's driver manifest.",
        { cause: error },
      );
    }
    throw error;
  }
  return {
    ...ctx,
    release() {
      ctx.device.destroy();
      gpu = null;
    },
  };
}
