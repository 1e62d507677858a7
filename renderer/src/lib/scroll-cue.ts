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
  const mo = new MutationObserver(() => {
    watch();
    measure();
  });
  mo.observe(node, { childList: true });
  node.addEventListener('scroll', measure, { passive: true });
  measure();
  return {
    destroy() {
      ro.disconnect();
      mo.disconnect();
      node.removeEventListener('scroll', measure);
    },
  };
}
