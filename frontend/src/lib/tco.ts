// The Capacity & TCO page's logic: the profile's periods, the TCO body built
// from the form (decimals stay the strings the user typed), and the rows the
// page shows. Nothing here turns money into a JavaScript number.
import type { Schemas } from '../api/client';
import Decimal from 'decimal.js-light';
import { shortId } from './format';
import { formatQuantity } from './money';

export type Period = 'month' | '7d' | '30d' | '90d';

export const PERIODS: { value: Period; label: string }[] = [
  { value: 'month', label: 'This month' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
  { value: '90d', label: 'Last 90 days' },
];

/** `[from, to)` of a period as RFC 3339, as of `now`. */
export function periodWindow(period: Period, now: Date): { from: string; to: string } {
  const to = new Date(Math.ceil(now.getTime() / 60_000) * 60_000 + 60_000);
  if (period === 'month') {
    const from = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    return { from: from.toISOString(), to: to.toISOString() };
  }
  const days = { '7d': 7, '30d': 30, '90d': 90 }[period];
  return { from: new Date(to.getTime() - days * 86_400_000).toISOString(), to: to.toISOString() };
}

export interface TcoForm {
  nodePricePerHour: string;
  months: string;
  utilization: string;
  gpuModel: string | null;
  /** Price the profile shown (else the server reads the last 30 days). */
  useShownProfile: boolean;
}

type Shape = Schemas['Concurrency'];

function shapeInput(c: Shape): Schemas['LoadShapeInput'] {
  return { peak: c.peak, mean: c.mean, baseline: c.baseline, mean_above_baseline: c.mean_above_baseline };
}

/** A profile's total as the `profile` of a TCO body. */
export function profileInput(p: Schemas['CapacityProfile']): Schemas['LoadProfileInput'] {
  return { tflops_units: shapeInput(p.total.tflops_units), vram_units: shapeInput(p.total.vram_units), spot_share: p.spot_share };
}

/**
 * The body of `POST /v1/tco`: blank fields are left to the server's defaults.
 * With `importId` it prices that job-history import (the server reads its
 * profile; `profile` is never sent with it).
 */
export function tcoBody(form: TcoForm, shown?: Schemas['CapacityProfile'], importId?: string): Schemas['TcoRequest'] {
  const body: Schemas['TcoRequest'] = { node_price_per_hour: form.nodePricePerHour.trim() };
  const months = form.months.trim();
  if (months !== '') body.months = /^\d+$/.test(months) ? Number(months) : (months as unknown as number);
  if (form.utilization.trim() !== '') body.utilization = form.utilization.trim();
  if (form.gpuModel) body.gpu_model = form.gpuModel;
  if (importId) body.import_id = importId;
  else if (form.useShownProfile && shown) body.profile = profileInput(shown);
  return body;
}

/** What a TCO priced, in words: the history, an import or the profile given. */
export function workPriced(a: Pick<Schemas['TcoAssumptions'], 'profile_source' | 'import_id'>): string {
  if (a.profile_source === 'history') return 'your last 30 days';
  if (a.profile_source === 'import') return a.import_id ? `the imported job history ${shortId(a.import_id)}` : 'the imported job history';
  return 'the profile given';
}

/** Whether a profile held anything. */
export function heldAnything(p: Schemas['CapacityProfile']): boolean {
  return p.total.tflops_units.unit_hours !== '0' || p.total.vram_units.unit_hours !== '0';
}

export interface GroupRow {
  id: string;
  by: string;
  group: Schemas['GroupProfile'];
}

/** Every group of a profile, the total first, each with what it is grouped by. */
export function groupRows(p: Schemas['CapacityProfile']): GroupRow[] {
  const rows: GroupRow[] = [{ id: 'all', by: 'Total', group: p.total }];
  for (const [by, list] of [
    ['Mode', p.by_mode],
    ['GPU model', p.by_gpu_model],
    ['Tag', p.by_tag],
  ] as const) {
    for (const g of list) rows.push({ id: `${by}:${g.key}`, by, group: g });
  }
  return rows;
}

/** Seconds as people read a duration: "45 s", "12 min", "3.5 h", "2.1 d". */
export function formatSeconds(s: number | null | undefined): string {
  if (s === null || s === undefined) return '—';
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${formatQuantity(String(s / 60), 1)} min`;
  if (s < 86_400) return `${formatQuantity(String(s / 3600), 1)} h`;
  return `${formatQuantity(String(s / 86_400), 1)} d`;
}

/** A 0–1 decimal string as a percentage with one decimal, exactly: "0.74" → "74 %". */
export function formatShare(v: string | null | undefined): string {
  if (v === null || v === undefined) return '—';
  const negative = v.startsWith('-');
  const [int, frac = ''] = (negative ? v.slice(1) : v).split('.');
  const digits = (int + (frac + '00').slice(0, 2)).replace(/^0+(?=\d)/, '');
  const rest = frac.slice(2);
  const pct = rest.length > 0 ? `${digits}.${rest}` : digits;
  return `${negative ? '-' : ''}${formatQuantity(pct, 1)} %`;
}

/** Units held: two decimals, or three significant digits below 1 so a small mean never reads 0. */
export function formatUnits(v: string | null | undefined): string {
  if (v === null || v === undefined || v.trim() === '') return '—';
  let d: Decimal;
  try {
    d = new Decimal(v.trim());
  } catch {
    return '—';
  }
  if (d.isZero() || d.abs().gte(1)) return formatQuantity(v, 2);
  return d.toSignificantDigits(3, Decimal.ROUND_HALF_EVEN).toFixed();
}
