/** The teacher's actions, handed down to the dashboard's components; null on a view-only dashboard. */
import { createContext, useContext } from 'react';
import type { DashboardActions } from '../../net/dashboardChannel';

/** The context carrying the actions. */
export const ActionsContext = createContext<DashboardActions | null>(null);

/** The teacher's actions, or null when this dashboard may only watch. */
export function useActions(): DashboardActions | null {
  return useContext(ActionsContext);
}
