// The looks check (looks.e2e.ts, fit.e2e.ts): the text elements visible in the viewport, from the DOM — no two
// text boxes overlap, no text is cut by the box that clips it (an ellipsis with the full text in a title is not
// cut; a text scrolled partly out of a scroll container is not a fault), no select's chosen option is wider than
// the control, no control under another element; and the page's sideways scroll. Also the part of an element's box
// on screen (shownBox, first-screen-fit.e2e.ts), computed in the page by the same function as the check's.
import type { Locator, Page } from '@playwright/test';

/** An element's box in the viewport's coordinates: the part of it on screen is empty when right ≤ left or bottom ≤ top. */
interface Edges {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/**
 * The part of an element's box on screen: inside the viewport and every ancestor box that clips or scrolls it. Runs
 * in the page, not here: its source is installed there (installShownEdges) for the looks check and for shownBox.
 */
function shownEdges(el: Element): Edges {
  const r = el.getBoundingClientRect();
  let [left, top, right, bottom] = [r.left, r.top, r.right, r.bottom];
  for (let p = el.parentElement; p; p = p.parentElement) {
    const cs = getComputedStyle(p);
    if (cs.overflowX === 'visible' && cs.overflowY === 'visible') continue;
    const q = p.getBoundingClientRect();
    left = Math.max(left, q.left);
    top = Math.max(top, q.top);
    right = Math.min(right, q.right);
    bottom = Math.min(bottom, q.bottom);
  }
  return {
    left: Math.max(left, 0),
    top: Math.max(top, 0),
    right: Math.min(right, innerWidth),
    bottom: Math.min(bottom, innerHeight),
  };
}

/** How page-evaluated code reaches shownEdges once installed. */
interface WithShownEdges {
  heaplensShownEdges: typeof shownEdges;
}

/** shownEdges's source, built once, evaluated in the page (a function passed to evaluate cannot call one of ours). */
const INSTALL_SHOWN_EDGES = `globalThis.heaplensShownEdges = ${shownEdges.toString()};`;

async function installShownEdges(page: Page): Promise<void> {
  await page.evaluate(INSTALL_SHOWN_EDGES);
}

/** An element's box and the part of it on screen (first-screen-fit.e2e.ts: "the whole element is on screen"). */
export async function shownBox(
  el: Locator,
): Promise<{ box: { w: number; h: number }; shown: { w: number; h: number } }> {
  await installShownEdges(el.page());
  return el.evaluate((e) => {
    const r = e.getBoundingClientRect();
    const s = (globalThis as unknown as WithShownEdges).heaplensShownEdges(e);
    return {
      box: { w: r.width, h: r.height },
      shown: { w: Math.max(0, s.right - s.left), h: Math.max(0, s.bottom - s.top) },
    };
  });
}

export interface Problem {
  kind: 'overlap' | 'overflow' | 'select' | 'covered';
  a: string;
  b?: string;
}

/** Text-bearing elements visible in the viewport, their boxes checked against each other and their clip boxes. */
export async function layoutProblems(page: Page): Promise<{ problems: Problem[]; scrollX: number; checked: number }> {
  await installShownEdges(page);
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
    /** the visible rectangle of an element (shownEdges), null when less than a pixel of it is on screen */
    const clipRect = (el: Element): DOMRect | null => {
      const s = (globalThis as unknown as WithShownEdges).heaplensShownEdges(el);
      return s.right - s.left < 1 || s.bottom - s.top < 1
        ? null
        : new DOMRect(s.left, s.top, s.right - s.left, s.bottom - s.top);
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
