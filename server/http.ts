/**
 * HTTP routes besides the static client: health, the run list, and each
 * run's history as JSON or CSV (metrics only, no weights, so no token).
 *   GET /api/health
 *   GET /api/runs
 *   GET /api/join                  LAN addresses, scheme and port students can open
 *   GET /api/runs/<runId>/metrics.json
 *   GET /api/runs/<runId>/metrics.csv
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { asRunId } from '../core/protocol';
import { historyToCsv } from './metrics';
import type { JoinInfo } from './lan';
import type { RunRegistry } from './runs';

const METRICS_ROUTE = /^\/api\/runs\/([A-Za-z0-9_-]{1,64})\/metrics\.(json|csv)$/;

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' }).end(JSON.stringify(body));
}

/** Whether a request target is under /api/ (the malformed ones too: they get the API's 404, not a file). */
export function isApiPath(url: string | undefined): boolean {
  return (url ?? '').startsWith('/api/');
}

/** Returns a handler that answers /api/* requests and returns false for anything else. */
export function createApiHandler(registry: RunRegistry, join: () => JoinInfo): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (!isApiPath(req.url)) return false;
    // No decoding: every route is plain ASCII, so an escape only ever names no route.
    const path = (req.url ?? '/').split('?', 1)[0]!;
    if (req.method !== 'GET') {
      res.writeHead(405, { Allow: 'GET' }).end();
      return true;
    }
    if (path === '/api/health') {
      sendJson(res, 200, { ok: true, runs: registry.size });
      return true;
    }
    if (path === '/api/join') {
      sendJson(res, 200, join());
      return true;
    }
    if (path === '/api/runs') {
      sendJson(
        res,
        200,
        registry.list().map((run) => run.summary()),
      );
      return true;
    }
    const match = METRICS_ROUTE.exec(path);
    const run = match ? registry.list().find((candidate) => candidate.id === asRunId(match[1]!)) : undefined;
    if (!match || !run) {
      sendJson(res, 404, { error: 'not found' });
      return true;
    }
    if (match[2] === 'json') {
      sendJson(res, 200, { runId: run.id, config: run.config, history: run.history });
    } else {
      res
        .writeHead(200, {
          'Content-Type': 'text/csv; charset=utf-8',
          'Content-Disposition': `attachment; filename="${run.id}-metrics.csv"`,
          'Cache-Control': 'no-store',
        })
        .end(historyToCsv(run.history));
    }
    return true;
  };
}
