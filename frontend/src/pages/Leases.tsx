import { Anchor, Button, Group, Select, Table, Title } from '@mantine/core';
import { useState } from 'react';
import { Link } from 'wouter';
import { api } from '../api/client';
import { Countdown, StateBadge } from '../components/LeaseBits';
import { Loadable } from '../components/States';
import { useEvents } from '../lib/events';
import { formatTime, MODE_LABELS, shortId } from '../lib/format';
import { useLoad } from '../lib/load';
import { formatMoney } from '../lib/money';

type LeaseState = 'pending' | 'provisioning' | 'running' | 'preempting' | 'ended' | 'failed';

export function Leases() {
  const [state, setState] = useState<string | null>(null);
  const leases = useLoad(
    () => api.GET('/v1/leases', { params: { query: { limit: 200, ...(state ? { state: state as LeaseState } : {}) } } }),
    [state],
  );
  // Every lease and order event can change the list: read it again.
  useEvents((e) => {
    if (e.type.startsWith('lease.') || e.type.startsWith('order.')) leases.reload();
  });
  return (
    <>
      <Group justify="space-between" mb="md">
        <Title order={1} size="h2">
          Leases
        </Title>
        <Group>
          <Select
            aria-label="Filter by state"
            placeholder="Every state"
            clearable
            value={state}
            onChange={setState}
            data={['pending', 'provisioning', 'running', 'preempting', 'ended', 'failed']}
          />
          <Button component={Link} href="/buy">
            Buy capacity
          </Button>
        </Group>
      </Group>
      <Loadable loaded={leases} isEmpty={(d) => d.items.length === 0} empty="No leases yet: buy capacity to get one.">
        {(page) => (
          <Table striped highlightOnHover data-testid="lease-table">
            <Table.Thead>
              <Table.Tr>
                <Table.Th>Lease</Table.Th>
                <Table.Th>State</Table.Th>
                <Table.Th>Mode</Table.Th>
                <Table.Th>GPU</Table.Th>
                <Table.Th>Region</Table.Th>
                <Table.Th>Per hour</Table.Th>
                <Table.Th>Charged</Table.Th>
                <Table.Th>Starts</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {page.items.map((l) => (
                <Table.Tr key={l.id} data-lease={l.id}>
                  <Table.Td>
                    <Anchor component={Link} href={`/leases/${l.id}`} ff="monospace">
                      {shortId(l.id)}
                    </Anchor>
                  </Table.Td>
                  <Table.Td>
                    <Group gap="xs">
                      <StateBadge state={l.state} />
                      {l.preempt_at && l.state === 'preempting' && <Countdown to={l.preempt_at} label="ends in" />}
                      {l.rebalance_at && l.state === 'running' && !l.preempt_at && <span>rebalance warning</span>}
                    </Group>
                  </Table.Td>
                  <Table.Td>{MODE_LABELS[l.mode] ?? l.mode}</Table.Td>
                  <Table.Td>{l.gpu_model}</Table.Td>
                  <Table.Td>{l.region}</Table.Td>
                  <Table.Td>{formatMoney(l.price_per_hour)}</Table.Td>
                  <Table.Td>{formatMoney(l.usage.charged)}</Table.Td>
                  <Table.Td>{formatTime(l.starts_at)}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        )}
      </Loadable>
    </>
  );
}
