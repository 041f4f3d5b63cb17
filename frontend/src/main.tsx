import '@mantine/core/styles.css';
import 'uplot/dist/uPlot.min.css';
import './app.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { startMarketReads } from './lib/prefetch';

// The market page, opened cold, fetches its chunk and its reads together
// instead of one after the other.
if (window.location.pathname === '/market') {
  void import('./pages/Market');
  startMarketReads();
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
