import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const serverPort = Number(process.env.PORT ?? 3000);

// The client is built into dist/client and served by the aggregator on one
// port. In development (`npm run dev`) Vite serves the client and forwards
// the socket.io endpoint and the data files to the aggregator.
export default defineConfig({
  root: 'client',
  publicDir: '../public',
  plugins: [react()],
  // The session's Web Worker (client/session/sessionWorker.ts) is a module worker: it shares chunks with the page.
  worker: { format: 'es' },
  build: {
    outDir: '../dist/client',
    emptyOutDir: true,
    sourcemap: true,
  },
  server: {
    proxy: {
      '/socket.io': { target: `http://localhost:${serverPort}`, ws: true },
      '/api': { target: `http://localhost:${serverPort}` },
    },
  },
});
