import { Alert, Center, Loader, Stack, Text } from '@mantine/core';
import type { ReactNode } from 'react';
import { unclaimed, type Problem } from '../lib/problem';

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <Center py="xl" role="status" aria-live="polite">
      <Stack align="center" gap="xs">
        <Loader size="sm" aria-hidden />
        <Text size="sm" c="dimmed">
          {label}
        </Text>
      </Stack>
    </Center>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return (
    <Text c="dimmed" py="md" data-testid="empty">
      {children}
    </Text>
  );
}

export function ErrorNotice({ problem, title = 'Could not load', mt }: { problem: Problem | null; title?: string; mt?: string }) {
  if (!problem) return null;
  return (
    <Alert color="red" title={title} role="alert" mt={mt}>
      {problem.detail ?? problem.title ?? 'Something went wrong.'}
      {problem.errors && problem.errors.length > 0 && (
        <ul>
          {problem.errors.map((e) => (
            <li key={e.field}>
              {e.field}: {e.message}
            </li>
          ))}
        </ul>
      )}
    </Alert>
  );
}

/**
 * A refused form's problem, when no input claims it: a problem whose
 * `errors[]` name fields shows them under those inputs instead. With
 * `fields` (the form's inputs, as `fieldError` matches them), errors naming
 * none of them are listed here so none is lost.
 */
export function FormProblem({ problem, title = 'Refused', fields }: { problem: Problem | null; title?: string; fields?: string[] }) {
  if (!problem) return null;
  if (!problem.errors?.length) return <ErrorNotice problem={problem} title={title} mt="xs" />;
  const rest = fields ? unclaimed(problem, fields) : [];
  if (rest.length === 0) return null;
  return <ErrorNotice problem={{ ...problem, errors: rest }} title={title} mt="xs" />;
}

/** The usual three states around a loaded value. */
export function Loadable<T>({
  loaded,
  empty,
  isEmpty,
  children,
}: {
  loaded: { data: T | undefined; error: Problem | null; loading: boolean };
  empty?: ReactNode;
  isEmpty?: (data: T) => boolean;
  children: (data: T) => ReactNode;
}) {
  if (loaded.loading && loaded.data === undefined) return <Loading />;
  if (loaded.error && loaded.data === undefined) return <ErrorNotice problem={loaded.error} />;
  if (loaded.data === undefined) return <Loading />;
  if (isEmpty && isEmpty(loaded.data)) return <Empty>{empty ?? 'Nothing here yet.'}</Empty>;
  return (
    <>
      {loaded.error && <ErrorNotice problem={loaded.error} title="Could not refresh" />}
      {children(loaded.data)}
    </>
  );
}
