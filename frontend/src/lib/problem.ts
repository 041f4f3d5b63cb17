// Errors are application/problem+json: a `detail` for the form and
// `errors[].field` naming each bad field, shown beside that field.
export interface FieldError {
  field: string;
  message: string;
}

export interface Problem {
  status?: number;
  code?: string;
  title?: string;
  detail?: string;
  errors?: FieldError[];
}

export function asProblem(error: unknown, fallback = 'Something went wrong.'): Problem {
  if (error && typeof error === 'object') {
    const p = error as Problem;
    if (typeof p.detail === 'string' || typeof p.title === 'string') return p;
    if (error instanceof Error) return { detail: error.message };
  }
  if (typeof error === 'string') return { detail: error };
  return { detail: fallback };
}

/**
 * The message for one form field: matches `errors[].field` exactly or by its
 * last segments, so `resources.tflops` finds the TFLOPS input whether the
 * server says `resources.tflops` or `body.resources.tflops`.
 */
export function fieldError(problem: Problem | null | undefined, field: string): string | undefined {
  if (!problem?.errors) return undefined;
  const hit = problem.errors.find((e) => e.field === field || e.field.endsWith('.' + field));
  return hit?.message;
}

/** Field errors that no input on the form claims, so they are not lost. */
export function unclaimed(problem: Problem | null | undefined, fields: string[]): FieldError[] {
  if (!problem?.errors) return [];
  return problem.errors.filter((e) => !fields.some((f) => e.field === f || e.field.endsWith('.' + f)));
}
