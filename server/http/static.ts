/**
 * Serves the built client (dist/client) from the aggregator's own port, so a
 * classroom needs one URL. Files are served by `sirv`, which indexes the
 * directory once at start-up and answers only paths in that index: a
 * malformed escape, a traversal in any encoding or a NUL byte names no file,
 * so nothing outside the built client can be reached. Unknown paths without
 * a file extension fall back to index.html: the client routes `/` and
 * `/dashboard` itself.
 */
import { existsSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import sirv from 'sirv';

/** Longest request target served; longer ones are refused before any lookup (a 20 kB path names no file). */
export const MAX_URL_LENGTH = 2048;

/** A single byte range `bytes=a-b` (b optional) with a ≤ b; anything else is dropped and the whole file sent. */
const SIMPLE_RANGE = /^bytes=(\d{1,15})-(\d{0,15})$/;

function keepRange(header: string | undefined): boolean {
  const match = header === undefined ? null : SIMPLE_RANGE.exec(header);
  return match !== null && (match[2] === '' || Number(match[1]) <= Number(match[2]));
}

/**
 * Returns a request handler for the files under `rootDir`; it answers 404 itself.
 * A file that cannot be read once its headers are out (deleted by a rebuild
 * under a live server) is reported to `logError` and its connection closed.
 */
export function createStaticHandler(
  rootDir: string,
  logError: (error: unknown) => void,
): (req: IncomingMessage, res: ServerResponse) => void {
  const serve = existsSync(rootDir)
    ? sirv(rootDir, {
        single: true,
        etag: true,
        // Hashed assets never change under their name; everything else is revalidated.
        setHeaders: (res, pathname) =>
          res.setHeader(
            'Cache-Control',
            pathname.startsWith('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
          ),
      })
    : null;
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    if ((req.url ?? '').length > MAX_URL_LENGTH) {
      res.writeHead(414, { 'Content-Type': 'text/plain; charset=utf-8' }).end('URI too long');
      return;
    }
    // sirv trusts the Range header's numbers; a reversed or multi-part range would make it throw.
    if (req.headers.range !== undefined && !keepRange(req.headers.range)) delete req.headers.range;
    if (serve === null) {
      res
        .writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' })
        .end('The client is not built yet: run `npm start`, which builds it.');
      return;
    }
    // sirv pipes a file stream into the response without an error listener, so a read error would be
    // thrown out of the stream; the response's 'pipe' event hands us that stream before it opens the file.
    res.once('pipe', (source) =>
      source.once('error', (error) => {
        logError(new Error(`serving ${String(req.url).slice(0, 200)} failed`, { cause: error }));
        res.destroy();
      }),
    );
    serve(req, res, () => {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found');
    });
  };
}
