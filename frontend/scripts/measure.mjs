// `npm run measure`: the dashboard's budget figures for BENCHMARKS.md.
//  1. the gzipped JavaScript (and CSS) the first page loads, from the build
//     and as the server sends it;
//  2. first render to interactive in Chromium on loopback against a real
//     `gpuex demo`: from navigation start until the sign-in form (and, for
//     /market, its price table) is rendered and answers input, cold cache
//     (a fresh browser context each run), median and worst of N runs.
// A measurement, not a test: nothing here fails on a slow machine.
//
// COMPARE_BIN=<another gpuex binary> (with its gpuex-agent beside it) starts a
// second demo from it and alternates the runs between the two, so a before
// and an after see the same machine load; both medians are printed.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { launch, startDemo } from '../tests/browser/harness.mjs';

const RUNS = Number(process.env.RUNS ?? 10);
const index = readFileSync('dist/index.html', 'utf8');
const assets = [...index.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]);
let jsGzip = 0;
let jsRaw = 0;
let cssGzip = 0;
for (const a of assets) {
  const body = readFileSync('dist' + a);
  const gz = gzipSync(body, { level: 6 }).length;
  if (a.endsWith('.js')) {
    jsGzip += gz;
    jsRaw += body.length;
  } else if (a.endsWith('.css')) cssGzip += gz;
}
console.log(`first page: ${assets.length} assets; JS ${(jsRaw / 1024).toFixed(1)} KiB raw, ${(jsGzip / 1024).toFixed(1)} KiB gzipped (level 6); CSS ${(cssGzip / 1024).toFixed(1)} KiB gzipped`);

const demo = await startDemo();
const compare = process.env.COMPARE_BIN ? await startDemo(process.env.COMPARE_BIN) : null;
const browser = await launch();
const stats = (times) => {
  times.sort((a, b) => a - b);
  return `median ${times[Math.floor(times.length / 2)].toFixed(0)} ms, best ${times[0].toFixed(0)} ms, worst ${times[times.length - 1].toFixed(0)} ms`;
};
try {
  console.log(`server sends the first page's JS with content-encoding ${(await fetch(demo.base + assets.find((x) => x.endsWith('.js')), { headers: { 'accept-encoding': 'gzip' } })).headers.get('content-encoding') ?? 'none'}`);

  for (const [path, ready] of [
    ['/signin', () => document.querySelector('button[type=submit]') && !document.querySelector('button[type=submit]').disabled],
    ['/market', () => document.querySelector('[data-testid=prices] tbody tr')],
  ]) {
    const times = [];
    const compared = [];
    // One cold run against `base`: ms from navigation start to interactive.
    const once = async (base, log) => {
      const context = await browser.newContext();
      const page = await context.newPage();
      const scripts = [];
      page.on('requestfinished', (r) => r.url().endsWith('.js') && scripts.push(r));
      await page.goto(base + path, { waitUntil: 'commit' });
      await page.waitForFunction(ready, null, { polling: 'raf', timeout: 15_000 });
      // Interactive: a task queued now runs, i.e. the main thread is free.
      const t = await page.evaluate(() => new Promise((ok) => setTimeout(() => ok(performance.now()), 0)));
      if (log) {
        await page.waitForLoadState('networkidle');
        const sizes = await Promise.all(scripts.map((r) => r.sizes()));
        const wire = sizes.reduce((n, s) => n + s.responseBodySize, 0);
        console.log(`${path}: ${scripts.length} scripts, ${(wire / 1024).toFixed(1)} KiB of JS on the wire (gzip)`);
      }
      await context.close();
      return t;
    };
    for (let i = 0; i < RUNS; i++) {
      // Alternate which goes first, so neither always runs on a warmer machine.
      if (compare && i % 2 === 1) compared.push(await once(compare.base, false));
      times.push(await once(demo.base, i === 0));
      if (compare && i % 2 === 0) compared.push(await once(compare.base, false));
    }
    console.log(`${path}: first render to interactive, ${RUNS} cold runs: ${stats(times)}`);
    if (compare) console.log(`${path}: the same against COMPARE_BIN, alternated: ${stats(compared)}`);
  }
} finally {
  await browser.close();
  await demo.stop();
  await compare?.stop();
}
