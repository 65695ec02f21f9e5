/**
 * Reads a store slice at most a few times a second: charts and tables
 * re-render on a timer, not on every gradient or round, however fast they
 * arrive. The slices of one redraw group share one timer, so the components
 * that changed redraw in one React render rather than one each (the
 * dashboard's tables and charts); groups of their own redraw in tasks of
 * their own (the tab's four charts, each a short task).
 * The timer also stretches with what a redraw costs: a dashboard with
 * hundreds of rounds on a starved laptop takes longer to redraw, and then
 * redraws less often, so the page's main thread stays free for clicks and
 * scrolling.
 */
import { useEffect, useState } from 'react';
import type { StoreApi } from 'zustand';

/** Chart redraw interval: 3 redraws a second at most. */
export const CHART_REDRAW_MS = 333;

/**
 * A redraw waits at least this many times the recent redraw cost: redraws take at most about a quarter of the main
 * thread.
 */
const COST_FACTOR = 3;

/** The slowest recent redraw, ms, from the timer firing to the render's commit; decays as cheaper redraws follow. */
let recentRedrawMs = 0;

/** The redraws of one group: the slices that changed since the last one, and its timer. */
interface RedrawClock {
  readonly intervalMs: number;
  readonly due: Set<() => void>;
  timer: ReturnType<typeof setTimeout> | null;
  lastAt: number;
  /** When the last redraw fired (performance.now()), until its render commits; null after. */
  firedAt: number | null;
}

/** The page's redraw group, unless a hook names its own. */
const PAGE_GROUP = 'page';

const clocks = new Map<string, RedrawClock>();

function clockOf(intervalMs: number, group: string): RedrawClock {
  const key = `${group}|${intervalMs}`;
  let clock = clocks.get(key);
  if (clock === undefined) {
    clock = { intervalMs, due: new Set(), timer: null, lastAt: 0, firedAt: null };
    clocks.set(key, clock);
  }
  return clock;
}

/** Fires every due slice in one task, so React renders them together. */
function fire(clock: RedrawClock): void {
  clock.timer = null;
  clock.lastAt = Date.now();
  clock.firedAt = performance.now();
  const due = [...clock.due];
  clock.due.clear();
  for (const update of due) update();
}

function request(clock: RedrawClock, update: () => void): void {
  clock.due.add(update);
  if (clock.timer !== null) return;
  const wait = Math.max(clock.intervalMs, COST_FACTOR * recentRedrawMs);
  clock.timer = setTimeout(() => fire(clock), Math.max(0, clock.lastAt + wait - Date.now()));
}

/** Called after a throttled slice's render commits: the redraw's cost is known now. */
function committed(clock: RedrawClock): void {
  if (clock.firedAt === null) return;
  recentRedrawMs = Math.max(performance.now() - clock.firedAt, 0.8 * recentRedrawMs);
  clock.firedAt = null;
}

/**
 * Like zustand's `useStore(store, selector)`, but the component learns of a
 * change at most once per `intervalMs` (trailing edge, so the last value is
 * always shown). `selector` must be stable (module level or useCallback) and
 * return the same reference for unchanged data. Hooks of one `group` and
 * interval redraw together, in one task.
 */
export function useThrottledStore<S, T>(
  store: StoreApi<S>,
  selector: (state: S) => T,
  intervalMs = CHART_REDRAW_MS,
  group = PAGE_GROUP,
): T {
  const [value, setValue] = useState(() => selector(store.getState()));
  const clock = clockOf(intervalMs, group);
  useEffect(() => committed(clock), [clock, value]);
  useEffect(() => {
    const update = () => setValue(() => selector(store.getState()));
    const unsubscribe = store.subscribe(() => request(clock, update));
    // The state may have moved between render and subscription.
    request(clock, update);
    return () => {
      unsubscribe();
      clock.due.delete(update);
    };
  }, [store, selector, clock]);
  return value;
}
