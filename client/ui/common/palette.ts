/**
 * Colours of the overlaid runs: one per run, in creation order, distinct in print and for most colour-blind readers.
 */
const PALETTE = ['#5b4bdb', '#e8702a', '#1f9e89', '#d6336c', '#3b82c4', '#a16207', '#6b7280', '#16a34a'];

/** The colour of the run at `index` in the dashboard's run list. */
export function runColour(index: number): string {
  return PALETTE[index % PALETTE.length]!;
}

/** Series colours of the worker charts. */
export const COLOURS = {
  primary: '#5b4bdb',
  baseline: '#9aa3b5',
  closedForm: '#5b4bdb',
  realised: '#e8702a',
  compute: '#5b4bdb',
  compress: '#1f9e89',
  upload: '#e8702a',
  grid: '#e6e9f0',
  axis: '#7a8499',
} as const;

/** How the dashboard's chart axes are drawn. */
export const AXIS_PROPS = { stroke: COLOURS.axis, fontSize: 11, tickLine: false } as const;

/**
 * How the dashboard's chart lines are drawn: 2 px wide, no point markers, no animation (the charts redraw as rounds
 * arrive).
 */
export const LINE_PROPS = { strokeWidth: 2, dot: false, isAnimationActive: false } as const;
