/** A token bucket: each message takes a token; tokens refill at a steady rate up to the burst size. */
import type { RateLimit } from './limits';

/** Returns a function that says whether one more message is allowed now. */
export function createRateLimiter(limit: RateLimit, now: () => number = Date.now): () => boolean {
  let tokens = limit.burst;
  let last = now();
  return () => {
    const t = now();
    tokens = Math.min(limit.burst, tokens + ((t - last) / 1000) * limit.perSecond);
    last = t;
    if (tokens < 1) return false;
    tokens -= 1;
    return true;
  };
}
