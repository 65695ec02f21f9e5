/**
 * What every suite shares: it reads its options from one command line and
 * writes its section of docs/benchmarks.md between markers, so re-running one
 * suite leaves the others alone. Every section has the same shape: a title,
 * the date, the machine and the command, at most three lines on how it was
 * measured, and one summary table of at most eight columns. Nothing else is
 * kept in the doc: the run-by-run history is in git.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';

const REPORT = 'docs/benchmarks.md';
const PREAMBLE = `# Benchmarks

Every section below is written by \`npm run bench -- <suite>\` (scripts/bench/) and says when, on what machine and
with which command it was measured; rerun a suite to refresh its section. Ratios compare implementations measured in
the same run; absolute times on a shared 2-core machine are noisy. Earlier runs are in the git history of this file.
`;

/** At most this many lines of "how it was measured", and this many columns in the table. */
const HOW_LINES = 3;
const COLUMNS = 8;

/** One suite's section of docs/benchmarks.md. */
export interface Section {
  /** The heading, also what other docs cite, e.g. "Training round". */
  readonly title: string;
  /** The command line that measured it, e.g. "npm run bench -- training --cycles 3". */
  readonly command: string;
  /** What ran besides the CPU, e.g. "google swiftshader in headless Chromium 156", for the machine line. */
  readonly on?: string;
  /** The load averages before the run (loadText() when it started); those after are read when writing. */
  readonly loadBefore?: string;
  /** How it was measured: at most three lines. */
  readonly how: readonly string[];
  /** The summary table: a header of at most eight columns and its rows. */
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** This machine as a section names it: "2 × Intel(R) Xeon(R) Processor, 23.5 GiB, Node v20.20.2". */
export function machineText(): string {
  const cores = cpus();
  const model = cores[0]?.model.trim() ?? 'unknown CPU';
  return `${cores.length} × ${model}, ${fmt(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
}

/** The section's markdown, checked against its shape. */
export function sectionText(section: Section, when: Date = new Date()): string {
  if (section.how.length > HOW_LINES) throw new Error(`${section.title}: ${section.how.length} lines of how, not 3`);
  if (section.header.length > COLUMNS) throw new Error(`${section.title}: ${section.header.length} columns, not 8`);
  const wrong = section.rows.find((row) => row.length !== section.header.length);
  if (wrong !== undefined) throw new Error(`${section.title}: a row of ${wrong.length} cells: ${wrong.join(' | ')}`);
  const date = `${when.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
  const load = section.loadBefore === undefined ? '' : `; load ${section.loadBefore} before, ${loadText()} after`;
  const on = section.on === undefined ? '' : `, ${section.on}`;
  return [
    `## ${section.title}`,
    '',
    `Measured ${date} on ${machineText()}${on}${load}: \`${section.command}\`.`,
    '',
    ...section.how,
    '',
    markdownTable(section.header, section.rows),
  ].join('\n');
}

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
export function writeSection(suite: string, section: Section): void {
  const body = sectionText(section);
  const start = `<!-- bench:${suite}:start -->`;
  const end = `<!-- bench:${suite}:end -->`;
  const text = `${start}\n${body.trim()}\n${end}`;
  const current = existsSync(REPORT) ? readFileSync(REPORT, 'utf8') : PREAMBLE;
  const from = current.indexOf(start);
  const to = current.indexOf(end);
  const next =
    from >= 0 && to > from
      ? current.slice(0, from) + text + current.slice(to + end.length)
      : `${current.trimEnd()}\n\n${text}\n`;
  writeFileSync(REPORT, next);
  console.log(`wrote the ${suite} section of ${REPORT}`);
}

/** Formats a number with a sensible number of significant digits. */
export function fmt(value: number, digits = 3): string {
  if (!Number.isFinite(value)) return '—';
  if (value === 0) return '0';
  return Math.abs(value) >= 100 ? value.toFixed(0) : value.toPrecision(digits);
}
