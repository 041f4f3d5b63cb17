import { useCallback, useEffect, useRef, useState } from 'react';
import { asProblem, type Problem } from './problem';

export interface Loaded<T> {
  data: T | undefined;
  error: Problem | null;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs an openapi-fetch call and tracks it: `loading` only until the first
 * answer (later reloads keep showing the old data), `error` from the
 * problem+json body.
 */
export function useLoad<T>(
  call: () => Promise<{ data?: T; error?: unknown; response: Response }>,
  deps: unknown[],
): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<Problem | null>(null);
  const [loading, setLoading] = useState(true);
  const generation = useRef(0);
  const run = useCallback(() => {
    const mine = ++generation.current;
    call()
      .then((r) => {
        if (mine !== generation.current) return;
        if (r.error !== undefined || !r.response.ok) {
          setError(asProblem(r.error, `The server answered ${r.response.status}.`));
        } else {
          setError(null);
          setData(r.data);
        }
      })
      .catch((e) => mine === generation.current && setError(asProblem(e)))
      .finally(() => mine === generation.current && setLoading(false));
  }, deps);
  useEffect(() => {
    setLoading(true);
    run();
  }, [run]);
  return { data, error, loading, reload: run };
}
