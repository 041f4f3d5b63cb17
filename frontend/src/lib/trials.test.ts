import { describe, expect, it } from 'vitest';
import {
  EMPTY_TRIAL_FORM,
  inputOf,
  isLive,
  memoryText,
  parseEnv,
  passedText,
  shapeOptions,
  trialErrors,
  trialRequest,
  utilizationText,
  verdictText,
} from './trials';

const profile = (name: string, compute_slices: number, memory_gb: number) => ({
  name,
  compute_slices,
  memory_gb,
  memory_slices: 1,
  starts: [0],
  tflops_units: '0',
  vram_units: '0',
});

const H100 = {
  name: 'H100-SXM5-80GB',
  memory_gb: 80,
  mig_capable: true,
  // Out of order on purpose: the options come smallest first.
  mig_profiles: [profile('7g.80gb', 7, 80), profile('1g.20gb', 1, 20), profile('1g.10gb', 1, 10), profile('3g.40gb', 3, 40), profile('2g.20gb', 2, 20), profile('4g.40gb', 4, 40)],
};

describe('trial shapes', () => {
  it('offers a MIG model its profiles smallest first, then shares and the whole GPU', () => {
    expect(shapeOptions(H100).map((o) => o.value)).toEqual([
      'mig-1g.10gb',
      'mig-1g.20gb',
      'mig-2g.20gb',
      'mig-3g.40gb',
      'mig-4g.40gb',
      'mig-7g.80gb',
      'shared-250',
      'shared-500',
      'whole',
    ]);
    expect(shapeOptions(H100)[0].description).toBe('MIG, 1/7 compute, 10 GB');
    expect(shapeOptions(H100)[6].description).toBe('25 % share, 20 GB');
  });

  it('offers a model without MIG its shares and the whole GPU, and no model nothing', () => {
    const l40s = { name: 'L40S-48GB', memory_gb: 48, mig_capable: false, mig_profiles: [] };
    expect(shapeOptions(l40s).map((o) => o.value)).toEqual(['shared-250', 'shared-500', 'whole']);
    expect(shapeOptions(undefined)).toEqual([]);
  });
});

describe('trial request', () => {
  it('sends what the form holds, leaving the defaults to the server', () => {
    expect(trialRequest({ ...EMPTY_TRIAL_FORM, gpuModel: 'H100-SXM5-80GB', shapes: ['mig-1g.10gb'], command: 'true' })).toEqual({
      gpu_model: 'H100-SXM5-80GB',
      shapes: ['mig-1g.10gb'],
      command: 'true',
      duration_s: 300,
    });
    const full = trialRequest({
      gpuModel: 'H100-SXM5-80GB',
      shapes: ['whole'],
      command: 'nvidia-smi',
      durationS: '',
      region: 'eu-west',
      image: ' nvcr.io/x:1 ',
      env: 'A=1\n\nB = two=2\nC',
    });
    expect(full).toEqual({
      gpu_model: 'H100-SXM5-80GB',
      shapes: ['whole'],
      command: 'nvidia-smi',
      region: 'eu-west',
      image: 'nvcr.io/x:1',
      env: { A: '1', B: ' two=2', C: '' },
    });
  });

  it('sends no region for any, and an out-of-range duration for the server to name', () => {
    const body = trialRequest({ ...EMPTY_TRIAL_FORM, region: 'any', durationS: 700 });
    expect(body.region).toBeUndefined();
    expect(body.duration_s).toBe(700);
    expect(body.gpu_model).toBe('');
  });

  it('reads environment lines', () => {
    expect(parseEnv('  \n')).toBeNull();
    expect(parseEnv('X=a=b')).toEqual({ X: 'a=b' });
  });
});

describe('trial field errors', () => {
  it('puts each field under its input', () => {
    expect(inputOf('duration_s')).toBe('duration_s');
    expect(inputOf('body.gpu_model')).toBe('gpu_model');
    expect(inputOf('shapes[2]')).toBe('shapes');
    expect(inputOf('shapes')).toBe('shapes');
    expect(inputOf('env.HOME')).toBe('env');
    expect(inputOf('shapesx')).toBeNull();
    expect(inputOf('tags')).toBeNull();
  });

  it('names the shape and the variable, joins several and keeps the rest', () => {
    const problem = {
      detail: 'invalid',
      errors: [
        { field: 'shapes[1]', message: 'H100 has no MIG profile `9g`' },
        { field: 'shapes[0]', message: 'asked twice' },
        { field: 'duration_s', message: 'must be between 60 and 600' },
        { field: 'env.PATH', message: 'is reserved' },
        { field: 'tags', message: 'unknown' },
      ],
    };
    const { byInput, rest } = trialErrors(problem, ['whole', 'mig-9g']);
    expect(byInput.shapes).toBe('mig-9g: H100 has no MIG profile `9g`; whole: asked twice');
    expect(byInput.duration_s).toBe('must be between 60 and 600');
    expect(byInput.env).toBe('PATH: is reserved');
    expect(byInput.command).toBeUndefined();
    expect(rest).toEqual([{ field: 'tags', message: 'unknown' }]);
    expect(trialErrors(null, [])).toEqual({ byInput: {}, rest: [] });
  });
});

describe('trial figures', () => {
  it('reads utilization as a percentage and memory in MB or GB', () => {
    expect(utilizationText('0.42')).toBe('42 %');
    expect(utilizationText('0.1234')).toBe('12.3 %');
    expect(utilizationText('1')).toBe('100 %');
    expect(utilizationText(null)).toBe('—');
    expect(utilizationText('n/a')).toBe('—');
    expect(memoryText(812)).toBe('812 MB');
    expect(memoryText(12_345)).toBe('12.3 GB');
    expect(memoryText(undefined)).toBe('—');
  });

  const run = (shape: string, state: 'pending' | 'running' | 'passed' | 'failed' | 'refused') => ({ shape, state });

  it('says the answer, or how far it is', () => {
    expect(
      verdictText({ state: 'done', smallest_passed: { shape: 'mig-3g.40gb', price_per_hour: '2.5' }, runs: [run('mig-1g.10gb', 'failed'), run('mig-3g.40gb', 'passed')] }),
    ).toBe('Smallest that passed: mig-3g.40gb at $2.50/h');
    expect(verdictText({ state: 'running', smallest_passed: null, runs: [run('a', 'failed'), run('b', 'running'), run('c', 'pending')] })).toBe(
      'Running: 2 of 3 shapes still to finish.',
    );
    expect(verdictText({ state: 'done', runs: [run('a', 'refused')] })).toMatch(/^No shape passed/);
    expect(passedText({ runs: [run('a', 'failed'), run('b', 'passed')] })).toBe('1 of 2 passed');
    expect(isLive({ state: 'running' })).toBe(true);
    expect(isLive({ state: 'done' })).toBe(false);
    expect(isLive(undefined)).toBe(false);
  });
});
