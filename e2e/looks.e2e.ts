// Asserted looks: every view of the app at 1024, 1280 and 1920 px wide (the real job also at 2560×1440), screenshotted and
// checked from the DOM: no text element's box overlaps another's, no text overflows the box that clips it (cut
// text, including a select's chosen option), no control under another element, no sideways page scroll; flame-graph colours where they carry
// meaning checked by pixel (frame kinds, diff growth). Screenshots: test-results/screenshots/looks-*.png.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { flameNodes, flamePixel, waitForFlame, type Rgb } from './flame-hook.ts';
import { dropFiles, folderFiles, ROOT, SHOTS } from './helpers.ts';

const SIZES = [
  { width: 1024, height: 640 },
  { width: 1280, height: 800 },
  { width: 1920, height: 1080 },
];

interface Problem {
  kind: 'overlap' | 'overflow' | 'select' | 'covered';
  a: string;
  b?: string;
}

/** Text-bearing elements visible in the viewport, their boxes checked against each other and their clip boxes. */
async function layoutProblems(page: Page): Promise<{ problems: Problem[]; scrollX: number; checked: number }> {
  return page.evaluate(() => {
    const describe = (el: Element): string => {
      const id = el.closest('[data-testid]')?.getAttribute('data-testid') ?? '';
      const t = (el.textContent ?? '').trim().slice(0, 40);
      return `${el.tagName.toLowerCase()}${el.className && typeof el.className === 'string' ? '.' + el.className.split(' ')[0] : ''}[${id}] "${t}"`;
    };
    const visible = (el: Element): boolean => {
      const cs = getComputedStyle(el);
      if (cs.visibility === 'hidden' || cs.display === 'none' || Number(cs.opacity) === 0) return false;
      const r = el.getBoundingClientRect();
      return r.width > 0 && r.height > 0;
    };
    /** the visible rectangle of an element: its box cut by every clipping ancestor and the viewport */
    const clipRect = (el: Element): DOMRect | null => {
      let r = el.getBoundingClientRect();
      let x0 = r.left;
      let y0 = r.top;
      let x1 = r.right;
      let y1 = r.bottom;
      for (let p = el.parentElement; p; p = p.parentElement) {
        const cs = getComputedStyle(p);
        if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
          const q = p.getBoundingClientRect();
          x0 = Math.max(x0, q.left);
          y0 = Math.max(y0, q.top);
          x1 = Math.min(x1, q.right);
          y1 = Math.min(y1, q.bottom);
        }
      }
      x0 = Math.max(x0, 0);
      y0 = Math.max(y0, 0);
      x1 = Math.min(x1, innerWidth);
      y1 = Math.min(y1, innerHeight);
      if (x1 - x0 < 1 || y1 - y0 < 1) return null;
      r = new DOMRect(x0, y0, x1 - x0, y1 - y0);
      return r;
    };
    // text boxes: for HTML, the union of the element's own text nodes' ranges (not its padding); SVG <text>
    const items: { el: Element; r: DOMRect }[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const byEl = new Map<Element, DOMRect>();
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (!n.textContent || !n.textContent.trim()) continue;
      const el = n.parentElement;
      if (!el || el.closest('script,style,noscript,option,title,[aria-hidden=true]')) continue;
      // the content of a closed <details> is not shown (only its summary is)
      if (el.closest('details:not([open]) > :not(summary)')) continue;
      if (!visible(el)) continue;
      const range = document.createRange();
      range.selectNodeContents(n);
      const rr = range.getBoundingClientRect();
      if (rr.width < 1 || rr.height < 1) continue;
      const prev = byEl.get(el);
      byEl.set(
        el,
        prev
          ? new DOMRect(
              Math.min(prev.left, rr.left),
              Math.min(prev.top, rr.top),
              Math.max(prev.right, rr.right) - Math.min(prev.left, rr.left),
              Math.max(prev.bottom, rr.bottom) - Math.min(prev.top, rr.top),
            )
          : rr,
      );
    }
    const problems: Problem[] = [];
    /** an ellipsis on purpose: the clipping box says "…" and the full text is a hover away (a title) */
    const ellipsized = (el: Element): boolean => {
      let clip: Element | null = null;
      for (let p: Element | null = el; p && p !== document.body; p = p.parentElement) {
        const cs = getComputedStyle(p);
        if (cs.overflowX === 'hidden' || cs.overflowX === 'clip') {
          clip = p;
          break;
        }
      }
      if (!clip || getComputedStyle(clip).textOverflow !== 'ellipsis') return false;
      for (let p: Element | null = el; p && p !== document.body; p = p.parentElement)
        if (p.getAttribute('title')) return true;
      return false;
    };
    for (const [el, r] of byEl) {
      const vis = clipRect(el);
      if (!vis) continue; // scrolled out of view
      const shown = new DOMRect(
        Math.max(r.left, vis.left),
        Math.max(r.top, vis.top),
        Math.max(0, Math.min(r.right, vis.right) - Math.max(r.left, vis.left)),
        Math.max(0, Math.min(r.bottom, vis.bottom) - Math.max(r.top, vis.top)),
      );
      if (shown.width < 1 || shown.height < 1) continue;
      items.push({ el, r: shown });
      // cut text: the text's box goes beyond what its clipping ancestors show
      const cutX = r.left < vis.left - 1 || r.right > vis.right + 1;
      const cutY = r.top < vis.top - 2 || r.bottom > vis.bottom + 2;
      // a text scrolled partly out of a scroll container (rows of a long table) is not a layout fault
      let scroller: Element | null = null;
      for (let p = el.parentElement; p && !scroller; p = p.parentElement)
        if (/auto|scroll/.test(getComputedStyle(p).overflowY)) scroller = p;
      const scrolledY = cutY && scroller !== null && !cutX;
      if ((cutX || cutY) && !scrolledY && !ellipsized(el)) problems.push({ kind: 'overflow', a: describe(el) });
    }
    // overlaps between texts of unrelated elements (neither contains the other)
    for (let i = 0; i < items.length; i++) {
      for (let j = i + 1; j < items.length; j++) {
        const a = items[i];
        const b = items[j];
        if (a.el.contains(b.el) || b.el.contains(a.el)) continue;
        const ox = Math.min(a.r.right, b.r.right) - Math.max(a.r.left, b.r.left);
        const oy = Math.min(a.r.bottom, b.r.bottom) - Math.max(a.r.top, b.r.top);
        if (ox > 1.5 && oy > 1.5) {
          // one is painted over the other on purpose (a dialog or tooltip over the page): the top one wins
          const top = document.elementFromPoint(
            (Math.max(a.r.left, b.r.left) + Math.min(a.r.right, b.r.right)) / 2,
            (Math.max(a.r.top, b.r.top) + Math.min(a.r.bottom, b.r.bottom)) / 2,
          );
          const over = top && (a.el.contains(top) || top.contains(a.el)) !== (b.el.contains(top) || top.contains(b.el));
          if (over && (a.el.closest('[role=dialog],.tip') || b.el.closest('[role=dialog],.tip'))) continue;
          problems.push({ kind: 'overlap', a: describe(a.el), b: describe(b.el) });
        }
      }
    }
    // selects: the chosen option's text fits the control (less its arrow and padding)
    const ctx = document.createElement('canvas').getContext('2d') as CanvasRenderingContext2D;
    for (const sel of document.querySelectorAll('select')) {
      if (!visible(sel) || !clipRect(sel)) continue;
      const cs = getComputedStyle(sel);
      ctx.font = `${cs.fontWeight} ${cs.fontSize} ${cs.fontFamily}`;
      const text = sel.selectedOptions[0]?.text ?? '';
      const room = sel.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight) - 16;
      if (ctx.measureText(text).width > room + 0.5)
        problems.push({
          kind: 'select',
          a: `select[${sel.getAttribute('data-testid') ?? sel.getAttribute('aria-label') ?? ''}] "${text}" (${ctx.measureText(text).width.toFixed(0)} > ${room.toFixed(0)} px)`,
        });
    }
    // controls: visible where they are (their left and right ends not under another element or off screen)
    for (const c of document.querySelectorAll('button, select, input:not([type=hidden]), [role=tab]')) {
      if (!visible(c) || c.closest('[hidden]')) continue;
      const r = c.getBoundingClientRect();
      if (r.bottom < 0 || r.top > innerHeight) continue;
      // inside scroll containers and scrolled out of the view of any of them (a list that scrolls inside a panel
      // that scrolls too), or with its middle on a container's last pixel row (sub-pixel edges round either way): not
      // a layout fault
      const y = (r.top + r.bottom) / 2;
      let hidden = false;
      for (let p = c.parentElement; p && !hidden; p = p.parentElement)
        if (/auto|scroll/.test(getComputedStyle(p).overflowY)) {
          const q = p.getBoundingClientRect();
          hidden = y < q.top + 1 || y > q.bottom - 1;
        }
      if (hidden) continue;
      for (const x of [r.left + 2, r.right - 2]) {
        const top = x >= 0 && x < innerWidth ? document.elementFromPoint(x, y) : null;
        if (!top || !(c === top || c.contains(top) || top.contains(c) || top.closest('[role=dialog],.tip'))) {
          problems.push({ kind: 'covered', a: describe(c), b: top ? describe(top) : 'off screen' });
          break;
        }
      }
    }
    return { problems, scrollX: document.documentElement.scrollWidth - innerWidth, checked: items.length };
  });
}

