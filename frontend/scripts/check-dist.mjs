// The server embeds the committed frontend/dist; fails when a fresh build of
// the sources differs from it (rebuild with `npm run build` and commit dist/).
import { execFileSync } from 'node:child_process';

execFileSync('npm', ['run', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
const changed = execFileSync('git', ['status', '--porcelain', '--', 'dist'], { encoding: 'utf8' });
if (changed.trim() !== '') {
  console.error('frontend/dist is not the build of the sources:\n' + changed);
  console.error('run `npm run build` in frontend/ and commit dist/');
  process.exit(1);
}
console.log('frontend/dist is the build of the sources');
