// Symbolization benchmark: the bundled addr2line WebAssembly module vs GNU addr2line vs llvm-symbolizer-14 on a
// generated ~80 MB C++ -O2 -g binary, 10k and 100k unique random .text addresses, cold and warm, peak memory.
//   npm run bench:symbolize            (builds dist/ first; the binary is generated once into $TMPDIR)
//   node bench/symbolize-bench.mjs [--tus 12] [--per-tu 100] [--sizes 10000,100000] [--runs 1] [--no-native] [--fat]
//   --fat: also a 1 GiB copy (the binary plus a 1 GiB non-debug section, like libtorch_cuda.so's .nv_fatbin)
//          to show that only the debug and symbol sections are read (writes 1 GiB to $TMPDIR, removed after)
// Each measurement runs in its own process so peak RSS belongs to that tool alone.
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir, cpus } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, '..');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

// ---- worker mode: one WASM measurement in a fresh process ------------------------------------------------
if (process.argv[2] === '--worker') {
  const [, , , bin, addrFile] = process.argv;
  const { NodeSymbolFileSource, readAddr2lineWasm } = await import(join(root, 'dist/node/io/symbol-files.js'));
  const { readElfInfo, planCompactImage } = await import(join(root, 'dist/core/symbolize/elf.js'));
  const { Addr2lineInstance, compileAddr2line } = await import(join(root, 'dist/core/symbolize/wasm-addr2line.js'));
  const addrs = readFileSync(addrFile, 'utf8')
    .trim()
    .split('\n')
    .map((l) => BigInt(l));
  const t0 = performance.now();
  const wasm = await compileAddr2line(await readAddr2lineWasm());
  const inst = await Addr2lineInstance.create(wasm);
  const tInst = performance.now();
  const file = await new NodeSymbolFileSource().open(bin);
  const info = await readElfInfo(file);
  const image = planCompactImage(info).size;
  const h = await inst.load(file, info, 2 ** 31);
  const tLoad = performance.now();
  const memAfterLoad = inst.memoryBytes;
  const cold = inst.lookup(h, addrs);
  const tCold = performance.now();
  const memAfterCold = inst.memoryBytes;
  // Peak RSS of loading and the cold pass; later the warm pass and the text output below add JS objects only.
  const rssAfterColdKb = process.resourceUsage().maxRSS;
  const warm = inst.lookup(h, addrs);
  const tWarm = performance.now();
  let frames = 0;
  for (const f of cold) frames += f.length;
  if (warm.length !== cold.length) throw new Error('warm pass lost addresses');
  // Results as text for the correctness comparison: one block per address.
  const out = [];
  cold.forEach((fs, i) => {
    out.push('0x' + addrs[i].toString(16));
    for (const f of fs) out.push(f.function ?? '??', `${f.file ?? '??'}:${f.line ?? 0}`);
  });
  writeFileSync(addrFile + '.wasm.txt', out.join('\n') + '\n');
  await file.close();

  // End to end through the Symbolizer, as the CLI and the app use it: the binary mapped like a PIE at
  // 0x555555554000, one stack per address; then the same process again (answered from the session cache).
  const { Symbolizer } = await import(join(root, 'dist/core/symbolize/symbolize.js'));
  const base = 0x555555554000n;
  const page = 4096n;
  const maps = info.programHeaders
    .filter((p) => p.type === 1)
    .map((p) => ({
      start: base + p.vaddr - (p.vaddr % page),
      end: base + ((p.vaddr + p.filesz + page - 1n) / page) * page,
      perms: `${p.flags & 4 ? 'r' : '-'}${p.flags & 2 ? 'w' : '-'}${p.flags & 1 ? 'x' : '-'}p`,
      offset: p.offset - (p.offset % page),
      dev: '00:00',
      inode: 1,
      path: bin,
      deleted: false,
    }));
  const hex = addrs.map((a) => '0x' + (a + base).toString(16));
  const proc = {
    key: 'bench',
    pid: 1,
    pidNamespace: null,
    prefix: 'bench',
    snapshots: [],
    stacks: {
      count: hex.length,
      offsets: hex.map((_, i) => i).concat(hex.length),
      frames: hex.map((_, i) => i),
      allocatorDepth: hex.map(() => 0),
    },
    addresses: { hex, index: new Map(hex.map((h, i) => [h, i])) },
    maps,
    endedWithoutFinalDump: false,
  };
  const sym = new Symbolizer(new NodeSymbolFileSource(), { wasm, hostPaths: true });
  const s0 = performance.now();
  const t1 = await sym.symbolizeProcess(proc);
  const s1 = performance.now();
  await sym.symbolizeProcess(proc);
  const s2 = performance.now();
  await sym.dispose();
  const symbolized = t1.leaf.filter((x) => x && x.status === 'symbolized').length;
  process.stdout.write(
    JSON.stringify({
      instantiateMs: tInst - t0,
      loadMs: tLoad - tInst,
      coldMs: tCold - tLoad,
      warmMs: tWarm - tCold,
      imageBytes: image,
      wasmMemAfterLoad: memAfterLoad,
      wasmMemAfterCold: memAfterCold,
      rssAfterColdKb,
      e2eColdMs: s1 - s0,
      e2eCachedMs: s2 - s1,
      e2eSymbolized: symbolized,
      maxRssKb: process.resourceUsage().maxRSS,
      frames,
    }),
  );
  process.exit(0);
}

