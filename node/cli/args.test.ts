import { describe, expect, it } from 'vitest';
import { checkFlags, parseArgs, UsageError } from './args.js';
import { runCaptured } from './run-captured.js';

const cli = runCaptured;

describe('node/cli/args (node:util parseArgs)', () => {
  it('collects positionals, repeatable options in order, short aliases and booleans', () => {
    const a = parseArgs([
      'top',
      'a.heap',
      '-n',
      '5',
      '--symbols',
      'x',
      '--symbols=y',
      '--json',
      'b',
      '--',
      '--not-an-option',
    ]);
    expect(a.command).toBe('top');
    expect(a.positional).toEqual(['a.heap', 'b', '--not-an-option']);
    expect(a.flags.get('top')).toEqual(['5']);
    expect(a.flags.get('symbols')).toEqual(['x', 'y']);
    expect(a.flags.get('json')).toEqual(['true']);
  });

  it('usage errors name the option', () => {
    expect(() => parseArgs(['top', '--bogus'])).toThrow(/unknown option --bogus for "top"/);
    expect(() => parseArgs(['top', '--pid'])).toThrow(/--pid needs a value/);
    expect(() => parseArgs(['top', '--json=1'])).toThrow(/--json takes no value/);
    expect(() => checkFlags(parseArgs(['top', '--stacks', 'both']), ['stacks'])).toThrow(UsageError);
    expect(() => checkFlags(parseArgs(['top', '--focus', '(unclosed']), ['focus'])).toThrow(
      /--focus takes a regular expression/,
    );
  });

  // A path that does not exist would give exit code 1 ("nothing could be read") if it were read first.
  it.each([
    ['top', '--stacks', 'both'],
    ['top', '--snapshot', 'latest'],
    ['top', '-n', 'many'],
    ['diff', '--base', 'x'],
    ['growth', '--pid', 'abc'],
    ['export', '--format', 'pprof', '-o', '/tmp/x', '--snapshot', 'nope'],
    ['export', '--format', 'svg', '-o', '/tmp/x'],
    ['report', '-o', '/tmp/x.html', '--stacks', 'both'],
    ['top', '--focus', '(unclosed'],
  ])('%s %s %s: rejected before reading any dump', async (...argv) => {
    const r = await cli(argv[0], '/nonexistent/dumps', ...argv.slice(1));
    expect(r.code).toBe(2);
    expect(r.err).not.toMatch(/no such file/);
  });
});
