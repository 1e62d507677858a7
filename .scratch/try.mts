import { writeFileSync } from 'node:fs';
import { loadJob } from '../analysis/load-job.js';
import { fixtureFiles } from '../tools/fixtures.js';
import { processFrameSource } from '../export/frames.js';
import { toPprof } from '../export/pprof.js';
import { toFolded } from '../export/folded.js';
const job = await loadJob(fixtureFiles('job'));
for (const p of job.processes) {
  const input = { proc: p, snapshotIndex: p.snapshots.length - 1, frames: processFrameSource(p) };
  writeFileSync(`/tmp/hx/${p.pid}.pb`, toPprof([input]));
  console.log(p.key, p.snapshots.at(-1)!.file, p.snapshots.at(-1)!.live.bytes);
}
const inputs = job.processes.map((p) => ({ proc: p, snapshotIndex: p.snapshots.length - 1, frames: processFrameSource(p) }));
writeFileSync('/tmp/hx/all.pb', toPprof(inputs));
writeFileSync('/tmp/hx/all.folded', toFolded(inputs));
