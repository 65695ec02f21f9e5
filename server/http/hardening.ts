/**
 * HTTP hardening: the security headers of every response, and a per-address
 * rate limit for /api.
 */
import type { ServerResponse } from 'node:http';
import type { RateLimit } from '../protocol/limits';
import { createRateLimiter } from '../protocol/rateLimit';

/**
 * The Content Security Policy of the app: scripts, workers and connections
 * (fetch of the digits, the socket.io WebSocket) only from this origin, with
 * blob: workers for the tab's training worker; styles may be inline (React
 * and recharts set element styles); images may be data: URLs (charts export,
 * QR code canvas). WebGPU needs no CSP source. No plugins, no framing.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "worker-src 'self' blob:",
  "connect-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Sets the headers every response carries. */
export function setSecurityHeaders(res: ServerResponse): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // The dashboard's address carries the admin token until the page removes it: never send it on.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}

/**
 * /api is polled by dashboards and scripts (metrics exports): 10 requests a
 * second per address with bursts of 50 is far above that and keeps one
 * client from making the server serialise histories in a loop.
 */
export const DEFAULT_API_RATE_LIMIT: RateLimit = { perSecond: 10, burst: 50 };

/** Most addresses tracked at once; the least recently seen is forgotten beyond it (a full bucket again). */
const MAX_TRACKED_ADDRESSES = 10_000;

/** A token bucket per remote address; returns whether one more request from `address` is allowed now. */
export function createAddressRateLimiter(limit: RateLimit, now: () => number = Date.now): (address: string) => boolean {
  const buckets = new Map<string, () => boolean>();
  return (address) => {
    let allow = buckets.get(address);
    if (allow) {
      buckets.delete(address); // re-inserted below: the Map's order is least recently seen first
    } else {
      allow = createRateLimiter(limit, now);
      if (buckets.size >= MAX_TRACKED_ADDRESSES) buckets.delete(buckets.keys().next().value!);
    }
    buckets.set(address, allow);
    return allow();
  };
}