// ---- the test binary ---------------------------------------------------------------------------------------
const TUS = Number(arg('tus', '12'));
const PER_TU = Number(arg('per-tu', '100'));
const SIZES = arg('sizes', '10000,100000').split(',').map(Number);
const RUNS = Number(arg('runs', '1'));

function tuSource(tu, n) {
  const types = ['int', 'long', 'double', 'short'];
  const calls = [];
  for (let i = 0; i < n; i++) calls.push(`  s += (long)bench::work<${tu * 1000 + i}, ${types[i % 4]}>(n);`);
  return `// generated by bench/symbolize-bench.mjs: template/lambda/STL-heavy code, so lots of inlining and DWARF
#include <algorithm>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>
namespace bench {
template <int N, typename T>
__attribute__((noinline)) T work(int n) {
  std::vector<T> v;
  for (int i = 0; i < n; i++) v.push_back(T((i * N) % 97));
  std::sort(v.begin(), v.end(), [](const T& a, const T& b) { return a > b; });
  std::map<int, T> m;
  for (int i = 0; i < n; i++) m[(i * 7) % (N + 3)] += v[i];
  std::unordered_map<std::string, T> u;
  for (auto& kv : m) u[std::to_string(kv.first + N)] = kv.second;
  T acc = std::accumulate(v.begin(), v.end(), T(), [](T a, T b) { return a + b; });
  auto mix = [&](auto& x, auto& y) { return x + y * T(N % 5); };
  for (auto& kv : u) acc = mix(acc, kv.second);
  std::ostringstream os;
  os << acc << ':' << u.size();
  return acc + T(os.str().size()) + T(m.size());
}
}  // namespace bench
long entry_${tu}(int n) {
  long s = 0;
${calls.join('\n')}
  return s;
}
`;
}

