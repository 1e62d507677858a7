// Colours. Frame kinds use distinct hue families; diffs use a colourblind-safe diverging pair from the
// Okabe–Ito palette (vermillion = growth, blue = shrink) with reddish purple for new and sky blue for gone.

import type { FrameGroup } from '../../../core/model/vocab.ts';

export type Theme = 'light' | 'dark';

/** Base hue (deg), saturation and lightness range per frame group (the legend's). */
const KIND_HSL: Record<FrameGroup, { h: number; s: number; l: [number, number] }> = {
  python: { h: 205, s: 62, l: [56, 72] },
  program: { h: 28, s: 88, l: [56, 70] },
  library: { h: 48, s: 60, l: [58, 74] },
  allocator: { h: 0, s: 0, l: [62, 74] },
  unknown: { h: 280, s: 12, l: [64, 76] },
  folded: { h: 160, s: 10, l: [80, 86] },
};

export const KIND_LABEL: Record<FrameGroup, string> = {
  python: 'Python',
  program: 'our program',
  library: 'library',
  allocator: 'allocator',
  unknown: 'unknown',
  folded: 'folded (click to expand)',
};

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 16777619);
  }
  return (h >>> 0) / 4294967295;
}

export function kindColor(kind: FrameGroup, label: string, theme: Theme): string {
  const k = KIND_HSL[kind];
  const t = hash(label);
  const [l0, l1] = k.l;
  let l = l0 + (l1 - l0) * t;
  if (theme === 'dark') l -= 18;
  const h = k.h + (t - 0.5) * 14;
  return `hsl(${h.toFixed(0)} ${k.s}% ${l.toFixed(0)}%)`;
}

export function kindSwatch(kind: FrameGroup, theme: Theme): string {
  const k = KIND_HSL[kind];
  const l = (k.l[0] + k.l[1]) / 2 - (theme === 'dark' ? 18 : 0);
  return `hsl(${k.h} ${k.s}% ${l.toFixed(0)}%)`;
}

export const DIFF = {
  growth: [213, 94, 0] as const, // Okabe–Ito vermillion #D55E00
  shrink: [0, 114, 178] as const, // Okabe–Ito blue #0072B2
  newFrame: [204, 121, 167] as const, // Okabe–Ito reddish purple #CC79A7
  gone: [86, 180, 233] as const, // Okabe–Ito sky blue #56B4E9
};

export function rgb(c: readonly [number, number, number]): string {
  return `rgb(${c[0]} ${c[1]} ${c[2]})`;
}

/**
 * Diff colour: neutral at 0, the full growth/shrink colour at |intensity| = 1, linear in between (pprof's
 * -diff_base colours by the size of Δ): a 8 MiB buffer beside a 50 MiB leak reads a third as strong, not the
 * same orange (a square-root easing made every growing frame look alike). A faint floor keeps a change visible.
 */
export function diffColor(intensity: number, theme: Theme): string {
  const neutral = theme === 'dark' ? [70, 72, 78] : [226, 226, 226];
  const c = intensity >= 0 ? DIFF.growth : DIFF.shrink;
  const t = Math.min(1, Math.abs(intensity));
  const eased = t === 0 ? 0 : 0.12 + 0.88 * t;
  const mix = (i: number): number => Math.round(neutral[i] + (c[i] - neutral[i]) * eased);
  return `rgb(${mix(0)} ${mix(1)} ${mix(2)})`;
}

export function statusColor(status: string): string {
  switch (status) {
    case 'new':
      return rgb(DIFF.newFrame);
    case 'gone':
      return rgb(DIFF.gone);
    case 'grown':
      return rgb(DIFF.growth);
    case 'shrunk':
      return rgb(DIFF.shrink);
    default:
      return 'var(--muted)';
  }
}

/** Diff nodes and rows whose change is within 2σ of sampling: a neutral grey (no hue of growth or shrink). */
export function noiseColor(theme: Theme): string {
  return theme === 'dark' ? '#4a4d55' : '#d9dbe0';
}

/**
 * A PyTorch device's memory (components/GpuChart.svelte), Okabe–Ito as the memory chart's lines: what tensors hold
 * (allocated, blue like the heap estimate), what the caching allocator reserved from the driver (segments, orange
 * like jemalloc's allocated) and the cache between them (the band, orange and light).
 */
export const GPU_COLORS = {
  allocated: '#0072B2',
  reserved: '#E69F00',
  cached: '#E69F00',
} as const;

/**
 * A record_function span's fill: a light hue per name, a trailing number left out so that `step 0`, `step 1`, …
 * read as one kind of span (the same name, the same colour, across lanes).
 */
export function spanColor(name: string, theme: Theme): string {
  const t = hash(name.replace(/[\s_#:.-]*\d+$/, ''));
  const h = 190 + t * 140; // blue through purple to pink: clear of the lines' orange and of the danger red
  return `hsl(${h.toFixed(0)} 45% ${theme === 'dark' ? 36 : 80}%)`;
}
