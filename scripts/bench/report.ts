/**
 * What every suite shares: it reads its options from one command line and
 * writes its tables into docs/benchmarks.md, each suite in its own section
 * between markers, so re-running one suite leaves the others alone.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';

const REPORT = 'docs/benchmarks.md';
const PREAMBLE = `# Benchmarks

Measured by \`npm run bench -- <suite>\`; each section says when, on what,
and with which command. Ratios compare implementations measured in the same
run on the same adapter; absolute times on a shared 2-core machine are noisy.
`;

/**
 * A suite's `--name value` options: `npm run bench -- <suite…> --option …`
 * gives every suite it runs the same command line, the suite names first
 * (positionals here), so an option another suite takes is let through.
 */
export function suiteOptions<const O extends NonNullable<ParseArgsConfig['options']>>(options: O) {
  return parseArgs({ args: process.argv.slice(2), allowPositionals: true, options, strict: false }).values;
}

/**
 * The 1, 5 and 15-minute load averages (now, unless given) as a section prints them beside its figures, e.g. "3.1 / 2.8
 * / 2.5".
 */
export function loadText(loads: readonly number[] = loadavg()): string {
  return loads.map((x) => x.toFixed(1)).join(' / ');
}

/** A markdown table from a header row and data rows. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/** Replaces (or appends) the section of `suite` in docs/benchmarks.md. */
export function writeSection(suite: string, body: string): void {
  const start = `<!-- bench:${suite}:start -->`;
  const end = `<!-- bench:${suite}:end -->`;
  const section = `${start}\n${body.trim()}\n${end}`;
  const current = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : PREAMBLE;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next =
    from >= 0 && to > from
      ? current.slice(0, from) + section + current.slice(to + end.length)
      : `${current.trimEnd()}\n\n${section}\n`;
  writeFileSync(REPORT, next);
  console.log(`wrote the ${suite} section of ${REPORT}`);
}

/** Formats a number with a sensible number of significant digits. */
export function fmt(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return '—';
  if (value === 0) return '0';
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toPrecision(digits);
}
