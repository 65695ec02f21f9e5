/**
 * `npm run bench -- <suite…>`: benchmarks, never timed tests. Each suite
 * measures a baseline in the same run and reports ratios against it.
 * Exported so a new suite is one entry here.
 */
export const suites: Record<string, () => Promise<void>> = {
  bytes: async () => (await import('./byteBudget')).benchByteBudget(),
  cluster: async () => (await import('./cluster')).benchCluster(),
  compress: async () => (await import('./compress')).benchCompress(),
  kernels: async () => (await import('./kernels')).benchKernels(),
  server: async () => (await import('./server')).benchServer(),
  soak: async () => (await import('./soak')).benchSoak(),
  tab: async () => (await import('./tab')).benchTab(),
  training: async () => (await import('./training')).benchTraining(),
};

// Suite names come first; everything from the first --option on belongs to the suites.
const firstOption = process.argv.findIndex((arg, i) => i >= 2 && arg.startsWith('-'));
const requested = process.argv.slice(2, firstOption < 0 ? undefined : firstOption);
// The soak and the tab take minutes each: they run only when named.
const names =
  requested.length === 0 || requested.includes('all')
    ? Object.keys(suites).filter((name) => name !== 'soak' && name !== 'tab')
    : requested;
for (const name of names) {
  const suite = suites[name];
  if (suite === undefined) {
    console.error(`unknown benchmark suite '${name}'; known: ${Object.keys(suites).join(', ')}`);
    process.exit(2);
  }
  console.log(`\n== bench ${name} ==`);
  await suite();
}
