import { Button, Group, Select, Stack, Switch, Text, TextInput, Title } from '@mantine/core';
import { useReducer, useState, type FormEvent } from 'react';
import { api, type Schemas } from '../api/client';
import { DataTable } from '../components/DataTable';
import { ModelSelect, PRICE_COLUMNS, priceKey, RegionSelect } from '../components/Pickers';
import { Section } from '../components/Section';
import { ErrorNotice, FormProblem, Loadable } from '../components/States';
import { useAction } from '../lib/action';
import { ACTION_LABELS, auditDetails, auditTarget } from '../lib/audit';
import { formatTime, UNIT_LABELS } from '../lib/format';
import { useLoad } from '../lib/load';
import { formatMoney } from '../lib/money';
import { fieldError } from '../lib/problem';

export function Admin() {
  // Each change below is an audit entry: the log reads itself again after one.
  const [changes, changed] = useReducer((n: number) => n + 1, 0);
  return (
    <Stack>
      <Title order={1} size="h2">
        Admin
      </Title>
      <Prices onChange={changed} />
      <Regions onChange={changed} />
      <Credits onChange={changed} />
      <Roles onChange={changed} />
      <Nodes onChange={changed} />
      <Replicas />
      <AuditLog changes={changes} />
    </Stack>
  );
}

function Prices({ onChange }: { onChange: () => void }) {
  const prices = useLoad(() => api.GET('/v1/prices'), []);
  const [region, setRegion] = useState<string | null>(null);
  const [model, setModel] = useState<string | null>(null);
  const [unit, setUnit] = useState<string | null>('tflops_h');
  const [price, setPrice] = useState('');
  const { busy, problem, run } = useAction();
  async function submit(e: FormEvent) {
    e.preventDefault();
    const done = await run(() =>
      api.PUT('/v1/admin/prices', {
        body: [{ region: region ?? '', gpu_model: model ?? '', unit: unit as Schemas['Unit'], list_price: price.trim() }],
      }),
    );
    if (done) {
      setPrice('');
      prices.reload();
      onChange();
    }
  }
  return (
    <Section title="List prices">
      <form onSubmit={submit} aria-label="Set a list price">
        <Group align="flex-start" mb="md">
          <RegionSelect value={region} onChange={setRegion} error={fieldError(problem, 'region')} />
          <ModelSelect value={model} onChange={setModel} error={fieldError(problem, 'gpu_model')} />
          <Select
            label="Unit"
            data={Object.entries(UNIT_LABELS).map(([value, label]) => ({ value, label }))}
            value={unit}
            onChange={setUnit}
            error={fieldError(problem, 'unit')}
          />
          <TextInput label="List price" inputMode="decimal" value={price} onChange={(e) => setPrice(e.currentTarget.value)} error={fieldError(problem, 'list_price')} />
          <Button type="submit" mt={24} loading={busy}>
            Set price
          </Button>
        </Group>
        <FormProblem problem={problem} />
      </form>
      <Loadable loaded={prices} isEmpty={(d) => d.length === 0} empty="No list prices yet: set the first above.">
        {(list) => (
          <DataTable
            striped
            data-testid="admin-prices"
            rows={list}
            rowKey={priceKey}
            columns={[
              ...PRICE_COLUMNS,
              { header: 'Updated', cell: (p) => formatTime(p.updated_at) },
            ]}
          />
        )}
      </Loadable>
    </Section>
  );
}

function Regions({ onChange }: { onChange: () => void }) {
  const regions = useLoad(() => api.GET('/v1/regions'), []);
  const [name, setName] = useState('');
  const [timezone, setTimezone] = useState('');
  const { busy, problem, run } = useAction();
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (await run(() => api.PUT('/v1/admin/regions/{name}', { params: { path: { name } }, body: { timezone } }))) {
      regions.reload();
      onChange();
    }
  }
  return (
    <Section title="Regions">
      <Loadable loaded={regions} isEmpty={(d) => d.length === 0} empty="No regions yet.">
        {(list) => (
          <DataTable
            mb="md"
            rows={list}
            rowKey={(r) => r.name}
            columns={[
              { header: 'Region', cell: (r) => r.name },
              { header: 'Time zone', cell: (r) => r.timezone },
              { header: 'Updated', cell: (r) => formatTime(r.updated_at) },
            ]}
          />
        )}
      </Loadable>
      <form onSubmit={submit} aria-label="Add or change a region">
        <Group align="flex-start">
          <TextInput label="Region" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(problem, 'name')} />
          <TextInput
            label="IANA time zone"
            placeholder="Europe/Amsterdam"
            value={timezone}
            onChange={(e) => setTimezone(e.currentTarget.value)}
            error={fieldError(problem, 'timezone')}
          />
          <Button type="submit" mt={24} loading={busy}>
            Save region
          </Button>
        </Group>
        <FormProblem problem={problem} />
      </form>
    </Section>
  );
}

