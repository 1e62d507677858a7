// Electron-mode suite: the real app (dist/app/main.js + dist/renderer over app://) driven by Playwright's
// _electron. Runs wherever an Electron binary is present (and a display, e.g. under xvfb-run); otherwise every
// test is skipped with the reason printed. Build first: `npm run build:renderer && npm run build:app`.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { _electron as electron, expect, test, type ElectronApplication, type Page } from '@playwright/test';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const JOB = path.join(ROOT, 'fixtures', 'jemalloc', 'job');

/** The Electron executable, without triggering electron's lazy download. */
function electronBinary(): string | null {
  if (process.env.ELECTRON_PATH && existsSync(process.env.ELECTRON_PATH)) return process.env.ELECTRON_PATH;
  const pkg = path.join(ROOT, 'node_modules', 'electron');
  const pathTxt = path.join(pkg, 'path.txt');
  if (!existsSync(pathTxt)) return null;
  const exe = path.join(pkg, 'dist', readFileSync(pathTxt, 'utf8').trim());
  return existsSync(exe) ? exe : null;
}

const exe = electronBinary();
const built =
  existsSync(path.join(ROOT, 'dist', 'app', 'main.js')) &&
  existsSync(path.join(ROOT, 'dist', 'renderer', 'index.html'));
const display = process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
const skipReason = !exe
  ? 'SKIPPED: no Electron binary (node_modules/electron/dist is empty; run `npx install-electron` with network, or set ELECTRON_PATH)'
  : !built
    ? 'SKIPPED: build first (npm run build:renderer && npm run build:app)'
    : !display
      ? 'SKIPPED: no display (run under xvfb-run -a)'
      : null;

if (skipReason) console.log(`[e2e-electron] ${skipReason}`);

test.describe('heaplens Electron app', () => {
  test.skip(skipReason !== null, skipReason ?? '');
  let app: ElectronApplication;
  let page: Page;

  test.beforeAll(async () => {
    app = await electron.launch({
      executablePath: exe ?? undefined,
      args: [path.join(ROOT, 'dist', 'app', 'main.js')],
      cwd: ROOT,
    });
    page = await app.firstWindow();
  });
  test.afterAll(async () => {
    await app?.close();
  });

  test('window is hardened and served from app://', async () => {
    expect(page.url()).toBe('app://bundle/index.html');
    const size = await app.evaluate(({ BrowserWindow }) => BrowserWindow.getAllWindows()[0].getSize());
    expect(size).toEqual([1280, 800]);
    // contextIsolation + sandbox + no nodeIntegration, seen from the page: only the preload's API exists
    const page1 = await page.evaluate(() => ({
      kind: (window as unknown as { heaplens?: { kind: string } }).heaplens?.kind,
      require: typeof (globalThis as { require?: unknown }).require,
      process: typeof (globalThis as { process?: unknown }).process,
    }));
    expect(page1).toEqual({ kind: 'electron', require: 'undefined', process: 'undefined' });
  });

  test('network requests and navigation are refused', async () => {
    const fetched = await page.evaluate(() =>
      fetch('https://example.com/').then(
        () => 'ok',
        () => 'blocked',
      ),
    );
    expect(fetched).toBe('blocked');
    const opened = await page.evaluate(() => window.open('https://example.com/') === null);
    expect(opened).toBe(true);
  });

  test('open a folder through the (stubbed) dialog and see the job', async () => {
    await app.evaluate(({ dialog }, job) => {
      dialog.showOpenDialog = (async () => ({ canceled: false, filePaths: [job] })) as typeof dialog.showOpenDialog;
    }, JOB);
    await page.getByTestId('open-folder').click();
    await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 30_000 });
    await expect(page.locator('[data-testid=timeline-points] .snap').first()).toBeVisible();
    await page.screenshot({ path: path.join(ROOT, 'test-results', 'screenshots', 'electron-growth.png') });
  });
});
