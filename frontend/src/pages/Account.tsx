import { Alert, Button, Card, Code, Group, SimpleGrid, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useState, type FormEvent } from 'react';
import { api, type Schemas } from '../api/client';
import { ErrorNotice, Loadable } from '../components/States';
import { formatTime } from '../lib/format';
import { useLoad } from '../lib/load';
import { formatMoney } from '../lib/money';
import { asProblem, fieldError, type Problem } from '../lib/problem';

export function Account() {
  const wallet = useLoad(() => api.GET('/v1/wallet'), []);
  const ledger = useLoad(() => api.GET('/v1/ledger', { params: { query: { limit: 50 } } }), []);
  return (
    <Stack>
      <Title order={1} size="h2">
        Account
      </Title>
      <Loadable loaded={wallet}>
        {(w) => (
          <SimpleGrid cols={{ base: 1, sm: 3 }}>
            {(
              [
                ['Balance', w.balance],
                ['Held', w.held],
                ['Available', w.available],
              ] as const
            ).map(([label, value]) => (
              <Card withBorder key={label}>
                <Text size="sm" c="dimmed">
                  {label}
                </Text>
                <Text size="xl" fw={700} data-testid={`wallet-${label.toLowerCase()}`}>
                  {formatMoney(value, w.currency)}
                </Text>
              </Card>
            ))}
          </SimpleGrid>
        )}
      </Loadable>
      <ApiKeys />
      <Card withBorder>
        <Title order={2} size="h4" mb="xs">
          Ledger (latest 50 lines)
        </Title>
        <Loadable loaded={ledger} isEmpty={(p) => p.items.length === 0} empty="No money has moved yet.">
          {(p) => (
            <Table striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>When</Table.Th>
                  <Table.Th>Kind</Table.Th>
                  <Table.Th>Account</Table.Th>
                  <Table.Th>Amount</Table.Th>
                  <Table.Th>Balance after</Table.Th>
                  <Table.Th>Memo</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {p.items.map((l) => (
                  <Table.Tr key={l.id}>
                    <Table.Td>{formatTime(l.created_at)}</Table.Td>
                    <Table.Td>{l.kind}</Table.Td>
                    <Table.Td>{l.account}</Table.Td>
                    <Table.Td>{formatMoney(l.amount)}</Table.Td>
                    <Table.Td>{formatMoney(l.balance_after)}</Table.Td>
                    <Table.Td>{l.memo}</Table.Td>
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

function ApiKeys() {
  const keys = useLoad(() => api.GET('/v1/api-keys'), []);
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [created, setCreated] = useState<Schemas['ApiKeyCreated'] | null>(null);
  const [busy, setBusy] = useState(false);
  async function create(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    setProblem(null);
    const { data, error } = await api.POST('/v1/api-keys', { body: { name } });
    setBusy(false);
    if (error || !data) setProblem(asProblem(error));
    else {
      setCreated(data);
      setName('');
      keys.reload();
    }
  }
  async function remove(id: string) {
    setProblem(null);
    const { error } = await api.DELETE('/v1/api-keys/{id}', { params: { path: { id } } });
    if (error) setProblem(asProblem(error));
    keys.reload();
  }
  return (
    <Card withBorder>
      <Title order={2} size="h4" mb="xs">
        API keys
      </Title>
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
          <Table mb="md">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Name</Table.Th>
                <Table.Th>Prefix</Table.Th>
                <Table.Th>Created</Table.Th>
                <Table.Th>Revoke</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {list.map((k) => (
                <Table.Tr key={k.id}>
                  <Table.Td>{k.name}</Table.Td>
                  <Table.Td>
                    <Code>{k.prefix}</Code>
                  </Table.Td>
                  <Table.Td>{formatTime(k.created_at)}</Table.Td>
                  <Table.Td>
                    <Button size="xs" color="red" variant="outline" onClick={() => remove(k.id)} aria-label={`Revoke ${k.name}`}>
                      Revoke
                    </Button>
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Loadable>
      <form onSubmit={create} aria-label="New API key">
        <Group align="flex-start">
          <TextInput label="Key name" value={name} onChange={(e) => setName(e.currentTarget.value)} error={fieldError(problem, 'name')} />
          <Button type="submit" mt={24} loading={busy}>
            Create key
          </Button>
        </Group>
        {problem && !problem.errors?.length && <ErrorNotice problem={problem} title="Refused" />}
      </form>
    </Card>
  );
}
