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
import { asRunId, type RoundMetrics, type RunConfig, type RunId, type RunSummary } from '../../core/protocol';
import type { Awaitable } from '../sockets/io';
import { historyToCsv } from '../run/metrics';
import type { JoinInfo } from './lan';
import type { RunRegistry } from '../run/runs';

const METRICS_ROUTE = /^\/api\/runs\/([A-Za-z0-9_-]{1,64})\/metrics\.(json|csv)$/;

/** What the routes read: the registry of one process, or a cluster's leader (docs/scaling.md). */
export interface ApiSource {
  runCount(): Awaitable<number>;
  summaries(): Awaitable<RunSummary[]>;
  /** A run's configuration and history, or null when there is no such run. */
  history(runId: RunId): Awaitable<{ runId: RunId; config: RunConfig; history: readonly RoundMetrics[] } | null>;
}

/** The routes' view of one process's registry. */
export function registryApiSource(registry: RunRegistry): ApiSource {
  return {
    runCount: () => registry.size,
    summaries: () => registry.list().map((run) => run.summary()),
    history: (runId) => {
      const run = registry.list().find((candidate) => candidate.id === runId);
      return run === undefined ? null : { runId: run.id, config: run.config, history: run.history };
    },
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res
    .writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' })
    .end(JSON.stringify(body));
}

/** Answers with `value` now, or once it resolves; a rejection (a cluster's leader that did not answer) is a 503. */
function answer<T>(res: ServerResponse, value: Awaitable<T>, write: (resolved: T) => void): void {
  if (!(value instanceof Promise)) return write(value);
  value.then(write).catch(() => {
    if (!res.headersSent) sendJson(res, 503, { error: 'the server is electing a leader; try again' });
    else res.destroy();
  });
}

/** Whether a request target is under /api/ (the malformed ones too: they get the API's 404, not a file). */
export function isApiPath(url: string | undefined): boolean {
  return (url ?? '').startsWith('/api/');
}

/** Returns a handler that answers /api/* requests and returns false for anything else. */
export function createApiHandler(
  source: ApiSource,
  join: () => JoinInfo,
): (req: IncomingMessage, res: ServerResponse) => boolean {
  return (req, res) => {
    if (!isApiPath(req.url)) return false;
    // No decoding: every route is plain ASCII, so an escape only ever names no route.
    const path = (req.url ?? '/').split('?', 1)[0]!;
    if (req.method !== 'GET') {
      res.writeHead(405, { Allow: 'GET' }).end();
      return true;
    }
    if (path === '/api/health') {
      answer(res, source.runCount(), (runs) => sendJson(res, 200, { ok: true, runs }));
      return true;
    }
    if (path === '/api/join') {
      sendJson(res, 200, join());
      return true;
    }
    if (path === '/api/runs') {
      answer(res, source.summaries(), (summaries) => sendJson(res, 200, summaries));
      return true;
    }
    const match = METRICS_ROUTE.exec(path);
    if (!match) {
      sendJson(res, 404, { error: 'not found' });
      return true;
    }
    answer(res, source.history(asRunId(match[1]!)), (run) => {
      if (run === null) sendJson(res, 404, { error: 'not found' });
      else if (match[2] === 'json') sendJson(res, 200, run);
      else
        res
          .writeHead(200, {
            'Content-Type': 'text/csv; charset=utf-8',
            'Content-Disposition': `attachment; filename="${run.runId}-metrics.csv"`,
            'Cache-Control': 'no-store',
          })
          .end(historyToCsv(run.history));
    });
    return true;
  };
}
