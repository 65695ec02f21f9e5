/** Small helpers to move Float32Arrays to and from GPU buffers (tests, set-up). */

/** Creates a storage buffer holding `data`. */
export function uploadF32(device: GPUDevice, data: Float32Array, label: string): GPUBuffer {
  const buffer = device.createBuffer({
    label,
    size: Math.max(4, data.byteLength),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
    mappedAtCreation: true,
  });
  new Float32Array(buffer.getMappedRange()).set(data);
  buffer.unmap();
  return buffer;
}

/** Copies the first `length` floats of `source` back to the CPU. */
export async function readF32(device: GPUDevice, source: GPUBuffer, length: number): Promise<Float32Array> {
  const bytes = Math.max(4, length * 4);
  const staging = device.createBuffer({
    label: `${source.label}.staging`,
    size: bytes,
    usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
  });
  const encoder = device.createCommandEncoder({ label: `${source.label}.readback` });
  encoder.copyBufferToBuffer(source, 0, staging, 0, bytes);
  device.queue.submit([encoder.finish()]);
  await staging.mapAsync(GPUMapMode.READ);
  const out = new Float32Array(staging.getMappedRange().slice(0, length * 4));
  staging.unmap();
  staging.destroy();
  return out;
}
