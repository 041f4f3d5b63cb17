import { Button, Table, Text } from '@mantine/core';
import { useEffect, useState } from 'react';
import { api } from '../api/client';
import { fetchWithToken, formatBytes, saveBlob } from '../lib/download';
import { formatTime } from '../lib/format';
import { useLoad } from '../lib/load';
import { asProblem, type Problem } from '../lib/problem';
import { Section } from './Section';
import { ErrorNotice, Loadable } from './States';

/** What the lease's workload left in /outputs, each file downloadable by its owner. */
export function Outputs({ leaseId, live }: { leaseId: string; live: boolean }) {
  const outputs = useLoad(() => api.GET('/v1/leases/{id}/outputs', { params: { path: { id: leaseId } } }), [leaseId]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  // The agent sends outputs as they change and when the lease ends, with no
  // event: poll while it runs, and once more for the last upload.
  useEffect(() => {
    if (!live) {
      const last = setTimeout(outputs.reload, 5000);
      return () => clearTimeout(last);
    }
    const t = setInterval(outputs.reload, 5000);
    return () => clearInterval(t);
  }, [live, outputs.reload]);

  async function download(name: string) {
    setProblem(null);
    setBusy(name);
    try {
      const blob = await fetchWithToken(`/v1/leases/${encodeURIComponent(leaseId)}/outputs/${encodeURIComponent(name)}`);
      saveBlob(blob, name.split('/').pop() ?? name);
    } catch (e) {
      setProblem(asProblem(e));
    } finally {
      setBusy(null);
    }
  }

  return (
    <Section title="Outputs">
      <Loadable loaded={outputs} isEmpty={(d) => d.outputs.length === 0} empty="Nothing in /outputs yet.">
        {(d) => (
          <>
            <Table data-testid="outputs" striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>File</Table.Th>
                  <Table.Th>Size</Table.Th>
                  <Table.Th>SHA-256</Table.Th>
                  <Table.Th>Kept until</Table.Th>
                  <Table.Th />
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {d.outputs.map((o) => (
                  <Table.Tr key={o.name}>
                    <Table.Td>
                      <code>{o.name}</code>
                    </Table.Td>
                    <Table.Td>{formatBytes(o.size)}</Table.Td>
                    <Table.Td>
                      <code title={o.sha256}>{o.sha256.slice(0, 12)}…</code>
                    </Table.Td>
                    <Table.Td>{formatTime(o.expires_at)}</Table.Td>
                    <Table.Td>
                      <Button size="xs" variant="default" onClick={() => download(o.name)} loading={busy === o.name} aria-label={`Download ${o.name}`}>
                        Download
                      </Button>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
            <Text size="xs" c="dimmed">
              {formatBytes(d.total_bytes)} of {formatBytes(d.max_bytes)}; each file is kept {d.retention_days} days after it arrived
              {d.storage_price_per_gb_month === '0' ? ', included in the lease price' : `, at ${d.storage_price_per_gb_month} per GB-month`}.
            </Text>
          </>
        )}
      </Loadable>
      <ErrorNotice problem={problem} title="Download failed" />
    </Section>
  );
}
