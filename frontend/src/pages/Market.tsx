import { Badge, Grid, Group, SegmentedControl, Select, Stack, Text, Title } from '@mantine/core';
import { useEffect, useMemo, useState } from 'react';
import { api, type Schemas } from '../api/client';
import { TimeChart } from '../components/LazyChart';
import { DataTable } from '../components/DataTable';
import { PRICE_COLUMNS, priceKey } from '../components/Pickers';
import { Section } from '../components/Section';
import { Loadable } from '../components/States';
import { formatTime } from '../lib/format';
import { toSeconds } from '../lib/time';
import { useLoad } from '../lib/load';
import { MARKET_READS, prefetched } from '../lib/prefetch';
import { formatMoney, formatQuantity, formatUnitPrice, toChartNumber } from '../lib/money';

type Book = Schemas['BookEntry'];
type Clearing = { gpu_model: string; region: string; clearing_index: string; unit_prices: Record<string, string>; at: string };

const RANGES: Record<string, { interval: '1m' | '1h' | '1d'; ms: number }> = {
  '1h': { interval: '1m', ms: 3600_000 },
  '24h': { interval: '1h', ms: 86400_000 },
  '30d': { interval: '1d', ms: 30 * 86400_000 },
};

/** The public market stream: clearings, list-price changes and book updates as they happen. */
function useMarketStream(onEvent: (type: string, data: unknown) => void) {
  useEffect(() => {
    const source = new EventSource('/v1/market/stream');
    const handle = (type: string) => (e: MessageEvent) => {
      try {
        onEvent(type, JSON.parse(e.data));
      } catch {
        // Not JSON: nothing to show.
      }
    };
    for (const type of ['clearing', 'price', 'book']) source.addEventListener(type, handle(type) as EventListener);
    return () => source.close();
  }, []);
}

