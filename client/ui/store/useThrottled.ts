/**
 * Reads a store slice at most a few times a second: charts re-render on a
 * timer, not on every round, however fast rounds arrive.
 */
import { useEffect, useState } from 'react';
import type { StoreApi } from 'zustand';

/** Chart redraw interval: 3 redraws a second at most. */
export const CHART_REDRAW_MS = 333;

/**
 * Like zustand's `useStore(store, selector)`, but the component learns of a
 * change at most once per `intervalMs` (trailing edge, so the last value is
 * always shown). `selector` must be stable (module level or useCallback) and
 * return the same reference for unchanged data.
 */
export function useThrottledStore<S, T>(store: StoreApi<S>, selector: (state: S) => T, intervalMs = CHART_REDRAW_MS): T {
  const [value, setValue] = useState(() => selector(store.getState()));
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | null = null;
    let last = 0;
    const fire = () => {
      timer = null;
      last = Date.now();
      setValue(() => selector(store.getState()));
    };
    const schedule = () => {
      if (timer === null) timer = setTimeout(fire, Math.max(0, last + intervalMs - Date.now()));
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
