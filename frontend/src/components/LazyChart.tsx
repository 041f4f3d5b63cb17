// uPlot (about 50 KB) loads with the first chart, not with the page: the
// market page's tables render without waiting for it.
import { lazy, Suspense, type ComponentProps } from 'react';

const Chart = lazy(() => import('./Chart').then((m) => ({ default: m.TimeChart })));

export function TimeChart(props: ComponentProps<typeof Chart>) {
  return (
    <Suspense fallback={<div style={{ height: (props.height ?? 220) + 40 }} role="img" aria-label={props.title} aria-busy />}>
      <Chart {...props} />
    </Suspense>
  );
}
