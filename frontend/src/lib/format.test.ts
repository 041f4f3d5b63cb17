import { describe, expect, it } from 'vitest';
import { countdown, memoText, shortId } from './format';

describe('ids and memos', () => {
  it('tells UUIDv7 ids made in the same minute apart', () => {
    expect(shortId('01a234c8-61b0-8a9a-bf0e-5302e4b18bb6')).toBe('e4b18bb6');
    expect(shortId('01a234c8-61b6-8fb4-bd90-237950e56ad1')).toBe('50e56ad1');
  });
  it('shows a memo’s Unix-second period as times', () => {
    const text = memoText('lease 01a2 1796181956–1796181964', 'en-GB');
    expect(text).toMatch(/^lease 01a2 \d{2}:\d{2}:\d{2}–\d{2}:\d{2}:\d{2}$/);
    expect(memoText('admin credit')).toBe('admin credit');
    expect(memoText(null)).toBe('');
  });
});

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
