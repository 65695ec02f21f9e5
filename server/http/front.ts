/**
 * The front of an aggregator process: the HTTP(S) server with its error
 * boundary, security headers, /api rate limit and static client, and the
 * socket.io endpoint on the same port. One process (app.ts) and each
 * process of a cluster (server/cluster) put their own /api routes and
 * socket handlers behind it.
 */
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { Server, type ServerOptions } from 'socket.io';
import { isApiPath } from './api';
import { DEFAULT_API_RATE_LIMIT, createAddressRateLimiter, setSecurityHeaders } from './hardening';
import type { AppServer } from '../sockets/io';
import type { RateLimit } from '../protocol/limits';
import type { Scheduler } from '../run/run';
import { createStaticHandler } from './static';

/** What the front needs. */
export interface FrontOptions {
  /** Directory of the built client (dist/client). */
  readonly clientDir: string;
  readonly logError: (error: unknown) => void;
  readonly maxMessageBytes: number;
  readonly apiRateLimit?: RateLimit;
  readonly tls?: { readonly key: string; readonly cert: string };
  /** socket.io's adapter (a cluster's Redis Streams adapter); the in-memory one by default. */
  readonly adapter?: ServerOptions['adapter'];
}

/** The HTTP server, the socket.io server, and where the /api handler goes. */
export interface Front {
  readonly httpServer: HttpServer | HttpsServer;
  readonly io: AppServer;
  readonly scheme: 'http' | 'https';
  /** The port really bound (0 before listen). */
  boundPort(): number;
  /** Installs the handler of /api requests (it returns false for a path it does not serve). */
  setApiHandler(handler: (req: IncomingMessage, res: ServerResponse) => boolean): void;
}

/** Timers on Node's clock. */
export const nodeScheduler: Scheduler = {
  now: () => performance.timeOrigin + performance.now(),
  after: (ms, fn) => {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
  defer: (fn) => void setImmediate(fn),
};

/** Builds the front; call `httpServer.listen` to start. */
export function createFront(options: FrontOptions): Front {
  const { logError } = options;
  const serveStatic = createStaticHandler(options.clientDir, logError);
  let handleApi: ((req: IncomingMessage, res: ServerResponse) => boolean) | null = null;
  const apiLimiter = createAddressRateLimiter(options.apiRateLimit ?? DEFAULT_API_RATE_LIMIT);
  // The error boundary of every HTTP request: whatever a handler throws becomes a 500 (or a closed
  // connection once the headers are out), logged, and the server goes on.
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    try {
      setSecurityHeaders(res);
      if (isApiPath(req.url) && !apiLimiter(req.socket.remoteAddress ?? '')) {
        res
          .writeHead(429, { 'Content-Type': 'text/plain; charset=utf-8', 'Retry-After': '1' })
          .end('Too many requests');
        return;
      }
      if (handleApi?.(req, res)) return;
      serveStatic(req, res);
    } catch (error) {
      logError(new Error(`HTTP ${String(req.method).slice(0, 16)} request failed`, { cause: error }));
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Internal error');
      else res.destroy();
    }
  };
  const httpServer =
    options.tls === undefined
      ? createServer(handle)
      : createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, handle);
  const io: AppServer = new Server(httpServer, {
    // WebSocket only: no long-polling, so several processes need no sticky sessions.
    transports: ['websocket'],
    // Deliberate: the largest honest submission of any model and scheme (limits.ts).
    maxHttpBufferSize: options.maxMessageBytes,
    // Restores id, rooms and socket.data after a short drop; clients resync anyway.
    connectionStateRecovery: { maxDisconnectionDuration: 30_000, skipMiddlewares: false },
    ...(options.adapter === undefined ? {} : { adapter: options.adapter }),
  });
  return {
    httpServer,
    io,
    scheme: options.tls === undefined ? 'http' : 'https',
    boundPort: () => {
      const address = httpServer.address();
      return address !== null && typeof address === 'object' ? address.port : 0;
    },
    setApiHandler: (handler) => {
      handleApi = handler;
    },
  };
}
