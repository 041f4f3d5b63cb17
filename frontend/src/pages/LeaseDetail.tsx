import { Alert, Anchor, Button, Card, Group, Select, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useEffect, useState, type FormEvent } from 'react';
import { Link } from 'wouter';
import { api, type Schemas } from '../api/client';
import { Countdown, StateBadge } from '../components/LeaseBits';
import { OrderOfLease } from '../components/OrderPanel';
import { Outputs } from '../components/Outputs';
import { Section } from '../components/Section';
import { ErrorNotice, FormProblem, Loadable } from '../components/States';
import { useAction } from '../lib/action';
import { useEvents } from '../lib/events';
import { formatTime, MODE_LABELS, shortId } from '../lib/format';
import { hourLabel, wholeHours } from '../lib/hours';
import { useLoad } from '../lib/load';
import { placementText } from '../lib/placement';
import { unitsText } from '../lib/quote';
import { formatMoney, formatQuantity, multiply } from '../lib/money';
import { fieldError } from '../lib/problem';

type Lease = Schemas['LeaseView'];
const LIVE = ['pending', 'provisioning', 'running', 'preempting'];

export function LeaseDetail({ id }: { id: string }) {
  const lease = useLoad(() => api.GET('/v1/leases/{id}', { params: { path: { id } } }), [id]);
  const logs = useLoad(() => api.GET('/v1/leases/{id}/logs', { params: { path: { id } } }), [id]);
  useEvents((e) => {
    if (e.lease_id === id) {
      lease.reload();
      logs.reload();
    }
  });
  const live = lease.data && LIVE.includes(lease.data.state);
  // Logs arrive with the agent's uploads, which send no event: poll while live.
  useEffect(() => {
    if (!live) return;
    const t = setInterval(logs.reload, 3000);
    return () => clearInterval(t);
  }, [live, logs.reload]);

  return (
    <Stack>
      <Group>
        <Anchor component={Link} href="/leases">
          ← Leases
        </Anchor>
      </Group>
      <Loadable loaded={lease}>
        {(l) => (
          <>
            <Group>
              <Title order={1} size="h2">
                Lease <span style={{ fontFamily: 'monospace' }}>{shortId(l.id)}</span>
              </Title>
              <StateBadge state={l.state} />
            </Group>
            {l.state === 'preempting' && l.preempt_at && (
              <Alert color="red" title="Preemption notice" data-testid="preempt-notice">
                The workload got SIGTERM; the lease <Countdown to={l.preempt_at} label="ends in" />.
              </Alert>
            )}
            {l.rebalance_at && LIVE.includes(l.state) && l.state !== 'preempting' && (
              <Alert color="orange" title="Rebalance warning" data-testid="rebalance-notice">
                The spot clearing price came within 10 % of your bid at {formatTime(l.rebalance_at)}. Convert to on-demand to keep
                the slice.
              </Alert>
            )}
            <Facts lease={l} />
            <OrderOfLease orderId={l.order_id} leaseId={l.id}>
              {LIVE.includes(l.state) && <Actions lease={l} onChange={lease.reload} />}
            </OrderOfLease>
          </>
        )}
      </Loadable>
      <Section title="Logs">
        <Loadable loaded={logs} isEmpty={(d) => d.tail === ''} empty="No output yet.">
          {(d) => (
            <>
              <pre className="logs" data-testid="logs" tabIndex={0}>
                {d.tail}
              </pre>
              <Text size="xs" c="dimmed">
                {d.total_bytes} bytes{d.complete ? ', complete' : ''}; updated {formatTime(d.updated_at)}
              </Text>
            </>
          )}
        </Loadable>
      </Section>
      {lease.data && <Outputs leaseId={id} live={Boolean(live)} />}
    </Stack>
  );
}

function Facts({ lease: l }: { lease: Lease }) {
  const rows: [string, React.ReactNode][] = [
    ['Mode', MODE_LABELS[l.mode] ?? l.mode],
    ['GPU', `${l.gpu_model} in ${l.region}`],
    ['Slice', placementText(l.placement)],
    // A lease on several GPUs lists their devices comma-separated: let them wrap.
    ['Device', l.device ? l.device.split(',').join(', ') : '—'],
    // What ran, by ID: the tag the order named may point elsewhere since.
    ...(l.image_id ? [['Image', <code key="image" title={l.image_id}>{l.image_id.slice(0, 19)}…</code>] as [string, React.ReactNode]] : []),
    ['Units held', `${unitsText({ tflops: l.units.tflops_h, vram: l.units.vram_h })} of GPU memory per hour (${formatQuantity(l.units.vram_h)} × 4 GB VRAM units)`],
    ['Price per hour', formatMoney(l.price_per_hour)],
    ['Charged so far', formatMoney(l.usage.charged)],
    ['Starts', formatTime(l.starts_at)],
    ['Ends', l.ends_at ? formatTime(l.ends_at) : 'when released'],
  ];
  // Listed for resale: the slice goes at the listing's start, sold or not;
  // `ends_at` stays the end of the window still owed.
  if (l.vacate_at) rows.push(['Vacates', `${formatTime(l.vacate_at)} (listed for resale)`]);
  if (l.end_reason) rows.push(['Ended because', l.end_reason]);
  if (l.exit_code !== null && l.exit_code !== undefined) rows.push(['Exit code', String(l.exit_code)]);
  if (l.failure) rows.push(['Failure', l.failure]);
  return (
    <Card withBorder>
      <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs">
        {rows.map(([k, v]) => (
          <div key={k}>
            <Text size="xs" c="dimmed">
              {k}
            </Text>
            <Text data-testid={`fact-${k}`}>{v}</Text>
          </div>
        ))}
      </SimpleGrid>
      {l.conversions.length > 0 && (
        <Text size="sm" mt="sm">
          Converted:{' '}
          {l.conversions.map((c) => `${c.from_mode} → ${c.to_mode} at ${formatTime(c.effective_at)} (${formatMoney(c.price_per_hour_after)}/h)`).join('; ')}
        </Text>
      )}
    </Card>
  );
}

