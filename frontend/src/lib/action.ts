import { useCallback, useState } from 'react';
import { asProblem, type Problem } from './problem';

export interface Action {
  busy: boolean;
  problem: Problem | null;
  setProblem: (p: Problem | null) => void;
  /**
   * Runs an openapi-fetch call (or anything answering `{ data, error }`):
   * `busy` while it runs, `problem` from a refusal or a throw. Resolves to
   * `{ data }` on success and `null` when refused, so a form goes on only
   * after a success.
   */
  run: <T>(call: () => Promise<{ data?: T; error?: unknown; response?: Response }>) => Promise<{ data: T | undefined } | null>;
}

/** The busy flag and problem of a form's submit or a button's action. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const run = useCallback(async <T,>(call: () => Promise<{ data?: T; error?: unknown; response?: Response }>) => {
    setBusy(true);
    setProblem(null);
    try {
      const r = await call();
      if (r.error !== undefined || (r.response && !r.response.ok)) {
        setProblem(asProblem(r.error, r.response ? `The server answered ${r.response.status}.` : undefined));
        return null;
      }
      return { data: r.data };
    } catch (e) {
      setProblem(asProblem(e));
      return null;
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, problem, setProblem, run };
}
