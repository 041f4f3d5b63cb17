import { describe, expect, it } from 'vitest';
import { countdown } from './format';

describe('countdown', () => {
  const now = Date.parse('2026-12-01T10:00:00Z');
  it('counts down in seconds, minutes and hours', () => {
    expect(countdown('2026-12-01T10:00:42Z', now)).toBe('42s');
    expect(countdown('2026-12-01T10:02:05Z', now)).toBe('2m 05s');
    expect(countdown('2026-12-01T11:00:01Z', now)).toBe('1h 00m 01s');
  });
  it('says now once the moment has passed', () => {
    expect(countdown('2026-12-01T09:59:59Z', now)).toBe('now');
  });
});