function buildBinary() {
  const key = createHash('sha256').update(tuSource(0, PER_TU)).update(String(TUS)).digest('hex').slice(0, 10);
  const dir = join(tmpdir(), `heaplens-symbolize-bench-${key}`);
  const bin = join(dir, 'bench-cpp');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const objs = [];
  const decls = [];
  const calls = [];
  for (let t = 0; t < TUS; t++) {
    writeFileSync(join(dir, `tu${t}.cpp`), tuSource(t, PER_TU));
    objs.push(`tu${t}.o`);
    decls.push(`long entry_${t}(int);`);
    calls.push(`  s += entry_${t}(argc);`);
  }
  writeFileSync(
    join(dir, 'main.cpp'),
    `${decls.join('\n')}\nint main(int argc, char**) {\n  long s = 0;\n${calls.join('\n')}\n  return (int)(s & 1);\n}\n`,
  );
  writeFileSync(
    join(dir, 'Makefile'),
    `CXXFLAGS=-O2 -g\nbench-cpp: main.o ${objs.join(' ')}\n\tg++ -o $@ $^\n%.o: %.cpp\n\tg++ $(CXXFLAGS) -c $< -o $@\n`,
  );
  const t0 = Date.now();
  console.error(`building ${TUS} TUs × ${PER_TU} instantiations in ${dir} …`);
  execFileSync('make', ['-s', '-j', String(Math.max(1, cpus().length)), '-C', dir], { stdio: 'inherit' });
  console.error(`built in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  return bin;
}

function sectionInfo(bin) {
  // name, size, offset, address from readelf (wide)
  const text = execFileSync('readelf', ['-SW', bin], { encoding: 'utf8' });
  const out = {};
  for (const line of text.split('\n')) {
    const m = /\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)/.exec(line);
    if (m) out[m[1]] = { addr: parseInt(m[2], 16), off: parseInt(m[3], 16), size: parseInt(m[4], 16) };
  }
  return out;
}

function randomAddresses(text, n, seed) {
  // Deterministic xorshift so runs are comparable; unique addresses.
  let x = seed >>> 0 || 1;
  const rnd = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 2 ** 32;
  };
  const set = new Set();
  while (set.size < Math.min(n, text.size)) set.add(text.addr + Math.floor(rnd() * text.size));
  return [...set].map((a) => '0x' + a.toString(16));
}

function timed(cmd, args, input) {
  // GNU time gives the peak RSS of the tool; the wall time is ours.
  const t0 = performance.now();
  const r = spawnSync('/usr/bin/time', ['-f', '%M', cmd, ...args], { input, maxBuffer: 1 << 30, encoding: 'utf8' });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  const rssKb = Number(r.stderr.trim().split('\n').pop());
  return { ms, rssKb, stdout: r.stdout };
}

function parseBlocks(text, kind) {
  // GNU (-a): address line, then pairs. llvm (--addresses): address line, pairs, blank line. → Map addr → ["file:line"...]
  const out = new Map();
  let cur = null;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i];
    if (/^0x[0-9a-f]+$/.test(l)) {
      cur = [];
      out.set(BigInt(l).toString(16), cur);
    } else if (cur && l !== '' && i + 1 < lines.length) {
      const loc = lines[i + 1].replace(/ \(discriminator \d+\)$/, '');
      const m = /^(.*?):(\d+)/.exec(loc);
      const file = m && m[1] !== '??' ? m[1].slice(m[1].lastIndexOf('/') + 1) : null;
      const line = m && m[2] !== '0' ? m[2] : null;
      if (l !== '??' || file) cur.push(file && line ? `${file}:${line}` : '?');
      i++;
    }
  }
  void kind;
  return out;
}

function agreement(ref, ours) {
  let frames = 0;
  let same = 0;
  for (const [a, r] of ref) {
    const o = ours.get(a) ?? [];
    const n = Math.max(r.length, o.length, 1);
    frames += n;
    for (let i = 0; i < n; i++) if ((r[i] ?? '?') === (o[i] ?? '?')) same++;
  }
  return (100 * same) / frames;
}

/** The same Rust code built natively, when Debian's toolchain is there (native-tools/addr2line/build.sh). */
function buildNative() {
  if (!existsSync('/usr/bin/cargo') || process.argv.includes('--no-native')) return null;
  try {
    const out = execFileSync('bash', [join(root, 'native-tools/addr2line/build.sh')], {
      env: { ...process.env, NATIVE_BENCH: '1', CARGO_TARGET_DIR: join(tmpdir(), 'heaplens-native-bench') },
      encoding: 'utf8',
    });
    return out.trim().split('\n').pop();
  } catch (e) {
    console.error(`native build failed, skipping it: ${e.message}`);
    return null;
  }
}

const bin = buildBinary();
const nativeBin = buildNative();
const secs = sectionInfo(bin);
const fileSize = readFileSync(bin).length;
const debugBytes = Object.entries(secs)
  .filter(([n]) => n.startsWith('.debug_'))
  .reduce((s, [, v]) => s + v.size, 0);
console.log(`binary: ${bin}`);
console.log(
  `  ${(fileSize / 2 ** 20).toFixed(1)} MiB file, ${(secs['.text'].size / 2 ** 20).toFixed(2)} MiB .text, ${(debugBytes / 2 ** 20).toFixed(1)} MiB debug sections`,
);

const results = [];
for (const n of SIZES) {
  const addrs = randomAddresses(secs['.text'], n, 12345 + n);
  const addrFile = join(dirname(bin), `addrs-${n}.txt`);
  writeFileSync(addrFile, addrs.join('\n') + '\n');
  const input = addrs.join('\n') + '\n';
  for (let run = 0; run < RUNS; run++) {
    // Every tool runs twice per round, each time in a fresh process, and the ratios compare the best of
    // each: on a shared machine one run of any tool can be 30 % off.
    const worker = () => {
      const w = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--worker', bin, addrFile], {
        encoding: 'utf8',
        maxBuffer: 1 << 28,
      });
      if (w.status !== 0) throw new Error(`wasm worker failed: ${w.stderr}`);
      return JSON.parse(w.stdout);
    };
    const coldTotal = (x) => x.instantiateMs + x.loadMs + x.coldMs;
    const wasmRuns = [worker(), worker()];
    const wasm = coldTotal(wasmRuns[0]) <= coldTotal(wasmRuns[1]) ? wasmRuns[0] : wasmRuns[1];
    const wasmOther = wasm === wasmRuns[0] ? wasmRuns[1] : wasmRuns[0];
    const gnu1 = timed('addr2line', ['-a', '-f', '-i', '-C', '-e', bin], input);
    const gnu2 = timed('addr2line', ['-a', '-f', '-i', '-C', '-e', bin], input);
    const llvm1 = timed('llvm-symbolizer-14', [`--obj=${bin}`, '--addresses'], input);
    const llvm2 = timed('llvm-symbolizer-14', [`--obj=${bin}`, '--addresses'], input);
    let native = null;
    if (nativeBin) {
      const t = timed(nativeBin, [bin, addrFile], '');
      native = { ...JSON.parse(t.stdout), rssKb: t.rssKb };
    }
    const ours = parseBlocks(readFileSync(addrFile + '.wasm.txt', 'utf8'));
    const r = {
      n,
      wasm,
      gnu: [gnu1.ms, gnu2.ms, gnu1.rssKb],
      llvm: [llvm1.ms, llvm2.ms, llvm1.rssKb],
      native,
      matchGnu: agreement(parseBlocks(gnu1.stdout), ours),
      matchLlvm: agreement(parseBlocks(llvm1.stdout), ours),
    };
    results.push(r);
    const wasmCold = coldTotal(wasm);
    const llvmBest = Math.min(llvm1.ms, llvm2.ms);
    const gnuBest = Math.min(gnu1.ms, gnu2.ms);
    const mb = (kb) => (kb / 1024).toFixed(0) + ' MiB';
    console.log(`\n${n} unique addresses (run ${run + 1}), ${wasm.frames} frames from WASM`);
    console.log(
      `  WASM  instantiate ${wasm.instantiateMs.toFixed(0)} ms, load ${wasm.loadMs.toFixed(0)} ms (image ${(wasm.imageBytes / 2 ** 20).toFixed(1)} MiB), cold lookup ${wasm.coldMs.toFixed(0)} ms → cold total ${wasmCold.toFixed(0)} ms (other process ${coldTotal(wasmOther).toFixed(0)} ms); warm pass ${wasm.warmMs.toFixed(0)} ms`,
    );
    console.log(
      `        WASM memory ${(wasm.wasmMemAfterLoad / 2 ** 20).toFixed(0)} → ${(wasm.wasmMemAfterCold / 2 ** 20).toFixed(0)} MiB; Node process peak RSS ${mb(wasm.rssAfterColdKb)} through the cold pass (${mb(wasm.maxRssKb)} with both passes' JS results and the text dump)`,
    );
    console.log(
      `  Symbolizer end to end (maps → frames objects, ${wasm.e2eSymbolized} symbolized): first ${wasm.e2eColdMs.toFixed(0)} ms, same addresses again (session cache) ${wasm.e2eCachedMs.toFixed(0)} ms → ${(wasm.e2eColdMs / wasm.e2eCachedMs).toFixed(1)}×`,
    );
    if (native) {
      console.log(
        `  same Rust, native   load ${native.loadMs.toFixed(0)} ms (whole file), cold lookup ${native.coldMs.toFixed(0)} ms, warm ${native.warmMs.toFixed(0)} ms, peak RSS ${mb(native.rssKb)}; WASM/native cold lookup = ${(wasm.coldMs / native.coldMs).toFixed(2)}×`,
      );
    }
    console.log(
      `  GNU addr2line       ${gnu1.ms.toFixed(0)} ms (second run ${gnu2.ms.toFixed(0)} ms), peak RSS ${mb(gnu1.rssKb)}`,
    );
    console.log(
      `  llvm-symbolizer-14  ${llvm1.ms.toFixed(0)} ms (second run ${llvm2.ms.toFixed(0)} ms), peak RSS ${mb(llvm1.rssKb)}`,
    );
    console.log(
      `  ratios (best of 2 each): WASM cold / llvm = ${(wasmCold / llvmBest).toFixed(2)}× (target ≤ 1.0; first runs only ${(coldTotal(wasmRuns[0]) / llvm1.ms).toFixed(2)}×), WASM cold / GNU = ${(wasmCold / gnuBest).toFixed(2)}×, cold / warm = ${(wasm.coldMs / wasm.warmMs).toFixed(1)}× raw WASM re-lookup, ${(wasm.e2eColdMs / wasm.e2eCachedMs).toFixed(1)}× through the session cache (target ≥ 5), ` +
        `peak WASM memory / debug sections = ${(wasm.wasmMemAfterCold / debugBytes).toFixed(2)}× (target ≤ 2), process RSS / debug = ${((wasm.rssAfterColdKb * 1024) / debugBytes).toFixed(2)}× (llvm ${((llvm1.rssKb * 1024) / debugBytes).toFixed(2)}×)`,
    );
    console.log(
      `  same file:line per frame (inlined included): vs GNU ${r.matchGnu.toFixed(2)}%, vs llvm ${r.matchLlvm.toFixed(2)}%`,
    );
  }
}

