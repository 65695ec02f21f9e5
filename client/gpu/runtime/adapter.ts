/** Facts about the adapter behind a device that kernels tune for. */

/**
 * True when the device runs on a CPU through SwiftShader (WebGPU without a
 * GPU): there, barriers and workgroup launches cost far more than on a GPU,
 * so kernels pick fewer, longer-running workgroups.
 */
export function isSoftwareAdapter(device: GPUDevice): boolean {
  const info = device.adapterInfo as GPUAdapterInfo | undefined; // absent in older browsers
  return info !== undefined && (info.architecture === 'swiftshader' || /swiftshader/i.test(info.description));
}
