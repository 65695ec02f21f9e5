/**
 * Reads a store slice at most a few times a second: charts re-render on a
 * timer, not on every round, however fast rounds arrive. The timer also
 * stretches with what a redraw costs: a dashboard with hundreds of rounds on
 * a starved laptop takes longer to redraw, and then redraws less often, so
 * the page's main thread stays free for clicks and scrolling.
 */
import { useEffect, useRef, useState } from 'react';
import type { StoreApi } from 'zustand';

/** Chart redraw interval: 3 redraws a second at most. */
export const CHART_REDRAW_MS = 333;

/** A redraw waits at least this many times the recent redraw cost: charts take at most about a quarter of the main thread. */
const COST_FACTOR = 3;

/** The slowest recent redraw, ms, from a slice's change to its commit on screen; decays as cheaper redraws follow. */
let recentRedrawMs = 0;

/** The wait before the next redraw of a slice throttled to `intervalMs`. */
function redrawIntervalMs(intervalMs: number, redrawMs = recentRedrawMs): number {
  return Math.max(intervalMs, COST_FACTOR * redrawMs);
}

/**
 * Like zustand's `useStore(store, selector)`, but the component learns of a
 * change at most once per `intervalMs` (trailing edge, so the last value is
 * always shown). `selector` must be stable (module level or useCallback) and
 * return the same reference for unchanged data.
 */
export function useThrottledStore<S, T>(store: StoreApi<S>, selector: (state: S) => T, intervalMs = CHART_REDRAW_MS): T {
  const [value, setValue] = useState(() => selector(store.getState()));
  const firedAt = useRef<number | null>(null);
  useEffect(() => {
    if (firedAt.current === null) return;
    recentRedrawMs = Math.max(performance.now() - firedAt.current, 0.8 * recentRedrawMs);
    firedAt.current = null;
  }, [value]);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    let last = 0;
    const fire = () => {
      timer = null;
      last = Date.now();
      firedAt.current = performance.now();
      setValue(() => selector(store.getState()));
    };
    const schedule = () => {
      if (timer === null) timer = setTimeout(fire, Math.max(0, last + redrawIntervalMs(intervalMs) - Date.now()));
    };
    const unsubscribe = store.subscribe(schedule);
    // The state may have moved between render and subscription.
    schedule();
    return () => {
      unsubscribe();
      if (timer !== null) clearTimeout(timer);
    };
  }, [store, selector, intervalMs]);
  return value;
}
