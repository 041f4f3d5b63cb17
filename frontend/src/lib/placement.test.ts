import { describe, expect, it } from 'vitest';
import { placementText } from './placement';

describe('placementText', () => {
  it('names each GPU and its slot', () => {
    expect(placementText({ mode: 'mig', gpus: [{ index: 0, slot: { kind: 'mig', profile: '1g.10gb', start: 6 } }] })).toBe(
      'GPU 0 (MIG 1g.10gb at slice 6)',
    );
    expect(placementText({ gpus: [{ index: 1, slot: { kind: 'shared', milli: 642, memory_mb: 40000 } }] })).toBe(
      'GPU 1 (64.2 % share, 40 GB)',
    );
    expect(placementText({ gpus: [{ index: 2, slot: { kind: 'whole' } }, { index: 3, slot: { kind: 'whole' } }] })).toBe(
      'GPU 2 (whole), GPU 3 (whole)',
    );
    expect(placementText({ gpus: [{ index: 1, slot: { kind: 'shared', milli: 100, memory_mb: 1500 } }] })).toBe('GPU 1 (10.0 % share, 1500 MB)');
    expect(placementText({})).toBe('—');
  });
});
