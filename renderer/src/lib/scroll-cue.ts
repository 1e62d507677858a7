// A scroll box's cue (a Svelte action): `data-more` is set while more of its content is below what it shows, so a
// shade over its bottom edge (app.css `.more-cue`) says there is more to scroll to. The box's size, its content's
// (charts mounted after it, a verdict that grows) and its scroll position are followed.

export function scrollCue(node: HTMLElement): { destroy(): void } {
  const measure = (): void => {
    const more = node.scrollTop + node.clientHeight < node.scrollHeight - 2;
    if ((node.dataset.more === 'true') !== more) node.dataset.more = String(more);
  };
  const ro = new ResizeObserver(measure);
  const watch = (): void => {
    ro.observe(node);
    for (const c of node.children) ro.observe(c);
  };
  watch();
  // measured in the next frame, not in the task that changed the content: reading scrollHeight there lays the page
  // out inside that task (35 ms of a 1,000-process job's final summary), where the frame lays it out anyway
  let frame = 0;
  const mo = new MutationObserver(() => {
    watch();
    frame ||= requestAnimationFrame(() => {
      frame = 0;
      measure();
    });
  });
  mo.observe(node, { childList: true });
  // the first measure is the ResizeObserver's first report, after the frame's layout (22 ms of forced layout when the
  // window's columns mounted)
  node.addEventListener('scroll', measure, { passive: true });
  return {
    destroy() {
      cancelAnimationFrame(frame);
      ro.disconnect();
      mo.disconnect();
      node.removeEventListener('scroll', measure);
    },
  };
}