export function Market() {
  const prices = useLoad(() => prefetched('prices', MARKET_READS.prices), []);
  const book = useLoad(() => prefetched('book', MARKET_READS.book), []);
  const resale = useLoad(() => prefetched('resale', MARKET_READS.resale), []);
  const markets = useMemo(
    () => [...new Set((prices.data ?? []).map((p) => `${p.gpu_model}|${p.region}`))].sort(),
    [prices.data],
  );
  const [market, setMarket] = useState<string | null>(null);
  const chosen = market ?? markets[0] ?? null;
  const [range, setRange] = useState('1h');
  const [livePrices, setLivePrices] = useState<Record<string, Schemas['PriceView']>>({});
  const [liveBook, setLiveBook] = useState<Record<string, Book>>({});
  const [clearings, setClearings] = useState<Clearing[]>([]);
  const [lastEvent, setLastEvent] = useState<string | null>(null);

  useMarketStream((type, data) => {
    setLastEvent(new Date().toISOString());
    if (type === 'price') {
      const p = data as Schemas['PriceView'];
      setLivePrices((m) => ({ ...m, [`${p.region}|${p.gpu_model}|${p.unit}`]: p }));
    } else if (type === 'book') {
      const b = data as Book;
      setLiveBook((m) => ({ ...m, [`${b.gpu_model}|${b.region}`]: b }));
    } else if (type === 'clearing') {
      setClearings((c) => [...c.slice(-500), data as Clearing]);
    }
  });

  const [model, region] = chosen ? chosen.split('|') : [null, null];
  const from = useMemo(() => new Date(Date.now() - RANGES[range].ms).toISOString(), [range, chosen]);
  const history = useLoad(
    () =>
      model && region
        ? api.GET('/v1/market/history', { params: { query: { gpu_model: model, region, interval: RANGES[range].interval, from } } })
        : Promise.resolve({ data: [] as Schemas['HistoryPoint'][], error: undefined, response: new Response() }),
    [model, region, range, from],
  );

  const priceRows = (prices.data ?? []).map((p) => livePrices[`${p.region}|${p.gpu_model}|${p.unit}`] ?? p);
  const bookRows = (book.data ?? []).map((b) => liveBook[`${b.gpu_model}|${b.region}`] ?? b);
  const live = clearings.filter((c) => c.gpu_model === model && c.region === region);
  const points = (history.data ?? []).map((h) => ({ t: toSeconds(h.start), index: h.close, tflops: h.prices.tflops_h.close }));
  // The live clearings extend the history (the history is per interval, the stream per auction).
  const last = points.length ? points[points.length - 1].t : 0;
  for (const c of live) {
    const t = toSeconds(c.at);
    if (t > last) points.push({ t, index: c.clearing_index, tflops: c.unit_prices.tflops_h });
  }

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={1} size="h2">
          Market
        </Title>
        <Text size="sm" data-testid="market-live">
          {lastEvent ? `Live: last update ${formatTime(lastEvent)}` : 'Connecting to the live stream…'}
        </Text>
      </Group>
      <Section
        title="Spot clearing price"
        aside={
          <Group>
            <Select
              aria-label="Market"
              w={270}
              data={markets.map((m) => ({ value: m, label: m.replace('|', ' in ') }))}
              value={chosen}
              onChange={setMarket}
            />
            <SegmentedControl aria-label="Range" value={range} onChange={setRange} data={Object.keys(RANGES)} />
          </Group>
        }
      >
        <Loadable loaded={history} isEmpty={() => points.length === 0} empty="No auction has cleared in this market in this range yet.">
          {() => (
            <TimeChart
              title={`Spot clearing index and TFLOPS-hour price for ${model} in ${region}`}
              span={[toSeconds(from), Math.max(toSeconds(from) + RANGES[range].ms / 1000, points[points.length - 1]?.t ?? 0)]}
              times={points.map((p) => p.t)}
              series={[
                { label: 'Clearing index (× list)', values: points.map((p) => toChartNumber(p.index)), color: '#1971c2' },
              ]}
            />
          )}
        </Loadable>
        {points.length > 0 && (
          <Text size="sm" mt="xs" data-testid="spot-price">
            Now: {formatQuantity(points[points.length - 1].index, 4)} × list, {formatUnitPrice(points[points.length - 1].tflops)} per TFLOPS-hour
          </Text>
        )}
      </Section>
      <Grid>
        <Grid.Col span={{ base: 12, lg: 7 }}>
          <Section title="Book depth">
            <Loadable loaded={book} isEmpty={(d) => d.length === 0} empty="No capacity on the market yet.">
              {() => (
                <DataTable
                  data-testid="book"
                  rows={bookRows}
                  rowKey={(b) => `${b.gpu_model}|${b.region}`}
                  columns={[
                    { header: 'Market', cell: (b) => `${b.gpu_model === 'any' ? 'Any model' : b.gpu_model} · ${b.region === 'any' ? 'any region' : b.region}` },
                    { header: 'GPUs (idle)', cell: (b) => `${b.gpus} (${b.idle_gpus})` },
                    { header: 'Used', cell: (b) => `${b.utilization.toFixed(0)} %` },
                    { header: 'Clearing', cell: (b) => (b.clearing_index ? `${formatQuantity(b.clearing_index, 4)} ×` : '—') },
                    { header: 'Bids', cell: (b) => <Bids bids={b.bids} /> },
                    { header: 'Resale asks', cell: (b) => b.resale_asks.length },
                  ]}
                />
              )}
            </Loadable>
          </Section>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <Section title="Resale offers">
            <Loadable loaded={resale} isEmpty={(d) => d.length === 0} empty="No open resale listings.">
              {(d) => (
                <DataTable
                  data-testid="resale-offers"
                  rows={d}
                  rowKey={(o) => o.id}
                  columns={[
                    { header: 'Market', cell: (o) => `${o.gpu_model} · ${o.region}` },
                    { header: 'Window', cell: (o) => `${formatTime(o.from)} – ${formatTime(o.until)}` },
                    { header: 'Ask / h', cell: (o) => formatMoney(o.ask_per_hour) },
                    { header: 'Reserved / h', cell: (o) => formatMoney(o.reserved_price_per_hour) },
                  ]}
                />
              )}
            </Loadable>
          </Section>
        </Grid.Col>
      </Grid>
      <Section title="List prices per unit-hour">
        <Loadable loaded={prices} isEmpty={(d) => d.length === 0} empty="No list prices yet.">
          {() => (
            <DataTable
              data-testid="prices"
              striped
              rows={priceRows}
              rowKey={priceKey}
              columns={[
                ...PRICE_COLUMNS,
                { header: 'On-demand', cell: (p) => formatUnitPrice(p.on_demand, p.currency) },
                { header: 'Reserved', cell: (p) => formatUnitPrice(p.reserved, p.currency) },
                { header: 'Spot', cell: (p) => `${formatUnitPrice(p.spot_floor, p.currency)}–${formatUnitPrice(p.spot_cap, p.currency)}` },
                { header: 'Pooled', cell: (p) => formatUnitPrice(p.pooled, p.currency) },
              ]}
            />
          )}
        </Loadable>
      </Section>
    </Stack>
  );
}

/** The best bids of a pool, the winners marked. */
function Bids({ bids }: { bids: Book['bids'] }) {
  if (bids.length === 0) return <>none</>;
  return (
    <>
      {bids.slice(0, 3).map((bid, i) => (
        <div key={i}>
          {formatQuantity(bid.tflops)} TFLOPS at {bid.price_index ? `${formatQuantity(bid.price_index, 4)} ×` : '—'}
          {bid.winning && (
            <Badge ml={4} size="xs" color="#1b5e20">
              winning
            </Badge>
          )}
        </div>
      ))}
    </>
  );
}
