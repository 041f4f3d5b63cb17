// Order types (ARCHITECTURE.md §22): how long an order stands
// (`time_in_force`) and how many identical units it asks for (`count`, with
// `all_or_none` or `min_count`). Pure, so what the buy form sends and what
// the pages say are tested without a browser.
import { formatMoney } from './money';

export type TimeInForce = 'gtc' | 'ioc' | 'fok' | 'gtt';
type Mode = 'on_demand' | 'reserved' | 'spot' | 'pooled';

export const TIF_LABELS: Record<TimeInForce, string> = {
  ioc: 'Immediate or cancel',
  fok: 'Fill or kill',
  gtc: 'Good till cancelled',
  gtt: 'Good till time',
};

/** The most units one order asks for, and how far ahead a gtt order may stand. */
export const MAX_COUNT = 64;
export const MAX_GTT_MS = 7 * 86400_000;

/** The times in force a mode takes: spot bids stay until cancelled; reserved is booked now or refused. */
export function tifsFor(mode: Mode): TimeInForce[] {
  if (mode === 'spot') return [];
  if (mode === 'reserved') return ['ioc', 'fok'];
  return ['ioc', 'fok', 'gtc', 'gtt'];
}

/** Only on-demand and pooled orders ask for several units. */
export function takesCount(mode: Mode): boolean {
  return mode === 'on_demand' || mode === 'pooled';
}

/** The order-type inputs as the form holds them. */
export interface OrderTypeForm {
  tif: TimeInForce | null;
  /** A `datetime-local` value (local time, no zone), for gtt. */
  expiresAt: string;
  count: string | number;
  allOrNone: boolean;
  minCount: string | number;
}

export const EMPTY_ORDER_TYPE: OrderTypeForm = { tif: null, expiresAt: '', count: '', allOrNone: false, minCount: '' };

/** The form's state as the mode sees it: a time in force the mode does not take is no choice. */
export function effective(mode: Mode, form: OrderTypeForm): OrderTypeForm {
  const tif = form.tif && tifsFor(mode).includes(form.tif) ? form.tif : null;
  const count = takesCount(mode) ? form.count : '';
  return { ...form, tif, count };
}

/** Whether "At least" applies: not with all-or-none, nor fill-or-kill (every unit or none). */
export function takesMinCount(form: OrderTypeForm): boolean {
  return !form.allOrNone && form.tif !== 'fok';
}

function whole(value: string | number): number | null {
  if (value === '' || value === null || value === undefined) return null;
  const n = Number(value);
  return Number.isFinite(n) ? n : null;
}

/** A `datetime-local` value as RFC 3339 in UTC; kept as typed when it is no time (the server names it). */
export function localToIso(value: string): string {
  const t = new Date(value).getTime();
  return Number.isNaN(t) ? value : new Date(t).toISOString();
}

/** A time as a `datetime-local` value in this browser's zone, to the minute. */
export function isoToLocal(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The `count` a quote takes: only when set, on a mode that takes it. */
export function quoteFields(mode: Mode, form: OrderTypeForm): { count?: number } {
  const count = whole(effective(mode, form).count);
  return count !== null ? { count } : {};
}

/**
 * The order-type fields of an order, each only when set. `waits` is the
 * pooled order's own `max_wait_s`, sent only when no time in force is chosen
 * (the server takes one of the two).
 */
export function orderFields(mode: Mode, raw: OrderTypeForm, maxWaitS: number | null): Record<string, unknown> {
  const form = effective(mode, raw);
  const out: Record<string, unknown> = {};
  if (form.tif) {
    out.time_in_force = form.tif;
    if (form.tif === 'gtt' && form.expiresAt.trim()) out.expires_at = localToIso(form.expiresAt);
  } else if (mode === 'pooled' && maxWaitS !== null) {
    out.max_wait_s = maxWaitS;
  }
  Object.assign(out, quoteFields(mode, form));
  if (takesCount(mode)) {
    if (form.allOrNone) out.all_or_none = true;
    const min = whole(form.minCount);
    if (min !== null && takesMinCount(form)) out.min_count = min;
  }
  return out;
}

/** The answer of a quote for several units. */
export interface UnitsQuoteLike {
  count: number;
  placeable_now: number;
  price_per_hour: string;
}

/** "2 of 3 units fit now, $4.20/h together". */
export function unitsFitText(units: UnitsQuoteLike, currency = 'USD'): string {
  const noun = units.count === 1 ? 'unit' : 'units';
  if (units.placeable_now === 0) return `None of ${units.count} ${noun} fit now.`;
  return `${units.placeable_now} of ${units.count} ${noun} fit now, ${formatMoney(units.price_per_hour, currency)}/h together.`;
}

/** An order's type as its fills report it. */
export interface OrderTypeLike {
  time_in_force?: TimeInForce | null;
  expires_at?: string | null;
  count: number;
  min_count: number;
}

/**
 * "fok · 2 units (min 2)", "gtt until <time> · 1 unit": the short names
 * traders use, the units, and the fewest the order took when it asked for several.
 */
export function orderTypeText(t: OrderTypeLike, formatTime: (iso: string) => string = (iso) => iso): string {
  const parts: string[] = [];
  if (t.time_in_force) parts.push(t.expires_at ? `${t.time_in_force} until ${formatTime(t.expires_at)}` : t.time_in_force);
  else parts.push('until cancelled (spot)');
  const units = `${t.count} ${t.count === 1 ? 'unit' : 'units'}`;
  parts.push(t.count > 1 ? `${units} (min ${t.min_count})` : units);
  return parts.join(' · ');
}

/** What a time in force means, for the select's description. */
export const TIF_HELP: Record<TimeInForce, string> = {
  ioc: 'Fills what it can now, or is refused',
  fok: 'Every unit now, or nothing',
  gtc: 'Waits for capacity, up to 7 days',
  gtt: 'Waits until the time you set (within 7 days)',
};
