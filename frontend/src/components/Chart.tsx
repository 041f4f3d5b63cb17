// A thin uPlot wrapper: time series only (uPlot is 50 KB, canvas-drawn and
// fast with thousands of points). Values are display numbers; the money they
// came from stays a decimal string everywhere else.
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';

export interface Series {
  label: string;
  values: (number | null)[];
  color: string;
  bars?: boolean;
}

export function TimeChart({
  title,
  times,
  series,
  height = 220,
}: {
  title: string;
  /** Unix seconds. */
  times: number[];
  series: Series[];
  height?: number;
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
            paths: s.bars ? bars : undefined,
            points: { show: times.length < 3 },
          })),
        ],
        // One point would make uPlot span years around it: pad it by a day.
        scales: { x: { time: true, range: (_u, min, max) => (min === max ? [min - 86400, max + 86400] : [min, max]) } },
        axes: [{}, { size: 70 }],
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
  }, [times, series, height]);
  return <div ref={box} role="img" aria-label={title} />;
}

/** Categories as horizontal bars: the cost by tag, mode or model. */
export function BarList({
  title,
  rows,
}: {
  title: string;
  rows: { key: string; label: string; share: number; value: string }[];
}) {
  return (
    <table style={{ width: '100%', borderCollapse: 'collapse' }} aria-label={title}>
      <tbody>
        {rows.map((r) => (
          <tr key={r.key}>
            <th scope="row" style={{ textAlign: 'left', fontWeight: 500, padding: '4px 8px 4px 0', width: '30%' }}>
              {r.label}
            </th>
            <td style={{ width: '50%' }}>
              <div className="bar-track">
                <div className="bar-fill" style={{ width: `${Math.max(r.share * 100, 1)}%` }} />
              </div>
            </td>
            <td style={{ textAlign: 'right', padding: '4px 0 4px 8px', fontVariantNumeric: 'tabular-nums' }}>{r.value}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
