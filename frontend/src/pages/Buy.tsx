import { Alert, Badge, Button, Card, Checkbox, Grid, Group, NumberInput, PasswordInput, SegmentedControl, Select, Stack, Text, TextInput, Textarea, Title } from '@mantine/core';
import { useDebouncedValue } from '@mantine/hooks';
import { useEffect, useMemo, useState, type FormEvent } from 'react';
import { useLocation } from 'wouter';
import { api, type Schemas } from '../api/client';
import { ORDER_TYPE_FIELDS, OrderTypeFields } from '../components/OrderTypeFields';
import { ErrorNotice, Loading } from '../components/States';
import { placementText } from '../lib/placement';
import { hourLabel, wholeHours } from '../lib/hours';
import { useLoad } from '../lib/load';
import { formatMoney } from '../lib/money';
import { asProblem, fieldError, unclaimed, type Problem } from '../lib/problem';
import { heldText, ruleText, summarize } from '../lib/quote';
import { useAction } from '../lib/action';
import { effective, EMPTY_ORDER_TYPE, orderFields, quoteFields, unitsFitText, type OrderTypeForm } from '../lib/orderType';

type Mode = Schemas['Mode'];
const MODES: { value: Mode; label: string }[] = [
  { value: 'on_demand', label: 'On-demand' },
  { value: 'reserved', label: 'Reserved' },
  { value: 'spot', label: 'Spot' },
  { value: 'pooled', label: 'Pooled' },
];
const FIELDS = ['mode', 'region', 'resources.gpu_model', 'resources.tflops', 'resources.vram_gb', 'resources.gpus', 'duration_s', 'start_at', 'max_price', 'max_wait_s', 'command', 'image', 'registry_auth', 'registry_auth.username', 'registry_auth.password', 'checkpoint', 'checkpoint.every_s', 'on_interrupt', 'tags', ...ORDER_TYPE_FIELDS];

function parseTags(text: string): Record<string, string> | null {
  const pairs = text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => p.split('=').map((x) => x.trim()));
  if (pairs.length === 0) return null;
  return Object.fromEntries(pairs.map(([k, v]) => [k, v ?? '']));
}

