// `npm run test:browser`: every scenario in scenarios.mjs against one demo.
import { launch, startDemo } from './harness.mjs';
import { scenarios } from './scenarios.mjs';

const only = process.argv[2];
const demo = await startDemo();
const browser = await launch();
let failed = 0;
try {
  for (const [name, run] of scenarios) {
    if (only && !name.includes(only)) continue;
    const started = Date.now();
    try {
      await run({ browser, base: demo.base });
      console.log(`PASS ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    } catch (e) {
      failed++;
      console.log(`FAIL ${name}: ${e.stack ?? e}`);
    }
  }
} finally {
  await browser.close();
  await demo.stop();
}
console.log(failed ? `${failed} browser scenario(s) failed` : 'every browser scenario passed');
process.exit(failed ? 1 : 0);
