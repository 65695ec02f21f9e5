/**
 * A WebGPU device in Node, through Dawn (npm package `webgpu`).
 *
 * The same WGSL and host wrappers that run in a tab run here, for kernel
 * tests, headless swarms and benchmarks. Without a GPU, Vulkan is pointed at
 * the SwiftShader driver that Debian's `chromium` package ships: the Mesa
 * software driver on this kind of machine is too old for Dawn.
 */
import { existsSync } from 'node:fs';

/** Where Debian's chromium package puts SwiftShader's Vulkan driver manifest. */
export const SWIFTSHADER_ICD = '/usr/lib/chromium/vk_swiftshader_icd.json';

export interface NodeGpu {
  readonly device: GPUDevice;
  readonly adapterInfo: GPUAdapterInfo;
  /** Destroys the device and drops the Dawn instance so the process can exit. */
  release(): void;
}

/**
 * Opens a device on the first adapter Dawn finds.
 * Throws (never returns null) with what to install when there is no adapter,
 * so a kernel test fails loudly instead of being skipped.
 */
export async function requestNodeGpu(label = 'node'): Promise<NodeGpu> {
  if (process.env.VK_ICD_FILENAMES === undefined && existsSync(SWIFTSHADER_ICD)) {
    // The Vulkan loader reads this when Dawn creates its instance, below.
    process.env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  }
  const { create, globals } = await import('webgpu');
  Object.assign(globalThis, globals);
  // Timestamp quantisation would round kernel timings to 100 µs.
  let gpu: GPU | null = create(['disable-dawn-features=timestamp_quantization']);
  const adapter = await gpu.requestAdapter();
  if (adapter === null) {
    throw new Error(
      'No WebGPU adapter in Node. Dawn needs a Vulkan driver: install Debian\'s ' +
        '`chromium` (it ships SwiftShader) and `libvulkan1`, e.g. ' +
        '`apt-get install -y chromium libvulkan1`, or set VK_ICD_FILENAMES to your GPU\'s driver manifest.',
    );
  }
  const wanted: (keyof GPUSupportedLimits)[] = [
    'maxComputeWorkgroupStorageSize',
    'maxStorageBuffersPerShaderStage',
    'maxStorageBufferBindingSize',
    'maxBufferSize',
    'maxComputeInvocationsPerWorkgroup',
  ];
  const requiredLimits: Record<string, number> = {};
  for (const name of wanted) requiredLimits[name] = adapter.limits[name] as number;
  const requiredFeatures: GPUFeatureName[] = adapter.features.has('timestamp-query') ? ['timestamp-query'] : [];
  const device = await adapter.requestDevice({ label, requiredLimits, requiredFeatures });
  const adapterInfo = adapter.info;
  return {
    device,
    adapterInfo,
    release() {
      device.destroy();
      gpu = null;
    },
  };
}
