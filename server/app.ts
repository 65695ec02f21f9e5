/**
 * The aggregator as a factory of its dependencies: an HTTP server that serves
 * the built client and the socket.io endpoint on one port. `server/index.ts`
 * only reads the configuration and listens; tests build one on port 0.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import { Server } from 'socket.io';
import { createStaticHandler } from './static';

export interface AppOptions {
  /** Directory of the built client (dist/client). */
  readonly clientDir: string;
  /** Token that teacher actions must present. */
  readonly adminToken: string;
}

export interface App {
  readonly httpServer: HttpServer;
  readonly io: Server;
  /** Stops accepting connections and closes every socket. */
  close(): Promise<void>;
}

/** Builds the HTTP server and the socket.io aggregator; call `httpServer.listen` to start. */
export function createApp(options: AppOptions): App {
  const serveStatic = createStaticHandler(options.clientDir);
  const httpServer = createServer((req, res) => {
    if (req.url === '/api/health') {
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ ok: true }));
      return;
    }
    serveStatic(req, res);
  });
  const io = new Server(httpServer, {
    // WebSocket only: no long-polling, so several processes need no sticky sessions.
    transports: ['websocket'],
  });
  return {
    httpServer,
    io,
    close: () =>
      new Promise((resolve) => {
        void io.close(() => resolve());
      }),
  };
}
