import { Grid, Stack, Text, Title } from '@mantine/core';
import { useEffect } from 'react';
import { useLocation } from 'wouter';
import { api } from '../api/client';
import { Section } from '../components/Section';
import { Loadable } from '../components/States';
import { TrialForm } from '../components/TrialForm';
import { TrialList, TrialResult } from '../components/TrialResult';
import { shortId } from '../lib/format';
import { useLoad } from '../lib/load';
import { isLive } from '../lib/trials';

const POLL_MS = 2000;

/** One trial, read again every 2 s while it runs; `onDone` when it stops running. */
function TrialDetail({ id, onDone }: { id: string; onDone: () => void }) {
  const trial = useLoad(() => api.GET('/v1/trials/{id}', { params: { path: { id } } }), [id]);
  const live = isLive(trial.data);
  useEffect(() => {
    if (!live) return;
    const t = setInterval(trial.reload, POLL_MS);
    return () => {
      clearInterval(t);
      onDone();
    };
  }, [live, trial.reload, onDone]);
  return <Loadable loaded={trial}>{(t) => <TrialResult trial={t} />}</Loadable>;
}

/**
 * Trials: run a command once on several shapes of a GPU (MIG profiles,
 * shares, the whole GPU) to learn the smallest, cheapest one it runs on
 * before buying. `/trials/:id` shows one.
 */
export function Trials({ id }: { id?: string }) {
  const [, navigate] = useLocation();
  const trials = useLoad(() => api.GET('/v1/trials'), []);
  const selected = id ?? null;
  return (
    <>
      <Title order={1} size="h2" mb="xs">
        Trials
      </Title>
      <Text mb="md" maw="60rem">
        Which is the smallest GPU slice your workload runs on? A trial runs your command once on each shape you choose, each for a few minutes on its own
        on-demand lease, and tells you which passed (exited 0 by itself), how much GPU memory it used, and the cheapest that passed.
      </Text>
      <Stack>
        {selected && (
          <Section title={`Trial ${shortId(selected)}`} aria-label="Trial result">
            <TrialDetail key={selected} id={selected} onDone={trials.reload} />
          </Section>
        )}
        <Grid>
          <Grid.Col span={{ base: 12, lg: 5 }}>
            <TrialForm
              onStarted={(t) => {
                trials.reload();
                navigate(`/trials/${t.id}`);
              }}
            />
          </Grid.Col>
          <Grid.Col span={{ base: 12, lg: 7 }}>
            <Section title="Your trials">
              <Loadable loaded={trials} isEmpty={(d) => d.trials.length === 0} empty="No trials yet: start one to see which shapes your command runs on.">
                {(d) => <TrialList trials={d.trials} selected={selected} onSelect={(t) => navigate(`/trials/${t}`)} />}
              </Loadable>
            </Section>
          </Grid.Col>
        </Grid>
      </Stack>
    </>
  );
}
