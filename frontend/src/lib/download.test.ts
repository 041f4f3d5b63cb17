import { describe, expect, it } from 'vitest';
import { formatBytes } from './download';

describe('formatBytes', () => {
  it('keeps small sizes in bytes and scales the rest', () => {
    expect(formatBytes(17)).toBe('17 bytes');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(3 * 1024 * 1024)).toBe('3.0 MiB');
    expect(formatBytes(10 * 1024 ** 3)).toBe('10.0 GiB');
  });
});
