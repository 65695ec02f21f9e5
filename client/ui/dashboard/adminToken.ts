/**
 * The teacher's admin token: taken from `?token=` (the URL the server prints),
 * kept in sessionStorage for this tab, and removed from the address bar so it
 * is not shared by a screenshot or a projector.
 */
const STORAGE_KEY = 'atomo-swarm.adminToken';

/** The token of this tab, or null for a view-only dashboard. */
export function takeAdminToken(): string | null {
  const url = new URL(location.href);
  const fromUrl = url.searchParams.get('token');
  if (fromUrl !== null && fromUrl !== '') {
    sessionStorage.setItem(STORAGE_KEY, fromUrl);
    url.searchParams.delete('token');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
    return fromUrl;
  }
  return sessionStorage.getItem(STORAGE_KEY);
}
