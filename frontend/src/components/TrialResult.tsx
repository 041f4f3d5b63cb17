import { Alert, Anchor, Badge, Button, Code, Group, Loader, Stack, Text } from '@mantine/core';
import { Link } from 'wouter';
import type { Schemas } from '../api/client';
import { formatTime, shortId } from '../lib/format';
import { formatMoney } from '../lib/money';
import { isLive, memoryText, passedText, utilizationText, verdictText } from '../lib/trials';
import { DataTable } from './DataTable';

type Trial = Schemas['TrialView'];
type Run = Schemas['TrialRun'];

// Dark enough for white text at WCAG AA.
const RUN_COLORS: Record<string, string> = {
  pending: '#495057',
  running: '#1864ab',
  passed: '#1b5e20',
  failed: '#a61e1e',
  refused: '#862e9c',
};

export function RunBadge({ state }: { state: string }) {
  return (
    <Badge color={RUN_COLORS[state] ?? '#495057'} variant="filled" data-testid="run-state">
      {state}
    </Badge>
  );
}

/** One trial: its verdict, then each shape's run. */
export function TrialResult({ trial }: { trial: Trial }) {
  const smallest = trial.smallest_passed?.shape;
  return (
    <Stack gap="sm" data-testid="trial-result" data-trial={trial.id} data-state={trial.state}>
      <Group gap="xs">
        <Badge color={isLive(trial) ? '#1864ab' : '#343a40'} variant="filled" data-testid="trial-state">
          {trial.state}
        </Badge>
        <Text size="sm">
          {trial.gpu_model} · {trial.runs.length} shape{trial.runs.length === 1 ? '' : 's'} · up to {trial.duration_s} s each · started{' '}
          {formatTime(trial.created_at)}
        </Text>
      </Group>
      <Text size="sm">
        <Code>{trial.command}</Code>
        {trial.image && <Text span size="sm" c="dimmed"> in {trial.image}</Text>}
      </Text>
      <Alert
        color={trial.smallest_passed ? 'green' : isLive(trial) ? 'blue' : 'red'}
        variant="light"
        title={trial.smallest_passed ? 'The answer' : isLive(trial) ? 'Running' : 'Done'}
        icon={isLive(trial) ? <Loader size="xs" aria-hidden /> : undefined}
        aria-live="polite"
        data-testid="trial-smallest"
      >
        <Text fw={trial.smallest_passed ? 700 : undefined} data-testid="trial-verdict">
          {verdictText(trial)}
        </Text>
        <Text size="sm">
          {passedText(trial)}
          {isLive(trial) ? ' so far; this refreshes every 2 s.' : '.'}
        </Text>
      </Alert>
      <DataTable
        striped
        aria-label="Runs"
        data-testid="trial-runs"
        rows={trial.runs}
        rowKey={(r: Run) => r.shape}
        rowProps={(r: Run) => ({
          'data-shape': r.shape,
          ...(r.shape === smallest ? { 'data-smallest': 'true' } : {}),
        })}
        columns={[
          {
            header: 'Shape',
            cell: (r) => (
              <Group gap={6} wrap="nowrap">
                <Text span ff="monospace" size="sm">
                  {r.shape}
                </Text>
                {r.shape === smallest && (
                  <Badge color="#1b5e20" variant="filled" size="xs">
                    smallest
                  </Badge>
                )}
              </Group>
            ),
          },
          { header: 'State', cell: (r) => <RunBadge state={r.state} /> },
          { header: 'Placed', cell: (r) => r.placed ?? '—' },
          { header: 'Exit code', cell: (r) => (r.exit_code === null || r.exit_code === undefined ? '—' : String(r.exit_code)) },
          { header: 'Peak memory', cell: (r) => memoryText(r.peak_vram_mb) },
          { header: 'Utilization', cell: (r) => utilizationText(r.gpu_util_p50) },
          { header: 'Per hour', cell: (r) => formatMoney(r.price_per_hour) },
          {
            header: 'Lease',
            cell: (r) =>
              r.lease_id ? (
                <Anchor component={Link} href={`/leases/${r.lease_id}`} ff="monospace" aria-label={`Lease ${shortId(r.lease_id)} of ${r.shape}`}>
                  {shortId(r.lease_id)}
                </Anchor>
              ) : (
                '—'
              ),
          },
          { header: 'Reason', cell: (r) => r.reason ?? '—' },
        ]}
      />
    </Stack>
  );
}

/** Your trials, newest first; choosing one shows it. */
export function TrialList({ trials, selected, onSelect }: { trials: Trial[]; selected: string | null; onSelect: (id: string) => void }) {
  return (
    <DataTable
      highlightOnHover
      aria-label="Your trials"
      data-testid="trial-table"
      rows={trials}
      rowKey={(t) => t.id}
      rowProps={(t) => ({ 'data-trial': t.id })}
      columns={[
        { header: 'Started', cell: (t) => formatTime(t.created_at) },
        { header: 'GPU', cell: (t) => t.gpu_model },
        { header: 'Shapes', cell: (t) => t.runs.map((r) => r.shape).join(', ') },
        { header: 'State', cell: (t) => t.state },
        {
          header: 'Smallest passed',
          cell: (t) => (t.smallest_passed ? `${t.smallest_passed.shape} (${formatMoney(t.smallest_passed.price_per_hour)}/h)` : t.state === 'running' ? '…' : 'none'),
        },
        {
          header: 'Show',
          cell: (t) => (
            <Button
              size="xs"
              variant={selected === t.id ? 'filled' : 'default'}
              aria-pressed={selected === t.id}
              aria-label={`Show trial ${shortId(t.id)}`}
              onClick={() => onSelect(t.id)}
            >
              Show
            </Button>
          ),
        },
      ]}
    />
  );
}
