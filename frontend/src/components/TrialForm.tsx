import { Alert, Button, Card, Checkbox, Group, NumberInput, Select, SimpleGrid, Stack, Text, TextInput, Textarea } from '@mantine/core';
import { useMemo, useState, type FormEvent } from 'react';
import { api, type Schemas } from '../api/client';
import { useAction } from '../lib/action';
import { useLoad } from '../lib/load';
import {
  DEFAULT_DURATION_S,
  EMPTY_TRIAL_FORM,
  MAX_DURATION_S,
  MAX_SHAPES,
  MIN_DURATION_S,
  shapeOptions,
  trialErrors,
  trialRequest,
  type TrialForm as Form,
} from '../lib/trials';

/** A trial's form: the model, its shapes, the command and how long each shape may run. */
export function TrialForm({ onStarted }: { onStarted: (trial: Schemas['TrialView']) => void }) {
  const catalog = useLoad(() => api.GET('/v1/catalog/gpus'), []);
  const regions = useLoad(() => api.GET('/v1/regions'), []);
  const [form, setForm] = useState<Form>(EMPTY_TRIAL_FORM);
  const { busy, problem, run } = useAction();
  const set = <K extends keyof Form>(key: K) => (value: Form[K]) => setForm((f) => ({ ...f, [key]: value }));

  const model = (catalog.data ?? []).find((m) => m.name === form.gpuModel);
  const options = useMemo(() => shapeOptions(model), [model]);
  // The shapes the server is told of, in the order offered (smallest first), so `shapes[i]` names the right one.
  const errors = trialErrors(problem, form.shapes);

  function chooseModel(name: string | null) {
    // A new model keeps only the shapes it also has.
    const next = shapeOptions((catalog.data ?? []).find((m) => m.name === name)).map((o) => o.value);
    setForm((f) => ({ ...f, gpuModel: name, shapes: f.shapes.filter((s) => next.includes(s)) }));
  }

  function chooseShapes(chosen: string[]) {
    const order = options.map((o) => o.value);
    set('shapes')([...chosen].sort((a, b) => order.indexOf(a) - order.indexOf(b)));
  }

  async function submit(e: FormEvent) {
    e.preventDefault();
    const r = await run(() =>
      api.POST('/v1/trials', { body: trialRequest(form), headers: { 'Idempotency-Key': crypto.randomUUID() } }),
    );
    if (r?.data) onStarted(r.data);
  }

  const regionOptions = [{ value: 'any', label: 'Any region' }, ...(regions.data ?? []).map((r) => ({ value: r.name, label: r.name }))];
  return (
    <Card withBorder component="form" onSubmit={submit} noValidate aria-label="Start a trial">
      <Stack>
        <Group grow align="flex-start">
          <Select
            label="GPU model"
            placeholder="Choose a model"
            searchable
            data={(catalog.data ?? []).map((m) => m.name)}
            value={form.gpuModel}
            onChange={chooseModel}
            error={errors.byInput.gpu_model}
          />
          <Select
            label="Region"
            description="Optional"
            data={regionOptions}
            value={form.region ?? 'any'}
            onChange={set('region')}
            error={errors.byInput.region}
          />
        </Group>
        <Checkbox.Group
          label="Shapes"
          description={
            model
              ? `1 to ${MAX_SHAPES}: each runs the command once, on its own on-demand lease`
              : 'Choose a model to see its MIG profiles, shares and the whole GPU'
          }
          value={form.shapes}
          onChange={chooseShapes}
          error={errors.byInput.shapes}
          data-testid="trial-shapes"
        >
          <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs" mt="xs">
            {options.map((o) => (
              <Checkbox
                key={o.value}
                value={o.value}
                label={o.value}
                description={o.description}
                disabled={!form.shapes.includes(o.value) && form.shapes.length >= MAX_SHAPES}
              />
            ))}
          </SimpleGrid>
        </Checkbox.Group>
        <Textarea
          label="Command"
          description="The shell command run on each shape; a shape passes when it exits 0 by itself within the duration"
          autosize
          minRows={2}
          classNames={{ input: 'mono-input' }}
          value={form.command}
          onChange={(e) => set('command')(e.currentTarget.value)}
          error={errors.byInput.command}
        />
        <Group grow align="flex-start">
          <NumberInput
            label="Duration (s)"
            description={`At most this long per shape, ${MIN_DURATION_S} to ${MAX_DURATION_S} (default ${DEFAULT_DURATION_S})`}
            min={MIN_DURATION_S}
            max={MAX_DURATION_S}
            clampBehavior="none"
            allowDecimal={false}
            value={form.durationS}
            onChange={set('durationS')}
            error={errors.byInput.duration_s}
          />
          <TextInput
            label="Image"
            description="Optional: the OCI image a container node runs it in"
            value={form.image}
            onChange={(e) => set('image')(e.currentTarget.value)}
            error={errors.byInput.image}
          />
        </Group>
        <Textarea
          label="Environment"
          description="Optional: NAME=value, one a line"
          autosize
          minRows={1}
          classNames={{ input: 'mono-input' }}
          value={form.env}
          onChange={(e) => set('env')(e.currentTarget.value)}
          error={errors.byInput.env}
        />
        {problem && (
          <Alert color="red" title="Trial refused" role="alert" data-testid="trial-error">
            {problem.detail ?? problem.title}
            {errors.rest.map((e) => (
              <div key={e.field}>
                {e.field}: {e.message}
              </div>
            ))}
          </Alert>
        )}
        <Group justify="space-between">
          <Text size="sm" c="dimmed">
            Each shape is billed at its on-demand price for the time it runs.
          </Text>
          <Button type="submit" loading={busy}>
            Start trial
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}
