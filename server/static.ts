/**
 * Serves the built client (dist/client) from the aggregator's own port, so a
 * classroom needs one URL. Unknown paths without a file extension fall back to
 * index.html: the client routes `/` and `/dashboard` itself.
 */
import { createReadStream, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.wgsl': 'text/plain; charset=utf-8',
  '.bin': 'application/octet-stream',
  '.u8': 'application/octet-stream',
};

/** Returns a request handler for the files under `rootDir`; it answers 404 itself. */
export function createStaticHandler(rootDir: string): (req: IncomingMessage, res: ServerResponse) => void {
  const root = normalize(rootDir + sep);
  return (req, res) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD' }).end();
      return;
    }
    const pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://localhost').pathname);
    let file = normalize(join(root, pathname));
    if (!file.startsWith(root)) {
      res.writeHead(403).end('Forbidden');
      return;
    }
    let stat = statOrNull(file);
    if (stat?.isDirectory()) {
      file = join(file, 'index.html');
      stat = statOrNull(file);
    }
    if (stat === null && extname(pathname) === '') {
      // A client-side route such as /dashboard.
      file = join(root, 'index.html');
      stat = statOrNull(file);
    }
    if (stat === null || !stat.isFile()) {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end(
        pathname === '/' ? 'The client is not built yet: run `npm start`, which builds it.' : 'Not found',
      );
      return;
    }
    const hashedAsset = pathname.startsWith('/assets/');
    res.writeHead(200, {
      'Content-Type': CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
      'Content-Length': stat.size,
      'Cache-Control': hashedAsset ? 'public, max-age=31536000, immutable' : 'no-cache',
    });
    if (req.method === 'HEAD') {
      res.end();
      return;
    }
    createReadStream(file).pipe(res);
  };
}

function statOrNull(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}
