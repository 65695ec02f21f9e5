/**
 * The rule of docs/design.md, "GPU code": every WGSL file is loaded by
 * exactly one host, named like its family (shaders/<family>/*.wgsl ↔
 * client/gpu/kernels/<family>.ts, a one-file family shaders/<name>.wgsl ↔
 * kernels/<name>.ts), and no workgroup size is a bare number in WGSL (it is
 * an `override` the host reads, or a const expression of the tile).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { wgslConstant, wgslOverrides } from '../runtime/pipelines';

const ROOT = resolve(import.meta.dirname, '../../..');

function filesUnder(dir: string, suffix: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : filesUnder(path, suffix);
    return name.endsWith(suffix) ? [path] : [];
  });
}

const wgslFiles = [...filesUnder(join(ROOT, 'shaders'), '.wgsl'), ...filesUnder(join(ROOT, 'client/gpu'), '.wgsl')];
const hostFiles = filesUnder(join(ROOT, 'client'), '.ts').filter((path) => !path.endsWith('.test.ts'));

/** The WGSL files a TypeScript file imports as `?raw`, as absolute paths. */
function wgslImports(path: string): string[] {
  const source = readFileSync(path, 'utf8');
  return [...source.matchAll(/from '([^']+\.wgsl)\?raw'/g)].map(([, target]) => resolve(dirname(path), target!));
}

describe('GPU code layout', () => {
  it('loads every WGSL file from exactly one host, named for its family', () => {
    const loaders = new Map<string, string[]>(wgslFiles.map((path) => [path, []]));
    for (const host of hostFiles) {
      for (const target of wgslImports(host)) {
        expect(
          loaders.has(target),
          `${relative(ROOT, host)} imports ${relative(ROOT, target)}, which does not exist`,
        ).toBe(true);
        loaders.get(target)!.push(host);
      }
    }
    expect(wgslFiles.length).toBeGreaterThan(30);
    for (const [wgsl, hosts] of loaders) {
      const name = relative(ROOT, wgsl);
      expect(
        hosts.map((host) => relative(ROOT, host)),
        `hosts of ${name}`,
      ).toHaveLength(1);
      const family =
        dirname(name) === 'shaders' || !name.startsWith('shaders/') ? basename(name, '.wgsl') : basename(dirname(name));
      expect(basename(hosts[0]!, '.ts'), `host of ${name}`).toBe(family);
    }
  });

  it('declares every workgroup size as an override or a const expression, never a bare number', () => {
    for (const path of wgslFiles) {
      const source = readFileSync(path, 'utf8');
      for (const [, args] of source.matchAll(/@workgroup_size\(([^)]*)\)/g)) {
        expect(args, `${relative(ROOT, path)}: @workgroup_size(${args})`).not.toMatch(/^\s*\d/);
      }
    }
  });
});

describe('wgslConstant and wgslOverrides', () => {
  const code = [
    'override WORKGROUP_SIZE: u32 = 64u;',
    'override RELU: bool = true;',
    'override SCALE = 0.5;',
    'const TILE: u32 = 32u;',
    'const MASK: u32 = 0xFFu;',
    'const TINY: f32 = 1e-5;',
    'override COMPUTED: u32 = TILE * 2u;',
  ].join('\n');

  it('reads the literal defaults of overrides, booleans as 0 and 1', () => {
    expect(wgslOverrides(code)).toEqual({ WORKGROUP_SIZE: 64, RELU: 1, SCALE: 0.5 });
  });

  it('reads consts and overrides by name, and refuses a missing or computed one', () => {
    expect(wgslConstant(code, 'TILE')).toBe(32);
    expect(wgslConstant(code, 'MASK')).toBe(255);
    expect(wgslConstant(code, 'TINY')).toBe(1e-5);
    expect(wgslConstant(code, 'WORKGROUP_SIZE')).toBe(64);
    expect(() => wgslConstant(code, 'COMPUTED')).toThrow(/no constant COMPUTED/);
    expect(() => wgslConstant(code, 'ABSENT')).toThrow(/no constant ABSENT/);
  });
});
