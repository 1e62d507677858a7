import { describe, expect, it } from 'vitest';
import {
  decodePseudoAddress,
  decodePyString,
  encodePyString,
  findPyFramesInDump,
  mergePyFrameTables,
  parsePyFrames,
  PyFrameTableMerger,
  pyFramesTokenFromMaps,
  PyFramesReader,
  MAX_FUNCTION_CHARS,
  MAX_FILE_CHARS,
  type PyFrameTable,
} from './pyframes.js';
import {
  childDump,
  listDumps,
  parentLastDump,
  readDump,
  VERSIONS,
  workloadLines,
  type FixtureDump,
} from '../../fixtures/python/fixture-helpers.js';

function tableOf(d: FixtureDump): PyFrameTable {
  const t = d.sidecar !== null ? parsePyFrames(d.sidecar, 'sidecar') : findPyFramesInDump(d.text);
  if (!t) throw new Error(`${d.name}: no table`);
  return t;
}

describe('PYFRAMES/1 tables of the real fixture dumps', () => {
  const tags = workloadLines();
  for (const v of VERSIONS) {
    const dumps = listDumps(v);
    it(`${v}: every pseudo-address in every stack is named by the dump's table`, () => {
      expect(dumps.length).toBeGreaterThan(0);
      for (const d of dumps) {
        const t = tableOf(d);
        expect(t.complete, d.name).toBe(true);
        expect(t.problems, d.name).toEqual([]);
        expect(t.pid).toBe(d.pid);
        expect(t.python).toMatch(new RegExp('^3\\.' + v.slice(3) + '\\.\\d+$'));
        expect(t.declaredCount).toBe(t.frames.size);
        // the table's token is the one the dump's maps name (memfd pyframes-<token>)
        expect(t.token).toMatch(/^[0-9a-f]{16}$/);
        expect(pyFramesTokenFromMaps(d.mapsText)).toBe(t.token);
        let pseudo = 0;
        for (const r of d.records) {
          for (const a of r.frames) {
            const pa = decodePseudoAddress(a);
            if (!pa) continue;
            pseudo++;
            expect(t.frames.has(pa.addr) || t.markers.has(pa.addr), `${d.name}: ${a}`).toBe(true);
          }
        }
        expect(pseudo).toBeGreaterThan(100);
      }
    });

    it(`${v}: names the workload's functions at their source lines`, () => {
      const t = tableOf(parentLastDump(dumps));
      const has = (fn: string, tag: string): boolean => {
        const want = tags.get(tag);
        if (!want) throw new Error(tag);
        return [...t.frames.values()].some(
          (e) => e.function === fn && e.line === want.line && want.file.endsWith(e.file.split('/').slice(-2).join('/')),
        );
      };
      expect(has('make_record', 'leak-alloc')).toBe(true);
      expect(has('leaky_handler', 'leak-call')).toBe(true);
      expect(has('Pipeline.step', 'pipeline-leak')).toBe(true);
      expect(has('recurse', 'deep-alloc')).toBe(true);
      expect(has('scanner', 'scanner-listdir')).toBe(true);
      // non-ASCII function and a directory with spaces, '%' and non-ASCII letters, decoded exactly
      expect(has('分配_é', 'unicode-alloc')).toBe(true);
      expect(has('分配_é.<locals>.<lambda>', 'unicode-lambda')).toBe(true);
      const uni = [...t.frames.values()].find((e) => e.function === '分配_é');
      expect(uni?.file.endsWith('/dir with space 100% ünï/模块_mod.py')).toBe(true);
    });
  }

  it('the 3.13 set carries its table inside the dump (append mode), after the maps', () => {
    for (const d of listDumps('py313')) {
      expect(d.sidecar).toBeNull();
      const at = d.text.indexOf('\nPYFRAMES/1 ');
      expect(at).toBeGreaterThan(d.text.indexOf('\nMAPPED_LIBRARIES:'));
      expect(findPyFramesInDump(d.text)?.source).toBe('dump');
    }
    // a sidecar dump has no table inside
    expect(findPyFramesInDump(listDumps('py312')[0].text)).toBeNull();
  });

  it('a forked child keeps the parent table and numbers its new frames after it', () => {
    const dumps = listDumps('py312');
    const parent0 = dumps.find((d) => d.name.endsWith('.0.m0.heap'));
    const child = childDump(dumps);
    if (!parent0 || !child) throw new Error('fixture set incomplete');
    const pt = tableOf(parent0);
    const ct = tableOf(child);
    for (const [a, e] of pt.frames) expect(ct.frames.get(a)).toEqual(e);
    const maxParentId = Math.max(...[...pt.frames.keys()].map((a) => decodePseudoAddress(a)?.id ?? 0));
    const childWork = [...ct.frames.values()].filter((e) => e.function === 'child_work');
    expect(childWork.length).toBeGreaterThan(0);
    for (const e of childWork) expect(decodePseudoAddress(e.addr)?.id).toBeGreaterThan(maxParentId);
    // producer statistics are read from the comment line
    expect(ct.stats.samples).toBeGreaterThan(0);
    expect(ct.stats.merged).toBeGreaterThan(ct.stats.unmerged);
  });

  it('merging a series: later tables extend earlier ones, conflicts are reported', () => {
    const [a, b] = listDumps('py312')
      .filter((d) => d.name.includes('.0.m0.') || d.name.includes(`.${listDumps('py312')[0].pid}.1.m1.`))
      .map(tableOf);
    const { table, conflicts } = mergePyFrameTables([a, b]);
    expect(conflicts).toEqual([]);
    expect(table?.frames.size).toBe(b.frames.size);
    const fake = parsePyFrames('PYFRAMES/1 pid=1\nF 0x7079100000000010 1 1 other other.py\nEND 1\n');
    if (!fake) throw new Error('parse');
    expect(mergePyFrameTables([a, fake]).conflicts.length).toBe(1);
  });
});