if (process.argv.includes('--fat')) {
  const { rmSync, truncateSync, openSync, closeSync } = await import('node:fs');
  const zeros = join(dirname(bin), 'zeros.bin');
  const fat = join(dirname(bin), 'fat.bin');
  closeSync(openSync(zeros, 'w'));
  truncateSync(zeros, 1 << 30);
  execFileSync(
    'objcopy',
    ['--add-section', `.nv_fatbin=${zeros}`, '--set-section-flags', '.nv_fatbin=alloc,readonly', bin, fat],
    { stdio: 'ignore' },
  );
  rmSync(zeros);
  const addrFile = join(dirname(bin), `addrs-${SIZES[0]}.txt`);
  const w = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--worker', fat, addrFile], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  rmSync(fat);
  if (w.status !== 0) throw new Error(`wasm worker failed: ${w.stderr}`);
  const r = JSON.parse(w.stdout);
  console.log(
    `\n1 GiB-bigger copy (${SIZES[0]} addresses): load ${r.loadMs.toFixed(0)} ms (image ${(r.imageBytes / 2 ** 20).toFixed(1)} MiB), cold ${r.coldMs.toFixed(0)} ms, WASM memory ${(r.wasmMemAfterCold / 2 ** 20).toFixed(0)} MiB, peak RSS ${(r.rssAfterColdKb / 1024).toFixed(0)} MiB`,
  );
}
