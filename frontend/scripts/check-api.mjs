// Fails when src/api/schema.d.ts is not what openapi-typescript makes of
// openapi/openapi.json: the dashboard's client would have drifted from the API.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const out = join(mkdtempSync(join(tmpdir(), 'gpuex-api-')), 'schema.d.ts');
execFileSync('npx', ['openapi-typescript', '../openapi/openapi.json', '-o', out], { stdio: ['ignore', 'ignore', 'inherit'] });
const fresh = readFileSync(out, 'utf8');
const committed = readFileSync('src/api/schema.d.ts', 'utf8');
if (fresh !== committed) {
  console.error('frontend/src/api/schema.d.ts is stale: run `npm run gen:api` in frontend/ and commit it');
  process.exit(1);
}
console.log('the typed API client matches openapi/openapi.json');