function Actions({ lease: l, onChange }: { lease: Lease; onChange: () => void }) {
  const { busy, problem, run } = useAction();
  const [doing, setDoing] = useState<'release' | 'convert' | null>(null);
  const [confirming, setConfirming] = useState(false);

  async function act(what: 'release' | 'convert', call: Parameters<typeof run>[0]) {
    setDoing(what);
    await run(call);
    setConfirming(false);
    onChange();
  }
  const release = () => act('release', () => api.POST('/v1/leases/{id}/release', { params: { path: { id: l.id } } }));
  const toOnDemand = () => act('convert', () => api.POST('/v1/leases/{id}/convert', { params: { path: { id: l.id } }, body: { to: 'on_demand' } }));

  return (
    <Section title="Actions">
      <Stack>
        <Group>
          {confirming ? (
            <>
              <Text>Release this lease now? The workload stops.</Text>
              <Button color="red" onClick={release} loading={busy && doing === 'release'}>
                Yes, release
              </Button>
              <Button variant="default" onClick={() => setConfirming(false)}>
                Keep it
              </Button>
            </>
          ) : (
            <Button color="red" variant="outline" onClick={() => setConfirming(true)} disabled={l.state === 'preempting'}>
              Release
            </Button>
          )}
          {l.mode === 'spot' && l.state === 'running' && (
            <Button variant="outline" onClick={toOnDemand} loading={busy && doing === 'convert'}>
              Convert to on-demand
            </Button>
          )}
        </Group>
        <ErrorNotice problem={problem} title="Refused" />
        {l.mode === 'on_demand' && l.state === 'running' && <ToReserved lease={l} onChange={onChange} />}
        {l.mode === 'reserved' && <ListForResale lease={l} onChange={onChange} />}
      </Stack>
    </Section>
  );
}

function ToReserved({ lease: l, onChange }: { lease: Lease; onChange: () => void }) {
  const hours = wholeHours(Date.now(), Date.now() + 8 * 86400_000, 3600_000);
  const [from, setFrom] = useState<string | null>(hours[0] ?? null);
  const [until, setUntil] = useState<string | null>(hours[8] ?? null);
  const { busy, problem, run } = useAction();
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (await run(() => api.POST('/v1/leases/{id}/convert', { params: { path: { id: l.id } }, body: { to: 'reserved', from, until } }))) onChange();
  }
  const options = hours.map((h) => ({ value: h, label: hourLabel(h) }));
  return (
    <form onSubmit={submit}>
      <Text fw={500} mb={4}>
        Convert to reserved (0.85 × list from the start hour)
      </Text>
      <Group align="flex-start">
        <Select label="Reserved from" data={options} value={from} onChange={setFrom} error={fieldError(problem, 'from')} />
        <Select label="Until" data={options} value={until} onChange={setUntil} error={fieldError(problem, 'until')} />
        <Button type="submit" mt={24} variant="outline" loading={busy}>
          Convert
        </Button>
      </Group>
      <FormProblem problem={problem} />
    </form>
  );
}

function ListForResale({ lease: l, onChange }: { lease: Lease; onChange: () => void }) {
  const end = l.ends_at ? Date.parse(l.ends_at) : Date.now();
  const hours = wholeHours(Math.max(Date.now(), Date.parse(l.starts_at) - 120_000), end - 3600_000, 120_000);
  const cap = multiply(l.price_per_hour, '0.9');
  const [from, setFrom] = useState<string | null>(hours[0] ?? null);
  const [ask, setAsk] = useState('');
  const [done, setDone] = useState<string | null>(null);
  const { busy, problem, run } = useAction();
  async function submit(e: FormEvent) {
    e.preventDefault();
    const r = await run(() => api.POST('/v1/resale-listings', { body: { lease_id: l.id, from: from ?? '', ask_per_hour: ask.trim() } }));
    const data = r?.data;
    if (data) {
      setDone(`Listed from ${formatTime(data.from)} to ${formatTime(data.until)} at ${formatMoney(data.ask_per_hour)}/h.`);
      // The facts then show when the lease vacates.
      onChange();
    }
  }
  if (hours.length === 0) return <Text c="dimmed">Too little of the window is left to list for resale.</Text>;
  return (
    <form onSubmit={submit}>
      <Text fw={500} mb={4}>
        List the rest of the window for resale
      </Text>
      <Group align="flex-start">
        <Select label="From" data={hours.map((h) => ({ value: h, label: hourLabel(h) }))} value={from} onChange={setFrom} error={fieldError(problem, 'from')} />
        <TextInput
          label="Ask per hour"
          description={
            <span data-testid="ask-cap">
              At most {formatMoney(cap)} (0.9 × {formatMoney(l.price_per_hour)})
            </span>
          }
          value={ask}
          onChange={(e) => setAsk(e.currentTarget.value)}
          error={fieldError(problem, 'ask_per_hour')}
          inputMode="decimal"
        />
        <Button type="submit" mt={24} variant="outline" loading={busy}>
          List
        </Button>
      </Group>
      <FormProblem problem={problem} />
      {done && <Alert color="green">{done}</Alert>}
    </form>
  );
}
