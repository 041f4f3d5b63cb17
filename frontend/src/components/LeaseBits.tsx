import { Badge } from '@mantine/core';
import { useEffect, useState } from 'react';
import { countdown } from '../lib/format';

const STATE_COLORS: Record<string, string> = {
  pending: 'gray',
  provisioning: 'violet',
  running: 'green',
  preempting: 'red',
  ended: 'dark',
  failed: 'red',
};

export function StateBadge({ state }: { state: string }) {
  return (
    <Badge color={STATE_COLORS[state] ?? 'gray'} variant="filled" data-testid="lease-state">
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
