// The single-file report's page: the app itself, read-only, over the job the page embeds (core/report/html.ts).
// Built by vite.report.config.ts into one script and one stylesheet that every report inlines.
import { mount } from 'svelte';
import App from './App.svelte';
import { reportHost } from './lib/report-host.ts';
import { DATA_ELEMENT_ID } from '../../core/report/payload.ts';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('#app missing');
const data = document.getElementById(DATA_ELEMENT_ID);
mount(App, { target, props: { host: reportHost(), reportPayload: data?.textContent ?? '' } });
