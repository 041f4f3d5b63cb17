import { Card, Group, Text, Title, type CardProps } from '@mantine/core';
import type { ReactNode } from 'react';
import type { Loaded } from '../lib/load';
import { Loadable } from './States';

/**
 * A page section: a bordered card under an h2. `aside` sits on the heading's
 * line (a filter, a range switch). Other props (h, data-testid, aria-label)
 * go to the card.
 */
export function Section({
  title,
  aside,
  children,
  ...card
}: { title: ReactNode; aside?: ReactNode; children?: ReactNode } & Omit<CardProps, 'title' | 'children'>) {
  const heading = (
    <Title order={2} size="h4" mb={aside ? undefined : 'xs'}>
      {title}
    </Title>
  );
  return (
    <Card withBorder {...card}>
      {aside ? (
        <Group justify="space-between" mb="xs">
          {heading}
          {aside}
        </Group>
      ) : (
        heading
      )}
      {children}
    </Card>
  );
}

/** One headline figure in a small card. */
export function Figure<T>({ label, loaded, value, testId }: { label: string; loaded: Loaded<T>; value: (data: T) => string; testId?: string }) {
  return (
    <Card withBorder>
      <Text size="sm" c="dimmed">
        {label}
      </Text>
      <Loadable loaded={loaded}>
        {(d) => (
          <Text size="xl" fw={700} data-testid={testId}>
            {value(d)}
          </Text>
        )}
      </Loadable>
    </Card>
  );
}
