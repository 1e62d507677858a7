import { mount } from 'svelte';
import App from './App.svelte';
import { detectHost } from './lib/host.ts';
import './app.css';

const target = document.getElementById('app');
if (!target) throw new Error('#app missing');
mount(App, { target, props: { host: detectHost() } });
