// Money arrives from the API as decimal strings and stays decimal here:
// amounts are formatted from their strings and any arithmetic goes through
// decimal.js-light, never through JavaScript numbers.
import Decimal from 'decimal.js-light';

export type DecimalString = string;

function parse(value: DecimalString | null | undefined): Decimal | null {
  if (value === null || value === undefined || value.trim() === '') return null;
  try {
    return new Decimal(value.trim());
  } catch {
    return null;
  }
}

export function isDecimal(value: string): boolean {
  return /^-?\d+(\.\d+)?$/.test(value.trim());
}

/** Groups the integer part in threes: "12345.5" → "12,345.5". */
function group(digits: string): string {
  const negative = digits.startsWith('-');
  const [int, frac] = (negative ? digits.slice(1) : digits).split('.');
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return (negative ? '-' : '') + grouped + (frac ? '.' + frac : '');
}

const SYMBOLS: Record<string, string> = { USD: '$', EUR: '€', GBP: '£' };

/**
 * An amount for people: two decimals, or up to six significant ones for
 * sub-cent unit prices (a TFLOPS-hour costs fractions of a cent).
 */
export function formatMoney(value: DecimalString | null | undefined, currency = 'USD'): string {
  const d = parse(value);
  if (!d) return '—';
  const abs = d.abs();
  let text: string;
  if (abs.isZero() || abs.gte('0.01')) {
    text = d.toFixed(2, Decimal.ROUND_HALF_EVEN);
  } else {
    // Keep four significant digits, dropping trailing zeros.
    text = d.toSignificantDigits(4, Decimal.ROUND_HALF_EVEN).toFixed();
  }
  const symbol = SYMBOLS[currency];
  const body = group(text.replace('-', ''));
  const sign = d.isNegative() && !d.isZero() ? '-' : '';
  return symbol ? `${sign}${symbol}${body}` : `${sign}${body} ${currency}`;
}

/**
 * A price per unit-hour: exact to six decimals (what the API quotes), at
 * least two, trailing zeros dropped — "$0.0513", never a rounded "$0.05".
 */
export function formatUnitPrice(value: DecimalString | null | undefined, currency = 'USD'): string {
  const d = parse(value);
  if (!d) return '—';
  let text = d.abs().toDecimalPlaces(6, Decimal.ROUND_HALF_EVEN).toFixed();
  const [int, frac = ''] = text.split('.');
  text = int + '.' + frac.padEnd(2, '0');
  const symbol = SYMBOLS[currency];
  const sign = d.isNegative() && !d.isZero() ? '-' : '';
  return symbol ? `${sign}${symbol}${group(text)}` : `${sign}${group(text)} ${currency}`;
}

/** A quantity (units, TFLOPS) with at most `places` decimals, trailing zeros dropped. */
export function formatQuantity(value: DecimalString | null | undefined, places = 2): string {
  const d = parse(value);
  if (!d) return '—';
  return group(d.toDecimalPlaces(places, Decimal.ROUND_HALF_EVEN).toFixed());
}

export function add(...values: (DecimalString | null | undefined)[]): DecimalString {
  return values.reduce<Decimal>((sum, v) => sum.plus(parse(v) ?? 0), new Decimal(0)).toFixed();
}

export function subtract(a: DecimalString, b: DecimalString): DecimalString {
  return (parse(a) ?? new Decimal(0)).minus(parse(b) ?? 0).toFixed();
}

export function multiply(a: DecimalString, b: DecimalString): DecimalString {
  return (parse(a) ?? new Decimal(0)).times(parse(b) ?? 0).toFixed();
}

export function compare(a: DecimalString, b: DecimalString): number {
  return (parse(a) ?? new Decimal(0)).comparedTo(parse(b) ?? 0);
}

/** `part / whole` as a percentage string with one decimal ("42.5"); "0" when whole is zero. */
export function percent(part: DecimalString, whole: DecimalString): DecimalString {
  const w = parse(whole);
  if (!w || w.isZero()) return '0';
  return (parse(part) ?? new Decimal(0)).div(w).times(100).toDecimalPlaces(1, Decimal.ROUND_HALF_EVEN).toFixed();
}

/**
 * The saving of `price` against `reference` (both per hour), as an amount and
 * a percentage of the reference; null when there is no saving to show.
 */
export function saving(
  price: DecimalString | null | undefined,
  reference: DecimalString | null | undefined,
): { amount: DecimalString; percent: DecimalString } | null {
  const p = parse(price);
  const r = parse(reference);
  if (!p || !r || r.isZero() || p.gte(r)) return null;
  const amount = r.minus(p);
  return {
    amount: amount.toFixed(),
    percent: amount.div(r).times(100).toDecimalPlaces(1, Decimal.ROUND_HALF_EVEN).toFixed(),
  };
}

/**
 * For charts only: a plotted point needs a number. Never feed the result back
 * into money arithmetic.
 */
export function toChartNumber(value: DecimalString | null | undefined): number {
  const d = parse(value);
  return d ? Number(d.toFixed()) : 0;
}
