/**
 * Lets Node import WGSL as Vite does (`import code from './x.wgsl?raw'`), so
 * the host wrappers in client/gpu run unchanged in headless scripts. Vitest
 * needs none of this: it resolves `?raw` itself.
 */
import { register } from 'node:module';

const RAW_LOADER = `
import { readFile } from 'node:fs/promises';
export async function load(url, context, next) {
  if (url.startsWith('file:') && url.endsWith('?raw')) {
    const text = await readFile(new URL(url.slice(0, -4)), 'utf8');
    return { format: 'module', source: 'export default ' + JSON.stringify(text) + ';', shortCircuit: true };
  }
  return next(url, context);
}`;

let registered = false;

/** Registers the `?raw` loader hook once; import GPU modules dynamically after calling it. */
export function registerRawLoader(): void {
  if (registered) return;
  register(`data:text/javascript,${encodeURIComponent(RAW_LOADER)}`);
  registered = true;
}
