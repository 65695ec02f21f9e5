/**
 * The benchmark page: runs the benchmark that `?bench=` names and publishes
 * its result as `window.benchResult` (or `window.benchError`) for
 * scripts/bench/browser.ts.
 */
const BENCHES = {
  kernels: async () => (await import('./kernels')).main(),
  training: async () => (await import('./training')).main(),
} as const;

/** The benchmarks this page runs, by their `?bench=` name. */
export type BrowserBenchName = keyof typeof BENCHES;

const name = new URLSearchParams(location.search).get('bench') ?? '';
const target = window as unknown as { benchResult?: unknown; benchError?: string };
document.title = `atomo-swarm · ${name} benchmark`;
const log = document.getElementById('log');
if (log) log.textContent = `Running the ${name} benchmark…`;

run().then(
  (result) => {
    target.benchResult = result;
  },
  (error: unknown) => {
    target.benchError = error instanceof Error ? `${error.message}\n${error.stack ?? ''}` : String(error);
  },
);

function run(): Promise<unknown> {
  if (!Object.hasOwn(BENCHES, name))
    return Promise.reject(new Error(`unknown benchmark "${name}": expected one of ${Object.keys(BENCHES).join(', ')}`));
  return BENCHES[name as BrowserBenchName]();
}
