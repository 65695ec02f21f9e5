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

/**
 * A name for the adapter behind `device` (vendor, architecture, device, description): choices measured on one adapter
 * are kept under it.
 */
export function adapterKey(device: GPUDevice): string {
  const info = device.adapterInfo as GPUAdapterInfo | undefined; // absent in older browsers
  return info === undefined
    ? 'unknown adapter'
    : [info.vendor, info.architecture, info.device, info.description].join('|');
}
