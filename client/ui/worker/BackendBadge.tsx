/** Says where this tab trains: WebGPU with the adapter's name, or the CPU fallback and why. */
import { useStore } from 'zustand';
import { workerStore } from '../store/workerStore';

/** The backend badge (data-testid="backend", data-backend = probing | webgpu | cpu). */
export function BackendBadge() {
  const backend = useStore(workerStore, (s) => s.backend);
  return (
    <div className={`backend backend--${backend.kind}`} data-testid="backend" data-backend={backend.kind}>
      <span className="backend__dot" aria-hidden="true" />
      <span className="backend__text">
        {backend.kind === 'probing' && 'Looking for WebGPU…'}
        {backend.kind === 'webgpu' && (
          <>
            <strong>WebGPU:</strong> {backend.adapterName}
          </>
        )}
        {backend.kind === 'cpu' && (
          <>
            <strong>CPU fallback:</strong> {backend.reason}
          </>
        )}
      </span>
    </div>
  );
}
