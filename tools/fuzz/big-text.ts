// Texts far larger than any fixture, generated while they are read and never stored (issue 46: a 513 MiB–1 GiB
// memleak log, a 1 GiB massif file): a head, then one unit repeated up to the size asked. Each read() computes
// its bytes, so a 1 GiB input costs the reader's memory only.
import type { InputFile } from '../../core/formats/input-file.js';

const enc = new TextEncoder();

const KINDS: Record<string, { name: string; head: string; unit: string }> = {
  // bpftrace memleak.bt reports (fixtures/ebpf/memleak.txt's form), the same two stacks in every report
  memleak: {
    name: 'memleak.txt',
    head: 'Attaching 14 probes...\n# heaplens memleak.bt\n# pid: 31612\n# date: 2026-12-01 20:39:48 +0000\nAttaching to pid 31612, Ctrl+C to quit.\n',
    unit:
      '[20:39:49] Top 10 stacks with outstanding allocations:\n' +
      '@outstanding_bytes[\n\t55eb2ed6d319 churn+40 (/opt/leaky)\n\t55eb2ed6d492 main+316 (/opt/leaky)\n]: 4000\n' +
      '@outstanding_bytes[\n\t55eb2ed6d2a6 keep+33 (/opt/leaky)\n\t55eb2ed6d404 main+174 (/opt/leaky)\n]: 131072\n',
  },
  // valgrind massif: the same snapshot block again and again
  massif: {
    name: 'massif.out.1',
    head: 'desc: (none)\ncmd: ./app\ntime_unit: i\n',
    unit: '#-----------\nsnapshot=0\n#-----------\ntime=0\nmem_heap_B=1000\nmem_heap_extra_B=8\nmem_stacks_B=0\nheap_tree=empty\n',
  },
};

/** `kind`'s text of at least `size` bytes as an InputFile. */
export function generatedText(kind: string, size: number): InputFile {
  const k = KINDS[kind];
  if (!k) throw new Error(`no generated text "${kind}" (${Object.keys(KINDS).join(', ')})`);
  const head = enc.encode(k.head);
  const unit = enc.encode(k.unit);
  const units = Math.max(1, Math.ceil((size - head.length) / unit.length));
  const total = head.length + units * unit.length;
  return {
    path: k.name,
    size: total,
    mtimeMs: null,
    read: async (offset, length) => {
      const n = Math.max(0, Math.min(length, total - offset));
      const out = new Uint8Array(n);
      for (let i = 0; i < n;) {
        const at = offset + i;
        if (at < head.length) {
          const part = head.subarray(at, Math.min(head.length, at + n - i));
          out.set(part, i);
          i += part.length;
        } else {
          const u = (at - head.length) % unit.length;
          const part = unit.subarray(u, Math.min(unit.length, u + n - i));
          out.set(part, i);
          i += part.length;
        }
      }
      return out;
    },
  };
}
