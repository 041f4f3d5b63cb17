import '@mantine/core/styles.css';
import 'uplot/dist/uPlot.min.css';
import './app.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App, Market } from './App';
import { startMarketReads } from './lib/prefetch';

function render() {
  createRoot(document.getElementById('root')!).render(
    <StrictMode>
      <App />
    </StrictMode>,
  );
}

// The market page, opened cold, fetches its chunk and its reads together
// instead of one after the other, and renders once the chunk is here (an
// empty page until then, as the Suspense fallback was).
if (window.location.pathname === '/market') {
  startMarketReads();
  Market.preload().then(render, render);
} else {
  render();
}
