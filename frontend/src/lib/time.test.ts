import { describe, expect, it } from 'vitest';
import { dayStartSeconds, timeRange, toSeconds } from './time';

describe('chart times', () => {
  it('counts seconds, as uPlot does, not milliseconds', () => {
    expect(toSeconds('2026-12-02T00:00:00Z')).toBe(1796169600);
    expect(dayStartSeconds('2026-12-02')).toBe(1796169600);
    // A day key is a UTC day whatever the browser's zone.
    expect(dayStartSeconds('2026-12-02')).toBe(Date.UTC(2026, 11, 2) / 1000);
  });

  it('draws one day’s bar in a span of one day, not the 1,000 days uPlot pads a point with', () => {
    const day = dayStartSeconds('2026-12-02');
    // What uPlot proposes for a single time point: `_max = _min + 86400 / 1e-3`.
    const [min, max] = timeRange([day], day, day + 86400 / 1e-3, true);
    expect([min, max]).toEqual([day - 43200, day + 43200]);
    expect(max - min).toBe(86400);
  });

  it('spans the data, half a day past the ends for day bars', () => {
    const a = dayStartSeconds('2026-12-01');
    const b = dayStartSeconds('2026-12-05');
    expect(timeRange([a, b], a, b, true)).toEqual([a - 43200, b + 43200]);
    expect(timeRange([a, b], a, b, false)).toEqual([a, b]);
  });

  it('pads a single point of a line chart by an hour', () => {
    expect(timeRange([1000000], 1000000, 1000000 + 86400000, false)).toEqual([1000000 - 3600, 1000000 + 3600]);
  });

  it('draws the whole span asked for when the data covers only its end', () => {
    const now = 1796169600;
    expect(timeRange([now - 60, now], now - 60, now, false, [now - 3600, now])).toEqual([now - 3600, now]);
    expect(timeRange([], 0, 1, false, [now - 3600, now])).toEqual([now - 3600, now]);
  });

  it('keeps a drag-zoom as chosen', () => {
    expect(timeRange([0, 100, 200], 50, 150, false)).toEqual([50, 150]);
  });
});
