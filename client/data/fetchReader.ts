/** The browser's DataFileReader: fetches data files from the server's static /data/ folder. */
import type { DataFileReader } from '../../core/data';

/** A reader that fetches `${baseUrl}/<name>`; rejects with the URL and HTTP status on failure. */
export function createFetchReader(baseUrl = '/data', fetchFile: typeof fetch = fetch): DataFileReader {
  const base = baseUrl.endsWith('/') ? baseUrl.slice(0, -1) : baseUrl;
  return async (name) => {
    const url = `${base}/${encodeURIComponent(name)}`;
    let response: Response;
    try {
      response = await fetchFile(url);
    } catch (error) {
      throw new Error(`Could not fetch ${url}: ${error instanceof Error ? error.message : String(error)}`, {
        cause: error,
      });
    }
    if (!response.ok) {
      throw new Error(`Could not fetch ${url}: HTTP ${response.status} ${response.statusText}`.trimEnd());
    }
    return new Uint8Array(await response.arrayBuffer());
  };
}
