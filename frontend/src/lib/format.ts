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

export function shortId(id: string): string {
  return id.slice(0, 8);
}

export const MODE_LABELS: Record<string, string> = {
  on_demand: 'On-demand',
  reserved: 'Reserved',
  spot: 'Spot',
  pooled: 'Pooled',
};