describe('PYFRAMES/1 reader rules', () => {
  const HEAD = 'PYFRAMES/1 tag=0x7079 kind_shift=44 id_shift=4 pid=42 python=3.12.1';

  it('reads frames, markers and header keys; ignores unknown keys and records', () => {
    const t = parsePyFrames(
      [
        HEAD + ' future_key=zz token=ABCDEF',
        '# samples=10 merged=9 note=text',
        'M 0x7079200000000000 entry',
        'M 0x7079600000000000 someday',
        'F 0x7079100000000010 22 20 make_record /srv/app.py extra-field',
        'X whatever this is',
        'F 0x7079100000000020 0 0 - -',
        'END 2',
        'F 0x7079100000000030 1 1 after end',
      ].join('\n'),
    );
    expect(t).not.toBeNull();
    if (!t) return;
    expect(t.pid).toBe(42);
    expect(t.python).toBe('3.12.1');
    expect(t.token).toBe('abcdef');
    expect(t.header.future_key).toBe('zz');
    expect(t.stats).toEqual({ samples: 10, merged: 9 });
    expect(t.unknownRecords).toBe(1);
    expect(t.markers.get('0x7079200000000000')).toBe('entry');
    expect(t.markers.size).toBe(1);
    expect(t.frames.get('0x7079100000000010')).toEqual({
      addr: '0x7079100000000010',
      function: 'make_record',
      file: '/srv/app.py',
      line: 22,
      firstLine: 20,
    });
    expect(t.frames.get('0x7079100000000020')).toMatchObject({ function: '', file: '', line: null, firstLine: null });
    expect(t.frames.has('0x7079100000000030')).toBe(false);
    expect(t.complete).toBe(true);
    expect(t.problems).toEqual([]);
  });

  it('flags a missing END and a count mismatch, keeps what it read', () => {
    const cut = parsePyFrames(HEAD + '\nF 0x7079100000000010 22 20 f a.py\nF 0x70791000000000');
    expect(cut?.complete).toBe(false);
    expect(cut?.frames.size).toBe(1);
    expect(cut?.problems.some((p) => /no END/.test(p.message))).toBe(true);
    const bad = parsePyFrames(HEAD + '\nF 0x7079100000000010 22 20 f a.py\nEND 5\n');
    expect(bad?.complete).toBe(true);
    expect(bad?.problems[0].message).toMatch(/declares 5/);
  });

  it('rejects text without a header or with another major version', () => {
    expect(parsePyFrames('F 0x7079100000000010 1 1 f a.py\n')).toBeNull();
    expect(parsePyFrames('PYFRAMES/2 pid=1\nEND 0\n')).toBeNull();
    expect(parsePyFrames('')).toBeNull();
  });

  it('treats strings as untrusted: percent-decoding, control characters, bounds', () => {
    expect(decodePyString('dir%20with%20space%20100%25%20%C3%BCn%C3%AF', 100)).toBe('dir with space 100% ünï');
    expect(decodePyString('-', 10)).toBe('');
    expect(decodePyString('%2D', 10)).toBe('-');
    expect(decodePyString('a%0Ab%1B[31m%00', 100)).toBe('a\uFFFDb\uFFFD[31m\uFFFD');
    expect(decodePyString('%E2%80%AEevil', 100)).toBe('\uFFFDevil'); // bidi override
    expect(decodePyString('%FF%FE', 100)).toBe('\uFFFD\uFFFD'); // invalid UTF-8 (surrogateescape bytes)
    expect(decodePyString('100%', 100)).toBe('100%'); // malformed escapes stay literal
    expect(decodePyString('%zz', 100)).toBe('%zz');
    expect(decodePyString('a'.repeat(5000), MAX_FUNCTION_CHARS)).toBe('a'.repeat(MAX_FUNCTION_CHARS) + '\u2026');
    const long = parsePyFrames(
      `${HEAD}\nF 0x7079100000000010 1 1 ${'x'.repeat(200000)} ${'y'.repeat(200000)}\nEND 1\n`,
    );
    const e = long?.frames.get('0x7079100000000010');
    expect(e?.function.length).toBe(MAX_FUNCTION_CHARS + 1);
    expect(e?.file.length).toBe(MAX_FILE_CHARS + 1);
  });

  it('encodes the way the producer does (round trip)', () => {
    for (const s of ['分配_é', 'dir with space 100% ünï/模块_mod.py', '-lead', '<lambda>', 'a\tb']) {
      const enc = encodePyString(s);
      expect(enc).toMatch(/^[\x21-\x7e]+$/);
      expect(decodePyString(enc, 1000)).toBe(s.replace('\t', '\uFFFD'));
    }
    expect(encodePyString('')).toBe('-');
    expect(encodePyString('-x')).toBe('%2Dx');
  });

  it('undoes a "-1" on tagged values and tells addresses from pseudo-addresses', () => {
    expect(decodePseudoAddress('0x707910000000000f')).toEqual({ addr: '0x7079100000000010', kind: 1, id: 1 });
    expect(decodePseudoAddress('0x7079400000000000')).toEqual({ addr: '0x7079400000000000', kind: 4, id: 0 });
    expect(decodePseudoAddress('0x70793fffffffffff')).toEqual({ addr: '0x7079400000000000', kind: 4, id: 0 });
    expect(decodePseudoAddress('0x7f4bc7446b86')).toBeNull();
    expect(decodePseudoAddress('0x5059000005000083')).toBeNull(); // systing's tag is another format
    expect(decodePseudoAddress('0x5059000005000083', { tagHex: '5059', kindShift: 44, idShift: 4 })).not.toBeNull();
  });

  it('reads an F line seen in an earlier table as that table read it, and a line one byte apart on its own', () => {
    const known = 'F 0x7079100000000010 22 20 make_record /srv/app.py';
    const first = parsePyFrames([HEAD, known, 'END 1'].join('\n'));
    expect(first?.frames.get('0x7079100000000010')?.line).toBe(22);
    const again = parsePyFrames(
      [HEAD, known, known.replace(' 22 ', ' 23 '), known, 'F 0x7079100000000020 5 4 other /srv/b.py', 'END 4'].join(
        '\n',
      ),
    );
    expect(again?.problems).toEqual([
      { line: 3, message: 'duplicate F line for 0x7079100000000010; the last one is used' },
      { line: 4, message: 'duplicate F line for 0x7079100000000010; the last one is used' },
    ]);
    expect([...(again?.frames.values() ?? [])]).toEqual([
      { addr: '0x7079100000000010', function: 'make_record', file: '/srv/app.py', line: 22, firstLine: 20 },
      { addr: '0x7079100000000020', function: 'other', file: '/srv/b.py', line: 5, firstLine: 4 },
    ]);
    // the same text under another tag is no frame of that table
    const other = parsePyFrames(['PYFRAMES/1 tag=0x7a7a kind_shift=44 id_shift=4', known, 'END 1'].join('\n'));
    expect(other?.frames.size).toBe(0);
    expect(other?.problems).toEqual([
      { line: 2, message: 'F line whose address is not a frame pseudo-address, skipped' },
    ]);
  });

  it('honours a declared tag and CRLF line ends', () => {
    const t = parsePyFrames(
      'PYFRAMES/1 tag=0x7a7a kind_shift=44 id_shift=4\r\nF 0x7a7a100000000010 3 1 f a.py\r\nEND 1\r\n',
    );
    expect(t?.tagHex).toBe('7a7a');
    expect(t?.frames.get('0x7a7a100000000010')?.function).toBe('f');
    expect(t?.problems).toEqual([]);
  });

  it('streams: a dump reader can feed lines after the maps', () => {
    const d = readDump('py313', listDumps('py313')[0].name);
    const lines = d.text.split('\n');
    const r = new PyFramesReader('dump');
    let started = false;
    for (const l of lines) {
      if (!started && !l.startsWith('PYFRAMES/')) continue;
      started = true;
      if (!r.push(l)) break;
    }
    const t = r.finish();
    expect(t?.complete).toBe(true);
    expect(t?.frames.size).toBe(findPyFramesInDump(d.text)?.frames.size);
  });
});

