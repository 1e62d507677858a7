import { mount } from 'svelte';
import App from './App.svelte';
import { detectHost } from './lib/host.ts';
import { warmFormatters } from './lib/format.ts';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('#app missing');
mount(App, { target, props: { host: detectHost() } });
// after the first paint, before any job is opened (Safari has no requestIdleCallback)
if (typeof requestIdleCallback === 'function') requestIdleCallback(warmFormatters);
else setTimeout(warmFormatters, 0);
