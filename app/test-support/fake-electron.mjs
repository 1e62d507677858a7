// A stand-in for the `electron` module, for running the real main process (dist/app/main.js) under plain Node where
// the Electron binary cannot be had: every API is a recorder that does nothing, except that the app is "ready" at
// once and each BrowserWindow prints the options it was given (one JSON line, `window-options: …`) so a test can
// check what the running main process actually passes. Loaded by app/test-support/electron-hook.mjs.
const noop = () => stub;
const stub = new Proxy(noop, {
  get: (_t, key) => (key === 'then' ? undefined : stub),
  apply: () => stub,
  construct: () => stub,
});
export const app = new Proxy(
  {
    whenReady: () => Promise.resolve(),
    isPackaged: false,
    getPath: () => process.env.TMPDIR ?? '/tmp',
    requestSingleInstanceLock: () => true,
    quit: () => process.exit(0),
  },
  { get: (t, k) => (k in t ? t[k] : stub) },
);
export class BrowserWindow {
  constructor(options) {
    process.stdout.write(`window-options: ${JSON.stringify(options)}\n`);
    this.webContents = stub;
    setTimeout(() => process.exit(0), 50);
  }
  once() {}
  on() {}
  show() {}
  isMinimized() {
    return false;
  }
  loadURL() {
    return Promise.resolve();
  }
  static getAllWindows() {
    return [];
  }
}
export const nativeTheme = new Proxy({ shouldUseDarkColors: false }, { get: (t, k) => (k in t ? t[k] : stub) });
export const dialog = stub;
export const ipcMain = stub;
export const Menu = stub;
export const protocol = stub;
export const session = stub;
export const shell = stub;
export const webContents = stub;
export const utilityProcess = stub;
export const MessageChannelMain = stub;
export default {
  app,
  BrowserWindow,
  nativeTheme,
  dialog,
  ipcMain,
  Menu,
  protocol,
  session,
  shell,
  webContents,
  utilityProcess,
  MessageChannelMain,
};
