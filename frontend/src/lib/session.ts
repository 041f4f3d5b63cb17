// The signed-in user: the short-lived access token and the session's rotating
// refresh token live in sessionStorage (gone with the tab, never in
// localStorage). A minute before the access token expires — or at once when a
// request is about to go out with an expired one — the refresh token is
// swapped for a new pair (POST /v1/auth/refresh; each refresh token works
// once). When the session cannot go on (refresh refused, or any call answers
// 401) the user is sent back to sign in with a message saying why; signing out
// revokes the session on the server.
import { useSyncExternalStore } from 'react';
import type { components } from '../api/schema';

export interface SessionUser {
  id: string;
  email: string;
  name: string;
  role: 'buyer' | 'provider' | 'admin' | 'agent';
}

export interface SessionState {
  token: string | null;
  expiresAt: string | null;
  refreshToken: string | null;
  user: SessionUser | null;
  /** Why the user was signed out, shown on the sign-in page. */
  notice: string | null;
}

type TokenPair = components['schemas']['TokenResponse'];

const KEY = 'gpuex.session';
const EMPTY: SessionState = { token: null, expiresAt: null, refreshToken: null, user: null, notice: null };
/** Refresh this long before the access token expires. */
const REFRESH_EARLY_MS = 60_000;
/** After a refresh that could not reach the server, try again this soon. */
const RETRY_MS = 10_000;
const ENDED = 'Your session has ended: sign in again.';
const EXPIRED = 'Your session expired: sign in again.';

function load(): SessionState {
  try {
    const raw = sessionStorage.getItem(KEY);
    if (!raw) return EMPTY;
    const saved = { ...EMPTY, ...(JSON.parse(raw) as Partial<SessionState>) };
    // An expired access token is fine while there is a refresh token to swap.
    if (!saved.refreshToken && saved.expiresAt && Date.parse(saved.expiresAt) <= Date.now()) {
      return { ...EMPTY, notice: EXPIRED };
    }
    return { ...saved, notice: null };
  } catch {
    return EMPTY;
  }
}

let state: SessionState = typeof sessionStorage === 'undefined' ? EMPTY : load();
let timer: ReturnType<typeof setTimeout> | undefined;
let refreshing: Promise<boolean> | null = null;
const listeners = new Set<() => void>();

function set(next: SessionState) {
  state = next;
  if (typeof sessionStorage !== 'undefined') {
    if (next.token) sessionStorage.setItem(KEY, JSON.stringify({ ...next, notice: null }));
    else sessionStorage.removeItem(KEY);
  }
  schedule();
  listeners.forEach((l) => l());
}

function schedule(delayMs?: number) {
  clearTimeout(timer);
  if (!state.token || !state.expiresAt) return;
  const untilExpiry = Date.parse(state.expiresAt) - Date.now();
  const ms = delayMs ?? (state.refreshToken ? untilExpiry - REFRESH_EARLY_MS : untilExpiry);
  const run = () => (state.refreshToken ? void refresh() : session.expire(EXPIRED));
  // setTimeout cannot wait longer than about 24.8 days.
  timer = setTimeout(run, Math.min(Math.max(ms, 0), 2 ** 31 - 1));
}

/**
 * Swaps the refresh token for a new pair; one swap at a time, so two callers
 * never spend the same token (a second use would revoke the session). False
 * when the session is over.
 */
function refresh(): Promise<boolean> {
  if (refreshing) return refreshing;
  const spent = state.refreshToken;
  if (!spent) return Promise.resolve(false);
  refreshing = (async () => {
    try {
      const r = await fetch('/v1/auth/refresh', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ refresh_token: spent }),
      });
      if (state.refreshToken !== spent) return state.token !== null;
      if (!r.ok) {
        session.expire(ENDED);
        return false;
      }
      const pair = (await r.json()) as TokenPair;
      set({ ...state, token: pair.access_token, expiresAt: pair.expires_at, refreshToken: pair.refresh_token });
      return true;
    } catch {
      // The server could not be reached: the token may still be good; try
      // again soon, and give up when it has expired.
      if (state.expiresAt && Date.parse(state.expiresAt) > Date.now()) schedule(RETRY_MS);
      else session.expire(ENDED);
      return false;
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

export const session = {
  get: () => state,
  token: () => state.token,
  /** The access token, refreshed first when it has expired or is about to. */
  async freshToken(): Promise<string | null> {
    if (state.token && state.refreshToken && state.expiresAt && Date.parse(state.expiresAt) - Date.now() < REFRESH_EARLY_MS) {
      await refresh();
    }
    return state.token;
  },
  signIn(pair: TokenPair, user: SessionUser) {
    set({ token: pair.access_token, expiresAt: pair.expires_at, refreshToken: pair.refresh_token, user, notice: null });
  },
  signOut() {
    const refreshToken = state.refreshToken;
    set({ ...EMPTY, notice: 'You signed out.' });
    if (refreshToken) {
      // Ends the session on the server; the tab has forgotten it either way.
      void fetch('/v1/auth/logout', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ refresh_token: refreshToken }),
      }).catch(() => undefined);
    }
  },
  expire(notice: string) {
    if (!state.token) return;
    set({ ...EMPTY, notice });
  },
  subscribe(listener: () => void) {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

schedule();

export function useSession(): SessionState {
  return useSyncExternalStore(session.subscribe, session.get);
}