describe('PyFrameTableMerger: tables merged as they come', () => {
  // the merge as one loop over all the tables at the end (its definition before the merger), for comparison
  const atTheEnd = (tables: readonly PyFrameTable[]) => {
    if (tables.length < 2) return { table: tables[0] ?? null, conflicts: [] as string[] };
    const last = tables[tables.length - 1];
    const frames = new Map<string, unknown>();
    const markers = new Map<string, unknown>();
    const problems: unknown[] = [];
    const conflicts: string[] = [];
    for (const t of tables) {
      if (t.tagHex !== last.tagHex || t.kindShift !== last.kindShift || t.idShift !== last.idShift) {
        conflicts.push(`a table uses another pseudo-address layout (tag 0x${t.tagHex}); not merged`);
        continue;
      }
      for (const [a, e] of t.frames) {
        const prev = frames.get(a) as typeof e | undefined;
        if (prev && prev !== e && (prev.function !== e.function || prev.file !== e.file || prev.line !== e.line))
          if (conflicts.length < 20)
            conflicts.push(`${a} is ${prev.function} in one table and ${e.function} in another`);
        frames.set(a, e);
      }
      for (const [a, k] of t.markers) markers.set(a, k);
      problems.push(...t.problems.slice(0, 100 - problems.length));
    }
    return {
      table: { ...last, frames, markers, problems, complete: tables.every((t) => t.complete) },
      conflicts,
    };
  };
  const plain = (r: { table: PyFrameTable | null | object; conflicts: readonly string[] }) => {
    const t = r.table as PyFrameTable | null;
    return t && { ...t, frames: [...t.frames], markers: [...t.markers], conflicts: r.conflicts };
  };
  const table = (text: string): PyFrameTable => {
    const t = parsePyFrames(text);
    if (!t) throw new Error('parse');
    return t;
  };
  const HEAD = 'PYFRAMES/1 tag=0x7079 kind_shift=44 id_shift=4 pid=7';

  it('equals the merge at the end after every table, on a real series and with conflicts, problems and layouts', () => {
    const real = listDumps('py312')
      .filter((d) => d.pid === listDumps('py312')[0].pid)
      .map(tableOf);
    expect(real.length).toBeGreaterThan(1);
    const renamed = table(`${HEAD}\nF 0x7079100000000010 1 1 other other.py\nF bad line\nEND 2\n`);
    const other = table(
      'PYFRAMES/1 tag=0x7078 kind_shift=44 id_shift=4 pid=7\nF 0x7078100000000010 1 1 f f.py\nEND 1\n',
    );
    const cut = table(`${HEAD}\nF 0x7079100000000020 3 3 g g.py\n`);
    for (const series of [
      real,
      [...real, renamed, cut],
      [real[0], other, ...real.slice(1)],
      [...real, other],
      [other, ...real],
    ]) {
      const m = new PyFrameTableMerger();
      const midway: ReturnType<PyFrameTableMerger['result']>[] = [];
      for (let k = 0; k < series.length; k++) {
        m.add(series[k]);
        const r = m.result();
        expect(plain(r)).toEqual(plain(atTheEnd(series.slice(0, k + 1))));
        midway.push(r);
      }
      // a result given midway is not changed by the tables added after it
      for (let k = 0; k < series.length; k++) expect(plain(midway[k])).toEqual(plain(atTheEnd(series.slice(0, k + 1))));
    }
    expect(mergePyFrameTables([...real, renamed]).conflicts.length).toBeGreaterThan(0);
    expect(mergePyFrameTables([...real, other]).conflicts[0]).toMatch(/another pseudo-address layout/);
  });

  it("equals the merge at the end when two readers' tables of the same frames (one Map each) alternate", () => {
    const text = `${HEAD}\nF 0x7079100000000010 1 1 f f.py\nF 0x7079100000000020 2 1 g g.py\nEND 2\n`;
    // a reader's Map shared by its tables, and another reader's: equal entries, other objects
    const a = table(text);
    const b = { ...a, frames: new Map([...a.frames].map(([k, e]) => [k, { ...e }] as const)) };
    const grown = table(`${HEAD}\nF 0x7079100000000010 1 1 f f.py\nF 0x7079100000000030 3 1 h h.py\nEND 2\n`);
    const renamed = table(`${HEAD}\nF 0x7079100000000020 9 1 g2 g.py\nEND 1\n`);
    const series = [a, b, { ...a }, { ...b }, grown, { ...a }, renamed, { ...b }, { ...a }, { ...b }];
    const m = new PyFrameTableMerger();
    series.forEach((t, k) => {
      m.add(t);
      expect(plain(m.result())).toEqual(plain(atTheEnd(series.slice(0, k + 1))));
    });
    expect(m.result().table?.frames.get('0x7079100000000020')?.function).toBe('g');
    expect(m.result().conflicts.length).toBe(2);
  });
});