function Credits({ onChange }: { onChange: () => void }) {
  const [userId, setUserId] = useState('');
  const [amount, setAmount] = useState('');
  const [memo, setMemo] = useState('');
  const [done, setDone] = useState<Schemas['CreditView'] | null>(null);
  const { busy, problem, run } = useAction();
  // One key per intended credit: a retried click cannot credit twice.
  const [key, setKey] = useState(() => crypto.randomUUID());
  async function submit(e: FormEvent) {
    e.preventDefault();
    setDone(null);
    const r = await run(() =>
      api.POST('/v1/admin/credits', {
        body: { user_id: userId.trim(), amount: amount.trim(), ...(memo.trim() ? { memo } : {}) },
        headers: { 'Idempotency-Key': key },
      }),
    );
    if (r?.data) {
      setDone(r.data);
      setKey(crypto.randomUUID());
      onChange();
    }
  }
  return (
    <Section title="Credits">
      <form onSubmit={submit} aria-label="Credit a user">
        <Group align="flex-start">
          <TextInput label="User id" w={340} value={userId} onChange={(e) => setUserId(e.currentTarget.value)} error={fieldError(problem, 'user_id')} />
          <TextInput label="Amount" inputMode="decimal" value={amount} onChange={(e) => setAmount(e.currentTarget.value)} error={fieldError(problem, 'amount')} />
          <TextInput label="Memo" value={memo} onChange={(e) => setMemo(e.currentTarget.value)} error={fieldError(problem, 'memo')} />
          <Button type="submit" mt={24} loading={busy}>
            Credit
          </Button>
        </Group>
        <FormProblem problem={problem} />
        {done && (
          <Text mt="xs" data-testid="credit-done">
            Credited {formatMoney(done.amount, done.currency)}; available now {formatMoney(done.available, done.currency)}.
          </Text>
        )}
      </form>
    </Section>
  );
}

const ROLES: { value: Schemas['AccountRole']; label: string }[] = [
  { value: 'buyer', label: 'Buyer' },
  { value: 'provider', label: 'Provider' },
  { value: 'admin', label: 'Admin' },
];

/** An account's role: its sessions and keys end; made a buyer, its node tokens too. */
function Roles({ onChange }: { onChange: () => void }) {
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<string | null>('buyer');
  const [done, setDone] = useState<Schemas['UserView'] | null>(null);
  const { busy, problem, run } = useAction();
  async function submit(e: FormEvent) {
    e.preventDefault();
    setDone(null);
    const r = await run(() =>
      api.PUT('/v1/admin/users/{id}/role', {
        params: { path: { id: userId.trim() } },
        body: { role: (role ?? '') as Schemas['AccountRole'] },
      }),
    );
    if (r?.data) {
      setDone(r.data);
      onChange();
    }
  }
  return (
    <Section title="Roles">
      <form onSubmit={submit} aria-label="Change a role">
        <Group align="flex-start">
          <TextInput label="Account id" w={340} value={userId} onChange={(e) => setUserId(e.currentTarget.value)} error={problem?.code === 'not_found' ? problem.detail : undefined} />
          <Select label="Role" data={ROLES} value={role} onChange={setRole} allowDeselect={false} error={fieldError(problem, 'role')} />
          <Button type="submit" mt={24} loading={busy}>
            Change role
          </Button>
        </Group>
        <Text size="sm" c="dimmed" mt="xs">
          The account&apos;s sessions and API keys stop working; an account made a buyer also loses its node tokens, and its nodes&apos; leases end as on node loss.
        </Text>
        <FormProblem problem={problem} />
        {done && (
          <Text mt="xs" data-testid="role-done">
            {done.email} is now {done.role}.
          </Text>
        )}
      </form>
    </Section>
  );
}

/**
 * Every node: an admin marks the ones whose agents may run the simulated
 * backend (demo, tests, load tests) and ends reviews (a re-inventory that
 * changed a node's models or GPU count cordons it until then).
 */
function Nodes({ onChange }: { onChange: () => void }) {
  const nodes = useLoad(() => api.GET('/v1/nodes'), []);
  const { problem, run } = useAction();
  async function put(id: string, body: Schemas['AdminNodeRequest']) {
    if (await run(() => api.PUT('/v1/admin/nodes/{id}', { params: { path: { id } }, body }))) {
      nodes.reload();
      onChange();
    }
  }
  return (
    <Section title="Nodes">
      <FormProblem problem={problem} />
      <Loadable loaded={nodes} isEmpty={(d) => d.length === 0} empty="No nodes yet.">
        {(list) => (
          <DataTable
            data-testid="admin-nodes"
            rows={list}
            rowKey={(n) => n.id}
            columns={[
              { header: 'Node', cell: (n) => n.name },
              { header: 'Region', cell: (n) => n.region },
              { header: 'Status', cell: (n) => n.status },
              {
                header: 'Simulated',
                cell: (n) => (
                  <Switch
                    aria-label={`Simulated ${n.name}`}
                    checked={n.simulated}
                    onChange={(e) => void put(n.id, { simulated: e.currentTarget.checked })}
                  />
                ),
              },
              {
                header: 'Review',
                cell: (n) =>
                  n.under_review ? (
                    <Group gap="xs" wrap="nowrap">
                      <Text size="sm">{n.review_reason}</Text>
                      <Button size="xs" aria-label={`Accept review of ${n.name}`} onClick={() => void put(n.id, { review: 'accept' })}>
                        Accept
                      </Button>
                    </Group>
                  ) : (
                    '—'
                  ),
              },
            ]}
          />
        )}
      </Loadable>
    </Section>
  );
}

