// Build-ids of pprof mappings reach the model's maps, `heaplens binaries` and the symbolizer's mismatch check.
// The profiles are the real Go leak series (fixtures/go/make-go-leak-series.sh, linked with a GNU build-id note;
// readelf's word for it is stored beside them). Their locations are named by the profile, which the symbolizer
// takes before any binary; here they are stripped of names (as jemalloc_pprof or an unsymbolized Parca profile
// comes), so the binary is what would name them: a derived input.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, copyFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Profile } from 'pprof-format';
import { FIXTURES } from '../../tools/fixtures.js';
import { runCaptured } from './run-captured.js';

const GO = join(FIXTURES, '..', 'go');
const SERIES = join(GO, 'leak-series');
const BUILD_ID = /Build ID: ([0-9a-f]+)/.exec(readFileSync(join(GO, 'leak.readelf-build-id.txt'), 'utf8'))![1];
const work = mkdtempSync(join(tmpdir(), 'heaplens-build-id-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

interface BinariesJson {
  processes: { modules: { mappingPath: string; status: string; buildId: string | null; bytes: number }[] }[];
}

describe('build-ids of pprof mappings', () => {
  const name = readdirSync(SERIES).find((n) => n.endsWith('-005.pb.gz'))!;
  const p = Profile.decode(gunzipSync(readFileSync(join(SERIES, name))));
  const mappingPath = p.stringTable.strings[Number(p.mapping[0].filename)];
  for (const l of p.location) l.line = [];
  const unnamed = join(work, 'svc-4242-001.pb');
  writeFileSync(unnamed, p.encode());

  it("binaries names the mapping's build-id (readelf's) as what to hand over when the binary is missing", async () => {
    const r = await runCaptured('binaries', unnamed, '--sysroot', join(work, 'nothing'), '--json');
    expect(r.code).toBe(0);
    const m = (JSON.parse(r.out) as BinariesJson).processes[0].modules;
    expect(m.map((x) => [x.mappingPath, x.status, x.buildId])).toEqual([[mappingPath, 'missing', BUILD_ID]]);
    const text = await runCaptured('binaries', unnamed, '--sysroot', join(work, 'nothing'));
    expect(text.out).toMatch(new RegExp(`missing +${BUILD_ID} +${mappingPath.replace(/[.]/g, '\\.')}`));
  });

  it('a binary of another build at that path is a mismatch saying both build-ids, and names nothing', async () => {
    // a real ELF with its own build-id, put where the mapping's binary would be
    const sysroot = join(work, 'sysroot');
    mkdirSync(join(sysroot, mappingPath, '..'), { recursive: true });
    copyFileSync(join(FIXTURES, 'bin', 'leaky'), join(sysroot, mappingPath));
    const r = await runCaptured('binaries', unnamed, '--sysroot', sysroot, '--json');
    const doc = JSON.parse(r.out) as BinariesJson & { processes: { modules: { reason: string }[] }[] };
    const m = doc.processes[0].modules[0];
    expect([m.status, m.buildId]).toEqual(['mismatch', BUILD_ID]);
    expect(m.reason).toMatch(
      new RegExp(`^another build: the file's build-id is [0-9a-f]+, the mapping's ${BUILD_ID}$`),
    );
  });
});
