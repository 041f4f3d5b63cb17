import { Badge } from '@mantine/core';
import { useEffect, useState } from 'react';
import { countdown } from '../lib/format';

const STATE_COLORS: Record<string, string> = {
  // Dark enough for white text at WCAG AA.
  pending: '#495057',
  provisioning: '#5f3dc4',
  running: '#1b5e20',
  preempting: '#c92a2a',
  ended: '#343a40',
  failed: '#a61e1e',
};

export function StateBadge({ state }: { state: string }) {
  return (
    <Badge color={STATE_COLORS[state] ?? '#495057'} variant="filled" data-testid="lease-state">
      {state}
    </Badge>
  );
}

/** Re-renders every second while mounted. */
export function useNow(): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, []);
  return now;
}

export function Countdown({ to, label }: { to: string; label: string }) {
  const now = useNow();
  return (
    <span data-testid="countdown" aria-live="off">
      {label} {countdown(to, now)}
    </span>
  );
}
