/** Whole hours (UTC ISO strings) from the first whole hour at least `leadMs` after `from`, up to `until`. */
export function wholeHours(from: number, until: number, leadMs: number, max = 200): string[] {
  const hour = 3600_000;
  const first = Math.ceil((from + leadMs) / hour) * hour;
  const out: string[] = [];
  for (let t = first; t <= until && out.length < max; t += hour) out.push(new Date(t).toISOString().replace('.000Z', 'Z'));
  return out;
}

export function hourLabel(iso: string): string {
  return new Date(iso).toLocaleString(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit', day: 'numeric', month: 'short' });
}
