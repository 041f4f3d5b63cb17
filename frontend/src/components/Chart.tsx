// A thin uPlot wrapper: time series only (uPlot is 50 KB, canvas-drawn and
// fast with thousands of points). Values are display numbers; the money they
// came from stays a decimal string everywhere else.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import { timeRange } from '../lib/time';

const DAY = 86400;
const DAY_STEPS = [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY];
const dayLabel = (s: number) => new Date(s * 1000).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

export interface Series {
  label: string;
  values: (number | null)[];
  color: string;
  bars?: boolean;
  /** A dashed line (uPlot's canvas dash: drawn, gap, in pixels), so a series drawn over another leaves it visible. */
  dash?: number[];
}

export function TimeChart({
  title,
  times,
  series,
  height = 220,
  days = false,
  span,
}: {
  title: string;
  /** Unix seconds (uPlot's time unit), not Date's milliseconds: see lib/time. */
  times: number[];
  series: Series[];
  height?: number;
  /** One point per UTC day (billing days): the axis reads UTC dates and each bar gets its day's width. */
  days?: boolean;
  /** The span asked for (Unix seconds), drawn even where the data starts later: an hour's range shows an hour. */
  span?: [number, number];
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const bars = uPlot.paths.bars?.({ size: [0.6, 40] });
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 300),
        height,
        series: [
          {},
          ...series.map((s) => ({
            label: s.label,
            stroke: s.color,
            fill: s.bars ? s.color : undefined,
            width: 2,
            dash: s.dash,
            paths: s.bars ? bars : undefined,
            points: { show: !s.bars && times.length < 3 },
          })),
        ],
        scales: { x: { time: true, range: (_u, min, max) => timeRange(times, min, max, days, span) } },
        ...(days ? { tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC') } : {}),
        // Day bars tick whole days, labelled by date only.
        axes: [days ? { incrs: DAY_STEPS, values: (_u, splits) => splits.map(dayLabel) } : {}, { size: 70 }],
        legend: { show: true },
      },
      [times, ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 300), height }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, height, days, span?.[0], span?.[1]]);
  return <div ref={box} role="img" aria-label={title} />;
}
