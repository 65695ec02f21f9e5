import { useEffect, useState } from 'react';
import { probeWebGpu, type WebGpuStatus } from './probeWebGpu';

/** The worker page. For now it reports the compute backend this tab would train on. */
export function App() {
  const [status, setStatus] = useState<WebGpuStatus>({ kind: 'probing' });
  useEffect(() => {
    let live = true;
    void probeWebGpu().then((next) => {
      if (live) setStatus(next);
    });
    return () => {
      live = false;
    };
  }, []);

  return (
    <main className="page">
      <header>
        <h1>atomo-swarm</h1>
        <p className="tagline">Federated MNIST training in your browser, with ATOMO gradient compression.</p>
      </header>
      <section className="card">
        <h2>This tab</h2>
        <p data-testid="backend" data-backend={status.kind}>
          {status.kind === 'probing' && 'Looking for WebGPU…'}
          {status.kind === 'webgpu' && `WebGPU: ${status.adapterName}`}
          {status.kind === 'cpu' && `CPU fallback: ${status.reason}`}
        </p>
      </section>
    </main>
  );
}