async function check(page: Page, name: string, size: { width: number }): Promise<void> {
  await page.waitForTimeout(250);
  await page.screenshot({ path: path.join(SHOTS, `looks-${size.width}-${name}.png`) });
  const r = await layoutProblems(page);
  expect(r.checked, `${name}: text elements checked`).toBeGreaterThan(10);
  expect(r.scrollX, `${name} at ${size.width}px: sideways page scroll`).toBeLessThanOrEqual(0);
  expect(r.problems, `${name} at ${size.width}px`).toEqual([]);
}

/** The pixel near the top-left of the first node whose label contains `label` in a flame graph. */
async function nodePixel(page: Page, testid: string, label: string): Promise<(Rgb & { label: string }) | null> {
  const n = (await flameNodes(page, testid, label)).find((x) => x.rect && x.rect.w > 6);
  return n?.rect ? { ...(await flamePixel(page, testid, n.rect, 2, 2)), label: n.label } : null;
}

function hue({ r, g, b }: Rgb): number {
  const mx = Math.max(r, g, b);
  const mn = Math.min(r, g, b);
  if (mx === mn) return -1;
  const d = mx - mn;
  const h = mx === r ? ((g - b) / d) % 6 : mx === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}

test.beforeAll(() => mkdirSync(SHOTS, { recursive: true }));

