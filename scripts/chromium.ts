/**
 * How the project launches Chromium with WebGPU (docs/design.md, "Browsers and WebGPU"): Debian's
 * build, which ships SwiftShader, so WebGPU works without a GPU. Used by the
 * Playwright config and by the browser benchmarks.
 */
import { existsSync } from 'node:fs';

/** Debian's Chromium; Playwright's own browsers are used where it is absent. */
export const SYSTEM_CHROMIUM = '/usr/bin/chromium';

/** Launch options for Chromium with WebGPU on SwiftShader (or the machine's GPU with `gpu: 'native'`). */
export function chromiumLaunchOptions(gpu: 'swiftshader' | 'native' = 'swiftshader'): {
  executablePath?: string;
  args: string[];
} {
  return {
    ...(existsSync(SYSTEM_CHROMIUM) ? { executablePath: SYSTEM_CHROMIUM } : {}),
    args: [
      '--enable-unsafe-webgpu',
      ...(gpu === 'swiftshader' ? ['--use-webgpu-adapter=swiftshader'] : []),
      '--no-sandbox',
      // This machine has no network but the registries: without these,
      // Chromium keeps trying to reach Google's hosts.
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  };
}