/** The replicas serving the market: which leads, how far each has applied the journal. */
function Replicas() {
  const replicas = useLoad(() => api.GET('/v1/admin/replicas'), []);
  return (
    <Section title="Replicas">
      <Group mb="sm">
        <Button size="xs" variant="default" onClick={() => replicas.reload()}>
          Refresh
        </Button>
      </Group>
      <Loadable loaded={replicas} isEmpty={(d) => d.length === 0} empty="No replica has reported yet.">
        {(list) => (
          <DataTable
            data-testid="admin-replicas"
            rows={list}
            rowKey={(r) => r.id}
            columns={[
              { header: 'Address', cell: (r) => (r.answering ? `${r.url} (this one)` : r.url) },
              { header: 'Role', cell: (r) => r.role },
              { header: 'Epoch', cell: (r) => r.epoch },
              { header: 'Journal row', cell: (r) => r.applied_seq },
              { header: 'Lag', cell: (r) => `${r.lag_ms} ms` },
              { header: 'Last seen', cell: (r) => (r.silent ? `${formatTime(r.seen_at)} (silent)` : formatTime(r.seen_at)) },
            ]}
          />
        )}
      </Loadable>
    </Section>
  );
}

type AuditEntry = Schemas['AuditEntry'];
type AuditAction = Schemas['Action'];
const AUDIT_PAGE = 20;

/** The audit log, newest first: the first page follows the filter, "Older" appends the next. */
function AuditLog({ changes }: { changes: number }) {
  const [action, setAction] = useState<string | null>(null);
  const query = (cursor?: number) => ({
    limit: AUDIT_PAGE,
    ...(action ? { action: action as AuditAction } : {}),
    ...(cursor !== undefined ? { cursor } : {}),
  });
  const first = useLoad(() => api.GET('/v1/admin/audit', { params: { query: query() } }), [action, changes]);
  // Older pages belong to the first page they follow: a new first page
  // (filter changed, something was recorded) starts the list again.
  const [appended, setAppended] = useState<{ after: unknown; items: AuditEntry[]; next: number | null } | null>(null);
  const older = appended && appended.after === first.data ? appended : null;
  const more = useAction();
  const next = older ? older.next : (first.data?.next_cursor ?? null);

  async function loadOlder() {
    if (next === null) return;
    const r = await more.run(() => api.GET('/v1/admin/audit', { params: { query: query(next) } }));
    if (r?.data) setAppended({ after: first.data, items: [...(older?.items ?? []), ...r.data.items], next: r.data.next_cursor ?? null });
  }

  return (
    <Section
      title="Audit log"
      data-testid="audit-log"
      aside={
        <Select
          aria-label="Filter by action"
          placeholder="Every action"
          clearable
          value={action}
          onChange={setAction}
          data={Object.entries(ACTION_LABELS).map(([value, label]) => ({ value, label }))}
        />
      }
    >
      <Loadable
        loaded={first}
        isEmpty={(p) => p.items.length === 0}
        empty={action ? `No “${ACTION_LABELS[action] ?? action}” entries.` : 'No admin actions recorded yet.'}
      >
        {(p) => (
          <>
            <DataTable
              striped
              data-testid="audit-table"
              rows={[...p.items, ...(older?.items ?? [])]}
              rowKey={(a) => a.id}
              columns={[
                { header: 'Time', cell: (a) => formatTime(a.created_at) },
                { header: 'Actor', cell: (a) => a.actor_email ?? a.actor_id ?? '—' },
                { header: 'Action', cell: (a) => ACTION_LABELS[a.action] ?? a.action },
                { header: 'Target', cell: (a) => <span style={{ overflowWrap: 'anywhere' }}>{auditTarget(a.target)}</span> },
                { header: 'Details', cell: (a) => auditDetails(a) },
              ]}
            />
            <ErrorNotice problem={more.problem} title="Could not load older entries" mt="xs" />
            {next !== null && (
              <Group justify="center" mt="sm">
                <Button variant="default" onClick={loadOlder} loading={more.busy}>
                  Older
                </Button>
              </Group>
            )}
          </>
        )}
      </Loadable>
    </Section>
  );
}
