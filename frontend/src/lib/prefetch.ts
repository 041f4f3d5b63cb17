// Reads a page needs, started before its chunk arrives. /market is the page
// people open cold (it is public); its first render used to wait for the
// page chunk, then for its reads. main.tsx starts both at once: the chunk
// and these reads, each taken (once) by the page's first load.
import { api } from '../api/client';

type Answer = Promise<{ data?: unknown; error?: unknown; response: Response }>;
const started = new Map<string, Answer>();

/** The market page's public reads, by name. */
export const MARKET_READS = {
  prices: () => api.GET('/v1/prices'),
  book: () => api.GET('/v1/market/book', { params: { query: { depth: 10 } } }),
  resale: () => api.GET('/v1/market/resale'),
};

export function startMarketReads(): void {
  for (const [name, read] of Object.entries(MARKET_READS)) started.set(name, read());
}

/**
 * The read started early under `name`, if any (only once: a reload reads
 * again), else a fresh one.
 */
export function prefetched<T extends Answer>(name: string, read: () => T): T {
  const early = started.get(name);
  started.delete(name);
  return (early as T | undefined) ?? read();
}
