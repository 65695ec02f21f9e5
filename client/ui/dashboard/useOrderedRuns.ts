/**
 * The dashboard's runs in list order, read through the chart throttle: every
 * gradient a run receives changes the store, and a component that re-rendered
 * on each one would keep a starved laptop's main thread busy with tables the
 * teacher cannot read that fast anyway. Components using this redraw a few
 * times a second at most (useThrottledStore).
 */
import { useMemo } from 'react';
import { dashboardStore, type DashboardState, type RunView } from '../store/dashboardStore';
import { useThrottledStore } from '../store/useThrottled';
import { orderedRuns } from './selectors';

const selectRuns = (s: DashboardState) => s.runs;
const selectIds = (s: DashboardState) => s.runIds;

/** The runs in the server's list order, a few times a second at most. */
export function useOrderedRuns(): RunView[] {
  const runs = useThrottledStore(dashboardStore, selectRuns);
  const runIds = useThrottledStore(dashboardStore, selectIds);
  return useMemo(() => orderedRuns({ runIds, runs }), [runIds, runs]);
}
