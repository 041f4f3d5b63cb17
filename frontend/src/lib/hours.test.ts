import { describe, expect, it } from 'vitest';
import { wholeHours } from './hours';

describe('wholeHours', () => {
  it('starts on the first whole hour past the lead time', () => {
    const from = Date.parse('2026-12-01T10:20:00Z');
    expect(wholeHours(from, Date.parse('2026-12-01T14:00:00Z'), 3600_000)).toEqual([
      '2026-12-01T12:00:00Z',
      '2026-12-01T13:00:00Z',
      '2026-12-01T14:00:00Z',
    ]);
  });
});
