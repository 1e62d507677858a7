// The engine's API as the UI imports it: declared once in core/engine/api.ts (every transport carries the same
// messages: the browser worker, the report page, `heaplens open`'s WebSocket, the desktop app's MessagePort).

export type * from '../../../core/engine/api.ts';
export type { ToEngine as ToWorker, FromEngine as FromWorker } from '../../../core/engine/api.ts';
