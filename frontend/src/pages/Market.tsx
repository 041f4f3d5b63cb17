import { Badge, Card, Grid, Group, SegmentedControl, Select, Stack, Table, Text, Title } from '@mantine/core';
import { useEffect, useMemo, useState } from 'react';
import { api, type Schemas } from '../api/client';
import { TimeChart } from '../components/Chart';
import { Loadable } from '../components/States';
import { formatTime } from '../lib/format';
import { useLoad } from '../lib/load';
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
  const prices = useLoad(() => api.GET('/v1/prices'), []);
  const book = useLoad(() => api.GET('/v1/market/book', { params: { query: { depth: 10 } } }), []);
  const resale = useLoad(() => api.GET('/v1/market/resale'), []);
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
  const points = (history.data ?? []).map((h) => ({ t: Date.parse(h.start) / 1000, index: h.close, tflops: h.prices.tflops_h.close }));
  // The live clearings extend the history (the history is per interval, the stream per auction).
  const last = points.length ? points[points.length - 1].t : 0;
  for (const c of live) {
    const t = Date.parse(c.at) / 1000;
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
      <Card withBorder>
        <Group justify="space-between" mb="xs">
          <Title order={2} size="h4">
            Spot clearing price
          </Title>
          <Group>
            <Select
              aria-label="Market"
              data={markets.map((m) => ({ value: m, label: m.replace('|', ' in ') }))}
              value={chosen}
              onChange={setMarket}
            />
            <SegmentedControl aria-label="Range" value={range} onChange={setRange} data={Object.keys(RANGES)} />
          </Group>
        </Group>
        <Loadable loaded={history} isEmpty={() => points.length === 0} empty="No auction has cleared in this market in this range yet.">
          {() => (
            <TimeChart
              title={`Spot clearing index and TFLOPS-hour price for ${model} in ${region}`}
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
      </Card>
      <Grid>
        <Grid.Col span={{ base: 12, lg: 7 }}>
          <Card withBorder>
            <Title order={2} size="h4" mb="xs">
              Book depth
            </Title>
            <Loadable loaded={book} isEmpty={(d) => d.length === 0} empty="No capacity on the market yet.">
              {() => (
                <Table data-testid="book">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Market</Table.Th>
                      <Table.Th>GPUs (idle)</Table.Th>
                      <Table.Th>Used</Table.Th>
                      <Table.Th>Clearing</Table.Th>
                      <Table.Th>Bids</Table.Th>
                      <Table.Th>Resale asks</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {bookRows.map((b) => (
                      <Table.Tr key={`${b.gpu_model}|${b.region}`}>
                        <Table.Td>
                          {b.gpu_model} · {b.region}
                        </Table.Td>
                        <Table.Td>
                          {b.gpus} ({b.idle_gpus})
                        </Table.Td>
                        <Table.Td>{b.utilization.toFixed(0)} %</Table.Td>
                        <Table.Td>{b.clearing_index ? `${formatQuantity(b.clearing_index, 4)} ×` : '—'}</Table.Td>
                        <Table.Td>
                          {b.bids.length === 0
                            ? 'none'
                            : b.bids.slice(0, 3).map((bid, i) => (
                                <div key={i}>
                                  {formatQuantity(bid.tflops)} TFLOPS at {bid.price_index ? `${formatQuantity(bid.price_index, 4)} ×` : '—'}
                                  {bid.winning && (
                                    <Badge ml={4} size="xs" color="#1b5e20">
                                      winning
                                    </Badge>
                                  )}
                                </div>
                              ))}
                        </Table.Td>
                        <Table.Td>{b.resale_asks.length}</Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              )}
            </Loadable>
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 5 }}>
          <Card withBorder>
            <Title order={2} size="h4" mb="xs">
              Resale offers
            </Title>
            <Loadable loaded={resale} isEmpty={(d) => d.length === 0} empty="No open resale listings.">
              {(d) => (
                <Table data-testid="resale-offers">
                  <Table.Thead>
                    <Table.Tr>
                      <Table.Th>Market</Table.Th>
                      <Table.Th>Window</Table.Th>
                      <Table.Th>Ask / h</Table.Th>
                      <Table.Th>Reserved / h</Table.Th>
                    </Table.Tr>
                  </Table.Thead>
                  <Table.Tbody>
                    {d.map((o) => (
                      <Table.Tr key={o.id}>
                        <Table.Td>
                          {o.gpu_model} · {o.region}
                        </Table.Td>
                        <Table.Td>
                          {formatTime(o.from)} – {formatTime(o.until)}
                        </Table.Td>
                        <Table.Td>{formatMoney(o.ask_per_hour)}</Table.Td>
                        <Table.Td>{formatMoney(o.reserved_price_per_hour)}</Table.Td>
                      </Table.Tr>
                    ))}
                  </Table.Tbody>
                </Table>
              )}
            </Loadable>
          </Card>
        </Grid.Col>
      </Grid>
      <Card withBorder>
        <Title order={2} size="h4" mb="xs">
          List prices per unit-hour
        </Title>
        <Loadable loaded={prices} isEmpty={(d) => d.length === 0} empty="No list prices yet.">
          {() => (
            <Table data-testid="prices" striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>Region</Table.Th>
                  <Table.Th>GPU</Table.Th>
                  <Table.Th>Unit</Table.Th>
                  <Table.Th>List</Table.Th>
                  <Table.Th>On-demand</Table.Th>
                  <Table.Th>Reserved</Table.Th>
                  <Table.Th>Spot</Table.Th>
                  <Table.Th>Pooled</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {priceRows.map((p) => (
                  <Table.Tr key={`${p.region}|${p.gpu_model}|${p.unit}`}>
                    <Table.Td>{p.region}</Table.Td>
                    <Table.Td>{p.gpu_model}</Table.Td>
                    <Table.Td>{p.unit === 'tflops_h' ? 'TFLOPS-h' : '4 GB VRAM-h'}</Table.Td>
                    <Table.Td>{formatUnitPrice(p.list, p.currency)}</Table.Td>
                    <Table.Td>{formatUnitPrice(p.on_demand, p.currency)}</Table.Td>
                    <Table.Td>{formatUnitPrice(p.reserved, p.currency)}</Table.Td>
                    <Table.Td>
                      {formatUnitPrice(p.spot_floor, p.currency)}–{formatUnitPrice(p.spot_cap, p.currency)}
                    </Table.Td>
                    <Table.Td>{formatUnitPrice(p.pooled, p.currency)}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          )}
        </Loadable>
      </Card>
    </Stack>
  );
}