export function Buy() {
  const [, navigate] = useLocation();
  const regions = useLoad(() => api.GET('/v1/regions'), []);
  const catalog = useLoad(() => api.GET('/v1/catalog/gpus'), []);
  const hours = useMemo(() => wholeHours(Date.now(), Date.now() + 14 * 86400_000, 3600_000), []);

  const [mode, setMode] = useState<Mode>('on_demand');
  const [region, setRegion] = useState<string | null>('any');
  const [gpuModel, setGpuModel] = useState<string | null>(null);
  const [tflops, setTflops] = useState<string | number>(100);
  const [vram, setVram] = useState<string | number>(16);
  const [gpus, setGpus] = useState<string | number>(1);
  const [hoursLong, setHoursLong] = useState<string | number>('');
  const [startAt, setStartAt] = useState<string | null>(hours[0] ?? null);
  const [maxPrice, setMaxPrice] = useState('');
  const [maxWait, setMaxWait] = useState<string | number>(300);
  const [orderType, setOrderType] = useState<OrderTypeForm>(EMPTY_ORDER_TYPE);
  const [command, setCommand] = useState('');
  const [image, setImage] = useState('');
  const [registryUser, setRegistryUser] = useState('');
  const [registryPassword, setRegistryPassword] = useState('');
  const [checkpointEvery, setCheckpointEvery] = useState<string | number>('');
  const [resume, setResume] = useState(false);
  const [tags, setTags] = useState('');
  const { busy, problem, run } = useAction();

  const durationS = hoursLong === '' ? (mode === 'reserved' ? 3600 : null) : Math.round(Number(hoursLong) * 3600);
  const resources = {
    tflops: Number(tflops) || 0,
    vram_gb: Number(vram) || 0,
    ...(Number(gpus) > 1 ? { gpus: Number(gpus) } : {}),
    ...(gpuModel ? { gpu_model: gpuModel } : {}),
  };
  const quoteBody = {
    mode,
    region: region ?? 'any',
    resources,
    ...(durationS ? { duration_s: durationS } : {}),
    ...(mode === 'reserved' && startAt ? { start_at: startAt } : {}),
    ...(mode === 'spot' && maxPrice.trim() ? { max_price: maxPrice.trim() } : {}),
    ...quoteFields(mode, orderType),
  };
  const [debounced] = useDebouncedValue(JSON.stringify(quoteBody), 250);
  const [quote, setQuote] = useState<Schemas['Quote'] | null>(null);
  const [quoteProblem, setQuoteProblem] = useState<Problem | null>(null);
  const [quoting, setQuoting] = useState(false);

  useEffect(() => {
    let current = true;
    setQuoting(true);
    api
      .POST('/v1/quotes', { body: JSON.parse(debounced) })
      .then(({ data, error }) => {
        if (!current) return;
        setQuote(data ?? null);
        setQuoteProblem(error ? asProblem(error) : null);
      })
      .catch((e) => current && setQuoteProblem(asProblem(e)))
      .finally(() => current && setQuoting(false));
    return () => {
      current = false;
    };
  }, [debounced]);

  const summary = quote && catalog.data ? summarize(quote, catalog.data) : null;
  const shown = problem ?? quoteProblem;

  async function submit(e: FormEvent) {
    e.preventDefault();
    const body = {
      ...quoteBody,
      // A time in force, else a pooled order's own max wait: never both.
      ...orderFields(mode, orderType, mode === 'pooled' ? Number(maxWait) || 0 : null),
      ...(command.trim() ? { command } : {}),
      ...(image.trim() ? { image: image.trim() } : {}),
      // Sent once: the server keeps it sealed and never shows it again.
      ...(image.trim() && registryUser.trim() ? { registry_auth: { username: registryUser.trim(), password: registryPassword } } : {}),
      ...(checkpointEvery !== '' ? { checkpoint: { every_s: Number(checkpointEvery) } } : {}),
      ...(resume ? { on_interrupt: 'resume' } : {}),
      ...(parseTags(tags) ? { tags: parseTags(tags) } : {}),
    };
    const r = await run(() =>
      api.POST('/v1/orders', {
        body: body as Schemas['OrderRequest'],
        headers: { 'Idempotency-Key': crypto.randomUUID() },
      }),
    );
    // An order of several units goes to its first lease, whose page lists the others.
    const lease = r?.data?.lease_ids?.[0] ?? r?.data?.lease_id;
    if (r) navigate(lease ? `/leases/${lease}` : '/leases');
  }

  if (regions.loading || catalog.loading) return <Loading />;
  const regionOptions = [{ value: 'any', label: 'Any region (cheapest)' }, ...(regions.data ?? []).map((r) => ({ value: r.name, label: r.name }))];
  const modelOptions = (catalog.data ?? []).map((m) => ({ value: m.name, label: m.name }));

  return (
    <>
      <Title order={1} size="h2" mb="md">
        Buy capacity
      </Title>
      <ErrorNotice problem={regions.error ?? catalog.error} />
      <Grid>
        <Grid.Col span={{ base: 12, md: 7 }}>
          <Card withBorder component="form" onSubmit={submit} noValidate aria-label="Order">
            <Stack>
              <SegmentedControl aria-label="Mode" value={mode} onChange={(v) => setMode(v as Mode)} data={MODES} />
              <Group grow align="flex-start">
                <Select label="Region" data={regionOptions} value={region} onChange={setRegion} error={fieldError(shown, 'region')} />
                <Select
                  label="GPU model"
                  placeholder="Any model"
                  clearable
                  data={modelOptions}
                  value={gpuModel}
                  onChange={setGpuModel}
                  error={fieldError(shown, 'resources.gpu_model')}
                />
              </Group>
              <Group grow align="flex-start">
                <NumberInput label="TFLOPS" min={1} value={tflops} onChange={setTflops} error={fieldError(shown, 'resources.tflops')} />
                <NumberInput
                  label="GPU memory (GB)"
                  description="A multiple of 4"
                  min={4}
                  step={4}
                  value={vram}
                  onChange={setVram}
                  error={fieldError(shown, 'resources.vram_gb')}
                />
                <NumberInput label="GPUs" min={1} max={8} value={gpus} onChange={setGpus} error={fieldError(shown, 'resources.gpus')} />
              </Group>
              <Group grow align="flex-start">
                {mode === 'reserved' && (
                  <Select
                    label="Starts"
                    data={hours.map((h) => ({ value: h, label: hourLabel(h) }))}
                    value={startAt}
                    onChange={setStartAt}
                    error={fieldError(shown, 'start_at')}
                  />
                )}
                <NumberInput
                  label="Hours"
                  description={mode === 'reserved' ? 'Default 1' : 'Empty: until released'}
                  min={0.0167}
                  value={hoursLong}
                  onChange={setHoursLong}
                  error={fieldError(shown, 'duration_s')}
                />
                {mode === 'spot' && (
                  <TextInput
                    label="Max price per hour"
                    description="Your bid for the whole order"
                    inputMode="decimal"
                    value={maxPrice}
                    onChange={(e) => setMaxPrice(e.currentTarget.value)}
                    error={fieldError(shown, 'max_price')}
                  />
                )}
                {mode === 'pooled' && !effective(mode, orderType).tif && (
                  <NumberInput label="Wait up to (s)" min={0} value={maxWait} onChange={setMaxWait} error={fieldError(shown, 'max_wait_s')} />
                )}
              </Group>
              <OrderTypeFields mode={mode} value={orderType} onChange={setOrderType} problem={shown} />
              <Textarea
                label="Command"
                description="A shell command the agent runs on the slice"
                autosize
                minRows={2}
                value={command}
                onChange={(e) => setCommand(e.currentTarget.value)}
                error={fieldError(shown, 'command')}
              />
              <TextInput
                label="Image"
                description="The OCI image a container node runs the command in (none: the provider's default)"
                placeholder="nvcr.io/nvidia/pytorch:24.01-py3"
                value={image}
                onChange={(e) => setImage(e.currentTarget.value)}
                error={fieldError(shown, 'image')}
              />
              {image.trim() && (
                <Group grow align="flex-start">
                  <TextInput
                    label="Registry user"
                    description="For a private image; kept sealed, never shown again"
                    autoComplete="off"
                    value={registryUser}
                    onChange={(e) => setRegistryUser(e.currentTarget.value)}
                    error={fieldError(shown, 'registry_auth.username') ?? fieldError(shown, 'registry_auth')}
                  />
                  <PasswordInput
                    label="Registry password"
                    description="Or an access token"
                    autoComplete="new-password"
                    value={registryPassword}
                    onChange={(e) => setRegistryPassword(e.currentTarget.value)}
                    error={fieldError(shown, 'registry_auth.password')}
                  />
                </Group>
              )}
              <Group align="flex-end">
                <NumberInput
                  label="Checkpoint every (s)"
                  description="Send $GPUEX_CHECKPOINT this often and when the lease ends"
                  min={1}
                  max={86400}
                  value={checkpointEvery}
                  onChange={setCheckpointEvery}
                  error={fieldError(shown, 'checkpoint.every_s') ?? fieldError(shown, 'checkpoint')}
                />
                <Checkbox
                  label="Resume from the last checkpoint if interrupted"
                  checked={resume}
                  onChange={(e) => setResume(e.currentTarget.checked)}
                  error={fieldError(shown, 'on_interrupt')}
                  mb={8}
                />
              </Group>
              <TextInput
                label="Tags"
                description="key=value, comma-separated (for billing and budgets)"
                value={tags}
                onChange={(e) => setTags(e.currentTarget.value)}
                error={fieldError(shown, 'tags')}
              />
              {problem && (
                <Alert color="red" title="Order refused" role="alert" data-testid="order-error">
                  {problem.detail}
                  {unclaimed(problem, FIELDS).map((e) => (
                    <div key={e.field}>
                      {e.field}: {e.message}
                    </div>
                  ))}
                </Alert>
              )}
              <Button type="submit" loading={busy}>
                Place order
              </Button>
            </Stack>
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 5 }}>
          <Card withBorder aria-live="polite" data-testid="quote">
            <Group justify="space-between" mb="xs">
              <Title order={2} size="h4">
                Quote
              </Title>
              {quoting && <Text size="xs" c="dimmed">updating…</Text>}
            </Group>
            {quoteProblem && !quote && <Text c="red.9">{quoteProblem.detail}</Text>}
            {quote && !summary && <Text c="dimmed">No model in any region can serve this request.</Text>}
            {quote && summary && (
              <Stack gap="xs">
                <Text size="xl" fw={700} data-testid="quote-price">
                  {formatMoney(summary.pricePerHour, quote.currency)} / hour{quote.units && quote.units.count > 1 ? ' per unit' : ''}
                </Text>
                <Text>
                  {summary.gpuModel} in {summary.region}
                  {summary.source === 'resale' && (
                    <Badge ml="xs" color="grape" variant="filled">
                      resale
                    </Badge>
                  )}
                </Text>
                {quote.units && (
                  <Text size="sm" fw={500} data-testid="quote-count">
                    {unitsFitText(quote.units, quote.currency)}
                  </Text>
                )}
                {quote.slice ? (
                  <Text size="sm" data-testid="quote-slice">
                    Slice: {placementText(quote.slice.placement)}
                  </Text>
                ) : (
                  <Text size="sm" c="dimmed">
                    No slice is free now{quote.slice_unavailable ? ` (${quote.slice_unavailable})` : ''}; the price is the list estimate.
                  </Text>
                )}
                {summary.maxPriceBinds && (
                  <Text size="sm" c="red.9" data-testid="quote-max-price">
                    Your max price is below this price: the order would be refused, or wait within its max wait.
                  </Text>
                )}
                {summary.held && (
                  <Text size="sm" data-testid="quote-units">
                    {heldText(summary)}
                  </Text>
                )}
                {summary.resale && (
                  <Text size="sm" data-testid="quote-resale">
                    A resale listing is cheaper: primary {formatMoney(summary.resale.primary)}/h, you save {formatMoney(summary.resale.saving)}/h.
                  </Text>
                )}
                {summary.wholeNodeSaving && summary.wholeNodePerHour && (
                  <Text size="sm" data-testid="quote-saving">
                    A whole 8-GPU node costs {formatMoney(summary.wholeNodePerHour)}/h: you save {formatMoney(summary.wholeNodeSaving.amount)}/h (
                    {summary.wholeNodeSaving.percent} %).
                  </Text>
                )}
                {quote.slice && (
                  <Text size="sm">Held from your wallet: {formatMoney(quote.slice.hold, quote.currency)}</Text>
                )}
                <Text size="xs" c="dimmed">
                  {ruleText(quote.rule)}
                </Text>
              </Stack>
            )}
          </Card>
        </Grid.Col>
      </Grid>
    </>
  );
}
