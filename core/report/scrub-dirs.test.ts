import { describe, expect, it } from 'vitest';
import { directoriesOf, scrubDirectories } from './scrub-dirs.js';
import { buildReport } from './build-report.js';

const SECRET = ['home', 'ann', 'project alpha', 'run 7 (final)', 'job'];

describe('--sanitize leaves nothing of directory names in warnings (issue 13, item 7)', () => {
  it('directories with spaces, absolute and relative, bare and before a file', () => {
    const file = '/home/ann/project alpha/run 7 (final)/job/x.1.0.m0.heap';
    const dirs = directoriesOf([file, 'project alpha/run 7 (final)/y.heap']);
    const msgs = [
      `could not be read: EACCES: permission denied, open '${file}'`,
      'no maps for process in /home/ann/project alpha/run 7 (final)/job: its dumps have no MAPPED_LIBRARIES',
      'skipped project alpha/run 7 (final)/y.heap and /home/ann/project alpha/other dir/z.heap',
    ];
    for (const m of msgs) {
      const out = scrubDirectories(m, dirs);
      for (const part of SECRET) expect(out, `keeps "${part}"`).not.toContain(part);
    }
    expect(scrubDirectories(msgs[0], dirs)).toBe("could not be read: EACCES: permission denied, open 'x.1.0.m0.heap'");
  });

  it('in a built report: the warning keeps the file name only', () => {
    const { job: data } = buildReport([], {
      sanitize: { paths: true, maps: true },
      warnings: [
        {
          file: '/srv/my secret dir/a b/x.heap',
          message: 'skipped: not a heap profile: /srv/my secret dir/a b/x.heap, beside /srv/my secret dir/a b/y.heap',
        },
      ],
    });
    expect(JSON.stringify(data.warnings)).not.toMatch(/secret|srv|a b|my /);
    expect(data.warnings[0].message).toBe('skipped: not a heap profile: x.heap, beside y.heap');
  });
});
