// The caller's events (`/v1/events/stream`) need the Authorization header,
// which EventSource cannot send: fetch-event-source reads the stream with
// fetch instead, resumes with Last-Event-ID after a drop, and stops for good
// on a 401 (the session is over).
import { fetchEventSource } from '@microsoft/fetch-event-source';
import { useEffect, useRef } from 'react';
import { session } from './session';

export interface StoredEvent {
  id: number;
  type: string;
  at: string;
  order_id?: string | null;
  lease_id?: string | null;
  data: Record<string, unknown>;
}

type Listener = (event: StoredEvent) => void;
const listeners = new Set<Listener>();
let controller: AbortController | null = null;
let streamToken: string | null = null;

class Fatal extends Error {}

function connect(token: string) {
  controller?.abort();
  controller = new AbortController();
  streamToken = token;
  void fetchEventSource('/v1/events/stream', {
    headers: { Authorization: `Bearer ${token}` },
    signal: controller.signal,
    openWhenHidden: true,
    async onopen(response) {
      if (response.status === 401) {
        session.expire('Your session has ended: sign in again.');
        throw new Fatal('unauthorized');
      }
      if (!response.ok) throw new Error(`event stream answered ${response.status}`);
    },
    onmessage(message) {
      if (!message.data) return;
      try {
        const event = JSON.parse(message.data) as StoredEvent;
        listeners.forEach((l) => l(event));
      } catch {
        // A keep-alive or a line this version does not know: nothing to show.
      }
    },
    onclose() {
      // The server ends a stream when its client falls behind or the token
      // expires; fetch-event-source would stop there, so reconnect (resuming
      // with Last-Event-ID) unless the session is over.
      throw new Error('event stream closed');
    },
    onerror(error) {
      if (error instanceof Fatal) throw error;
      // The stream ends when the token expires; the session timer handles that.
      if (session.token() !== token) throw new Fatal('signed out');
      return 2000;
    },
  }).catch(() => undefined);
}

function sync() {
  const token = session.token();
  if (token && token !== streamToken && listeners.size > 0) connect(token);
  if (!token || listeners.size === 0) {
    controller?.abort();
    controller = null;
    streamToken = null;
  }
}

session.subscribe(sync);

/** Calls `onEvent` for each of the caller's events while the component is mounted. */
export function useEvents(onEvent: Listener) {
  const ref = useRef(onEvent);
  ref.current = onEvent;
  useEffect(() => {
    const listener: Listener = (e) => ref.current(e);
    listeners.add(listener);
    sync();
    return () => {
      listeners.delete(listener);
      // Keep the connection briefly: the next page usually listens too.
      setTimeout(sync, 1000);
    };
  }, []);
}
