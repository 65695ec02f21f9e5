import { describe, expect, it } from 'vitest';
import { createFetchReader } from './fetchReader';

/** A fetch that answers from a table of URL → body, 404 otherwise, and records the URLs asked for. */
function fakeFetch(files: Record<string, Uint8Array<ArrayBuffer>>, asked: string[]): typeof fetch {
  return async (input) => {
    const url = String(input);
    asked.push(url);
    const body = files[url];
    return body ? new Response(body) : new Response('missing', { status: 404, statusText: 'Not Found' });
  };
}

describe('createFetchReader', () => {
  it('fetches /data/<name> and returns the bytes', async () => {
    const asked: string[] = [];
    const read = createFetchReader('/data', fakeFetch({ '/data/mnist.json': Uint8Array.of(123, 125) }, asked));
    expect(Array.from(await read('mnist.json'))).toEqual([123, 125]);
    expect(asked).toEqual(['/data/mnist.json']);
  });

  it('rejects with the URL and HTTP status on failure', async () => {
    const read = createFetchReader('/data/', fakeFetch({}, []));
    await expect(read('mnist.bin')).rejects.toThrow('Could not fetch /data/mnist.bin: HTTP 404 Not Found');
  });

  it('rejects with the URL when the network fails', async () => {
    const read = createFetchReader('/data', async () => {
      throw new TypeError('Failed to fetch');
    });
    await expect(read('mnist.bin')).rejects.toThrow('Could not fetch /data/mnist.bin: Failed to fetch');
  });
});