describe('a run of F lines read before is replayed (PyFramesReader.pushFrameBlock)', () => {
  // A fresh copy of the module has read nothing: its parse is the cold one every table is held to.
  async function coldParse(text: string): Promise<PyFrameTable | null> {
    const { vi } = await import('vitest');
    vi.resetModules();
    const fresh = (await import('./pyframes.js')) as typeof import('./pyframes.js');
    return fresh.parsePyFrames(text, 'sidecar');
  }
  const plain = (t: PyFrameTable | null) => (t ? { ...t, frames: [...t.frames], markers: [...t.markers] } : null);

  it('every real sidecar of each fixture series, read in turn, equals its cold parse', async () => {
    let tables = 0;
    for (const v of VERSIONS) {
      for (const d of listDumps(v)) {
        if (d.sidecar === null) continue;
        const warm = parsePyFrames(d.sidecar, 'sidecar');
        const again = parsePyFrames(d.sidecar, 'sidecar');
        const cold = await coldParse(d.sidecar);
        expect(plain(warm), d.name).toEqual(plain(cold));
        expect(plain(again), d.name).toEqual(plain(cold));
        tables++;
      }
    }
    expect(tables).toBeGreaterThan(3);
  });

  const HEAD = 'PYFRAMES/1 tag=0x7079 kind_shift=44 id_shift=4 pid=7';
  const f = (id: number, name = `fn${id}`) => `F 0x70791${id.toString(16).padStart(10, '0')}0 ${id} 1 ${name} m.py`;
  const base = [
    f(1),
    f(2),
    'F 0x7079100000000030 3 1',
    f(4),
    'F 0x7079200000000040 4 1 marker-as-frame m.py',
    'Fx future record',
    `${f(5)}\r`,
    f(2, 'again'),
    f(6),
  ];
  const table = (lines: string[], head = HEAD) => [head, '# samples=1', ...lines, `END ${lines.length}`, ''].join('\n');
  const series: [string, string][] = [
    ['the first table', table(base)],
    ['the same table', table(base)],
    ['grown at the end, an address of the block repeated', table([...base, f(7), f(1, 'renamed'), f(8)])],
    ['grown again', table([...base, f(7), f(1, 'renamed'), f(8), f(9)])],
    ['back to the first', table(base)],
    ['the first cut inside its last line', table([...base.slice(0, -1), f(6).slice(0, 12)])],
    ['a marker between the F lines', table([...base.slice(0, 3), 'M 0x7079200000000000 entry', ...base.slice(3)])],
    ['F lines before and after a comment', table([...base, '# note', ...base])],
    ['another layout, the same text', table(base, 'PYFRAMES/1 tag=0x7079 kind_shift=40 id_shift=4 pid=7')],
    ['no END: the run ends the text', [HEAD, ...base].join('\n')],
    ['a table of another process', table([f(11), f(12), f(13)])],
    ['the first again after it', table([...base, f(7)])],
    ['that other process again (a block of its own frames: one shared Map)', table([f(11), f(12), f(13)])],
    ['it again, then a marker and one more F line', table([f(11), f(12), f(13), 'M 0x7079200000000000 entry', f(14)])],
    ['it again after that', table([f(11), f(12), f(13)])],
  ];
  it.each(series)('%s: the same table as its cold parse', async (_name, text) => {
    const warm = parsePyFrames(text, 'sidecar');
    expect(plain(warm)).toEqual(plain(await coldParse(text)));
  });

  it('a table that repeats a block of distinct frames shares its Map; one that adds to it copies it first', () => {
    const clean = [f(31), f(32), f(33)];
    const a = parsePyFrames(table(clean), 'sidecar')!;
    const b = parsePyFrames(table(clean), 'sidecar')!;
    expect(b.frames).toBe(a.frames);
    const c = parsePyFrames(table([...clean, '# note', f(34), f(31, 'renamed')]), 'sidecar')!;
    expect(c.frames).not.toBe(a.frames);
    expect([...a.frames.keys()]).toEqual([...clean.map((l) => l.split(' ')[1])]);
    expect(c.frames.size).toBe(4);
    const first = clean[0].split(' ')[1];
    expect(c.frames.get(first)?.function).toBe('renamed');
    expect(a.frames.get(first)?.function).toBe('fn31');
    expect(c.problems.map((p) => p.message)).toContain(`duplicate F line for ${first}; the last one is used`);
    expect(b.problems).toEqual([]);
  });

  it('a grown table keeps the entries and problems of the table it grew from, and adds its own', () => {
    const a = parsePyFrames(table(base), 'sidecar')!;
    const b = parsePyFrames(table([...base, f(7)]), 'sidecar')!;
    expect(b.frames.get('0x7079100000000060')).toBe(a.frames.get('0x7079100000000060'));
    expect(b.frames.get('0x7079100000000020')?.function).toBe('again');
    expect(b.frames.size).toBe(a.frames.size + 1);
    // the block's three problems (fewer fields, a marker address, the duplicate) at the same lines; END after
    expect(b.problems.slice(0, 3)).toEqual(a.problems.slice(0, 3));
    expect(b.problems.slice(0, 3).map((p) => p.line)).toEqual([5, 7, 10]);
  });
});

describe('a long run of F lines replayed', () => {
  it('a table of 149,000 frames, then the same grown to 150,000: every frame, no problem (a spread of its ops overflowed the stack)', async () => {
    const f = (id: number) => `F 0x70791${id.toString(16).padStart(10, '0')}0 ${id} 1 fn${id} m.py`;
    const lines = Array.from({ length: 150_000 }, (_, i) => f(i + 1));
    const table = (n: number) => ['PYFRAMES/1 pid=9', ...lines.slice(0, n), `END ${n}`, ''].join('\n');
    parsePyFrames(table(149_000), 'sidecar');
    const warm = parsePyFrames(table(150_000), 'sidecar')!;
    expect(warm.frames.size).toBe(150_000);
    expect(warm.problems).toEqual([]);
    expect(warm.frames.get('0x7079100000249f00')?.function).toBe('fn150000');
  });
});
