// Times for uPlot, whose time scales count Unix seconds (not the
// milliseconds of Date), and the x range a chart shows.

/** An ISO time as Unix seconds. */
export function toSeconds(iso: string): number {
  return Date.parse(iso) / 1000;
}

/** A day key ("2026-12-02", a UTC billing day) as the Unix seconds of its start. */
export function dayStartSeconds(day: string): number {
  return toSeconds(/^\d{4}-\d{2}-\d{2}$/.test(day) ? `${day}T00:00:00Z` : day);
}

const HOUR = 3600;
const DAY = 86400;

/**
 * The x range to draw, given the range uPlot proposes. When it proposes the
 * whole data (not a drag-zoom), the data's own span is used: uPlot pads a
 * single time point with `86400 / ms` seconds, which is 1,000 days with
 * seconds, so one day's bar sat in a span of almost three years. Day bars get
 * half a day either side so the first and last bars are not cut in half; a
 * single point elsewhere gets an hour.
 */
export function timeRange(
  times: readonly number[],
  min: number,
  max: number,
  days: boolean,
  span?: readonly [number, number],
): [number, number] {
  if (times.length === 0) return span ? [span[0], span[1]] : [min, max];
  const first = Math.min(...times);
  const last = Math.max(...times);
  const zoomed = min > first || max < last;
  if (zoomed) return [min, max];
  let range: [number, number];
  if (days) range = [first - DAY / 2, last + DAY / 2];
  else if (first === last) range = [first - HOUR, last + HOUR];
  else range = [first, last];
  // The span asked for (the market's 1h / 24h / 30d) is drawn whole.
  return span ? [Math.min(range[0], span[0]), Math.max(range[1], span[1])] : range;
}