for (const size of SIZES) {
  test(`every view at ${size.width}×${size.height}: no overlap, no cut text, no sideways scroll; colours by pixel`, async ({
    page,
  }) => {
    await page.setViewportSize(size);
    await page.goto('/');
    await check(page, 'open', size);
    await page.getByTestId('try-sample').click();
    await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 30_000 });
    await expect(page.getByTestId('suspect-row').first()).toBeVisible();
    await check(page, 'suspects', size);
    await page.getByTestId('tab-growth').click();
    await expect(page.getByTestId('growth-row').first()).toBeVisible();
    await page.getByTestId('growth-row').first().click();
    await expect(page.getByTestId('stack-frames').locator('li').first()).toBeVisible();
    await check(page, 'growth', size);
    await page.getByRole('tab', { name: 'By function' }).click();
    await check(page, 'by-function', size);

    await page.getByTestId('tab-flame').click();
    await expect(page.getByTestId('flame').locator('canvas')).toBeVisible();
    await waitForFlame(page, 'flame');
    await check(page, 'flame', size);
    // frame kinds by hue: Python blue (205°), libraries yellow (48°) — colors.ts KIND_HSL ± its spread; the sample
    // is fixtures/oom-job, whose leak is the workload's StepLog.add
    const py = await nodePixel(page, 'flame', 'StepLog.add');
    expect(py, 'Python node').not.toBeNull();
    expect(Math.abs(hue(py!) - 205), JSON.stringify(py)).toBeLessThan(12);
    const lib = await nodePixel(page, 'flame', 'libc.so');
    if (lib) expect(Math.abs(hue(lib) - 48), JSON.stringify(lib)).toBeLessThan(12);

    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
    await check(page, 'diff', size);
    // growth = Okabe–Ito vermillion (213, 94, 0)
    const grew = await nodePixel(page, 'diff-flame', 'StepLog.add');
    expect(grew, 'grown node').not.toBeNull();
    expect(Math.abs(hue(grew!) - 26), JSON.stringify(grew)).toBeLessThan(10);
    expect(grew!.r).toBeGreaterThan(170);

    // several processes on the timeline, and the dark theme
    await page
      .locator('[data-testid=processes] tbody tr')
      .nth(1)
      .click({ modifiers: ['Control'] });
    await page.getByTestId('theme-toggle').click();
    await page.getByTestId('tab-suspects').click();
    await check(page, 'multi-dark', size);
  });
}

// a real multi-process job (fixtures/job: several workers, one killed), as a new user opens it
const JOB_DUMPS = path.join(ROOT, 'fixtures', 'job', 'dumps');
for (const size of [...SIZES, { width: 2560, height: 1440 }]) {
  test(`a real job at ${size.width}×${size.height}: timeline, growth, flame graphs fit`, async ({ page }) => {
    await page.setViewportSize(size);
    await page.goto('/');
    await dropFiles(page, '[data-testid=dropzone]', folderFiles(JOB_DUMPS));
    await expect(page.getByTestId('job-info')).toContainText('processes', { timeout: 60_000 });
    await expect(page.getByTestId('suspect-row').first()).toBeVisible({ timeout: 30_000 });
    await check(page, 'job-suspects', size);
    await page.getByTestId('tab-growth').click();
    await expect(page.getByTestId('growth-row').first()).toBeVisible({ timeout: 30_000 });
    await page.getByTestId('growth-row').first().click();
    await check(page, 'job-growth', size);
    // every process at once on the timeline, on its own scale
    await page.getByTestId('timeline-scale').click();
    await check(page, 'job-per-process', size);
    await page.getByTestId('tab-flame').click();
    await expect(page.getByTestId('flame').locator('canvas')).toBeVisible();
    await check(page, 'job-flame', size);
    await page.getByTestId('tab-diff').click();
    await expect(page.getByTestId('diff-flame').locator('canvas')).toBeVisible();
    await check(page, 'job-diff', size);
  });
}
