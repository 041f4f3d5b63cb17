import { describe, expect, it } from 'vitest';
import { asProblem, fieldError, unclaimed } from './problem';

const problem = {
  status: 422,
  code: 'validation_error',
  detail: 'resources.vram_gb: must be a multiple of 4',
  errors: [
    { field: 'resources.vram_gb', message: 'must be a multiple of 4' },
    { field: 'query.limit', message: 'too large' },
  ],
};

describe('problem+json', () => {
  it('finds a field by its full or trailing path', () => {
    expect(fieldError(problem, 'resources.vram_gb')).toBe('must be a multiple of 4');
    expect(fieldError(problem, 'vram_gb')).toBe('must be a multiple of 4');
    expect(fieldError(problem, 'tflops')).toBeUndefined();
    expect(fieldError(null, 'tflops')).toBeUndefined();
  });

  it('keeps the errors no field claims', () => {
    expect(unclaimed(problem, ['vram_gb'])).toEqual([{ field: 'query.limit', message: 'too large' }]);
  });

  it('turns anything thrown into a problem with a detail', () => {
    expect(asProblem(problem).detail).toContain('multiple of 4');
    expect(asProblem(new TypeError('Failed to fetch')).detail).toBe('Failed to fetch');
    expect(asProblem(undefined).detail).toBe('Something went wrong.');
  });
});
