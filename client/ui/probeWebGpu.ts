/** What the page can say about WebGPU before any training starts. */
export type WebGpuStatus =
  | { readonly kind: 'probing' }
  | { readonly kind: 'webgpu'; readonly adapterName: string }
  | { readonly kind: 'cpu'; readonly reason: string };

/** Looks for a WebGPU adapter and names it, or says why there is none. */
export async function probeWebGpu(): Promise<WebGpuStatus> {
  if (!('gpu' in navigator)) {
    return {
      kind: 'cpu',
      reason: window.isSecureContext
        ? 'this browser has no WebGPU'
        : 'WebGPU needs a secure context (https or localhost)',
    };
  }
  try {
    const adapter = await navigator.gpu.requestAdapter();
    if (adapter === null) return { kind: 'cpu', reason: 'the browser found no WebGPU adapter' };
    const { vendor, architecture, description } = adapter.info;
    const adapterName = description || [vendor, architecture].filter(Boolean).join(' ') || 'unnamed adapter';
    return { kind: 'webgpu', adapterName };
  } catch (error) {
    return { kind: 'cpu', reason: `requesting a WebGPU adapter failed: ${String(error)}` };
  }
}
