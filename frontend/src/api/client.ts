// The typed client: every path, body and answer comes from schema.d.ts,
// which `npm run gen:api` writes from openapi/openapi.json (and
// `npm run check:api` proves current), so the dashboard cannot drift from
// the API.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';
import { session } from '../lib/session';

export type Schemas = components['schemas'];

const auth: Middleware = {
  async onRequest({ request }) {
    // Refreshed first when it has expired or is about to (a tab asleep
    // past its refresh timer wakes up to this).
    const token = await session.freshToken();
    if (token) request.headers.set('Authorization', `Bearer ${token}`);
    return request;
  },
  async onResponse({ request, response }) {
    // A token that stopped working (session revoked, account changed) sends
    // the user back to sign in with a reason, never a silent failure. The sign-in call
    // itself answers 401 for a wrong password, which the form shows.
    if (response.status === 401 && !new URL(request.url).pathname.startsWith('/v1/auth/')) {
      session.expire('Your session has ended: sign in again.');
    }
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(auth);
