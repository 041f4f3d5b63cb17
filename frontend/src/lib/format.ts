export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
}

/** "4m 05s" until `iso` from `now`; "now" once it has passed. */
export function countdown(iso: string, now: number): string {
  const ms = Date.parse(iso) - now;
  if (Number.isNaN(ms)) return '—';
  if (ms <= 0) return 'now';
  const total = Math.ceil(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h > 0 ? `${h}h ${pad(m)}m ${pad(s)}s` : m > 0 ? `${m}m ${pad(s)}s` : `${s}s`;
}

/**
 * Eight hex digits that tell ids apart. Ids are UUIDv7, whose first digits
 * are the creation time: leases made in the same minute shared their first
 * eight, so the last eight (random) are shown instead.
 */
export function shortId(id: string): string {
  return id.replace(/-/g, '').slice(-8);
}

/**
 * A ledger memo for people: the server writes a charge's period as Unix
 * seconds (`lease <id> 1796181956–1796181964`); those become local times.
 */
export function memoText(memo: string | null | undefined, locale?: string): string {
  if (!memo) return '';
  return memo.replace(/\b(\d{10})[–-](\d{10})\b/g, (_m, a: string, b: string) => {
    const time = (s: string) => new Date(Number(s) * 1000).toLocaleTimeString(locale, { timeStyle: 'medium' });
    return `${time(a)}–${time(b)}`;
  });
}

export const MODE_LABELS: Record<string, string> = {
  on_demand: 'On-demand',
  reserved: 'Reserved',
  spot: 'Spot',
  pooled: 'Pooled',
};

/** What a list price is per: the API's unit names for people. */
export const UNIT_LABELS: Record<string, string> = {
  tflops_h: 'TFLOPS-hour',
  vram_h: '4 GB VRAM-hour',
};
