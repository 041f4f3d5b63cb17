import { Alert, Button, Code, Group, SimpleGrid, Stack, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, type Schemas } from '../api/client';
import { DataTable } from '../components/DataTable';
import { Figure, Section } from '../components/Section';
import { FormProblem, Loadable } from '../components/States';
import { useAction } from '../lib/action';
import { formatTime, memoText } from '../lib/format';
import { useLoad } from '../lib/load';
import { formatMoney } from '../lib/money';
import { fieldError } from '../lib/problem';

export function Account() {
  const wallet = useLoad(() => api.GET('/v1/wallet'), []);
  const ledger = useLoad(() => api.GET('/v1/ledger', { params: { query: { limit: 50 } } }), []);
  return (
    <Stack>
      <Title order={1} size="h2">
        Account
      </Title>
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        <Figure label="Balance" loaded={wallet} value={(w) => formatMoney(w.balance, w.currency)} testId="wallet-balance" />
        <Figure label="Held" loaded={wallet} value={(w) => formatMoney(w.held, w.currency)} testId="wallet-held" />
        <Figure label="Available" loaded={wallet} value={(w) => formatMoney(w.available, w.currency)} testId="wallet-available" />
      </SimpleGrid>
      <ApiKeys />
      <Section title="Ledger (latest 50 lines)">
        <Loadable loaded={ledger} isEmpty={(p) => p.items.length === 0} empty="No money has moved yet.">
          {(p) => (
            <DataTable
              striped
              rows={p.items}
              rowKey={(l) => l.id}
              columns={[
                { header: 'When', cell: (l) => formatTime(l.created_at) },
                { header: 'Kind', cell: (l) => l.kind },
                { header: 'Account', cell: (l) => l.account },
                { header: 'Amount', cell: (l) => formatMoney(l.amount) },
                { header: 'Balance after', cell: (l) => formatMoney(l.balance_after) },
                { header: 'Memo', cell: (l) => memoText(l.memo) },
              ]}
            />
          )}
        </Loadable>
      </Section>
    </Stack>
  );
}

function ApiKeys() {
  const keys = useLoad(() => api.GET('/v1/api-keys'), []);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Schemas['ApiKeyCreated'] | null>(null);
  const { busy, problem, run } = useAction();
  const revoking = useAction();
  async function create(e: FormEvent) {
    e.preventDefault();
    const r = await run(() => api.POST('/v1/api-keys', { body: { name } }));
    if (r?.data) {
      setCreated(r.data);
      setName('');
      keys.reload();
    }
  }
  async function remove(id: string) {
    await revoking.run(() => api.DELETE('/v1/api-keys/{id}', { params: { path: { id } } }));
    keys.reload();
  }
  return (
    <Section title="API keys">
      {created && (
        <Alert color="green" title={`Key ${created.name} created`} mb="md" data-testid="api-key-created">
          <Text size="sm" mb="xs">
            It is shown only now; use it as <Code>Authorization: Bearer …</Code>.
          </Text>
          <Code block>{created.key}</Code>
          <Button mt="sm" variant="default" onClick={() => setCreated(null)}>
            Done
          </Button>
        </Alert>
      )}
      <Loadable loaded={keys} isEmpty={(d) => d.length === 0} empty="No API keys.">
        {(list) => (
          <DataTable
            mb="md"
            rows={list}
            rowKey={(k) => k.id}
            columns={[
              { header: 'Name', cell: (k) => k.name },
              { header: 'Prefix', cell: (k) => <Code>{k.prefix}</Code> },
              { header: 'Created', cell: (k) => formatTime(k.created_at) },
              {
                header: 'Revoke',
                cell: (k) => (
                  <Button size="xs" color="red" variant="outline" onClick={() => remove(k.id)} aria-label={`Revoke ${k.name}`}>
                    Revoke
                  </Button>
                ),
              },
            ]}
          />
        )}
      </Loadable>
      <FormProblem problem={revoking.problem} title="Could not revoke" />
      <form onSubmit={create} aria-label="New API key">
        <Group align="flex-start">
          <TextInput label="Key name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(problem, 'name')} />
          <Button type="submit" mt={24} loading={busy}>
            Create key
          </Button>
        </Group>
        <FormProblem problem={problem} />
      </form>
    </Section>
  );
}
