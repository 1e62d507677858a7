// Command-line parsing with node:util parseArgs: positional paths plus --options (string options repeatable,
// collected into arrays). Every command names the options it takes; `checkFlags` rejects the others and checks
// every value given, so a bad value fails with a usage error before any dump is read.

import { parseArgs as utilParseArgs, type ParseArgsConfig } from 'node:util';
import { STACK_MODES } from '../../core/frames/python-stacks.js';
import { SAMPLE_TYPE_NAMES } from '../../core/model/sample-type.js';
import { GRANULARITIES } from '../../core/frames/stack-filter.js';
import type { StackFilterChip } from '../../core/model/vocab.js';

export class UsageError extends Error {}

export interface ParsedArgs {
  command: string;
  positional: string[];
  /** option name → its values in order (booleans: ['true']) */
  flags: Map<string, string[]>;
  /** option name → how it was typed last (`-n` or `--top`), so a message names what the user wrote */
  spelling?: Map<string, string>;
}

type OptionSpec = NonNullable<ParseArgsConfig['options']>[string];

/** Every option any command takes; the commands' `checkFlags` lists say which of them each accepts. */
const OPTIONS: Record<string, OptionSpec> = {
  json: { type: 'boolean' },
  // growth, postmortem: every process, not the page of those that matter (node/cli/commands/process-page.ts)
  all: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  'no-symbols': { type: 'boolean' },
  'show-allocator': { type: 'boolean' },
  sanitize: { type: 'boolean' },
  'fold-imports': { type: 'boolean' },
  top: { type: 'string', short: 'n', multiple: true },
  output: { type: 'string', short: 'o', multiple: true },
  host: { type: 'string', multiple: true },
  pid: { type: 'string', multiple: true },
  stacks: { type: 'string', multiple: true },
  snapshot: { type: 'string', multiple: true },
  base: { type: 'string', multiple: true },
  target: { type: 'string', multiple: true },
  symbols: { type: 'string', multiple: true },
  sysroot: { type: 'string', multiple: true },
  session: { type: 'string', multiple: true },
  title: { type: 'string', multiple: true },
  format: { type: 'string', multiple: true },
  measure: { type: 'string', multiple: true },
  sample: { type: 'string', multiple: true },
  focus: { type: 'string', multiple: true },
  ignore: { type: 'string', multiple: true },
  hide: { type: 'string', multiple: true },
  show: { type: 'string', multiple: true },
  granularity: { type: 'string', multiple: true },
  limit: { type: 'string', multiple: true },
  port: { type: 'string', multiple: true },
  'no-browser': { type: 'boolean' },
  // capture and collect (commands/capture.ts, commands/collect.ts)
  out: { type: 'string', multiple: true },
  jemalloc: { type: 'string', multiple: true },
  every: { type: 'string', multiple: true },
  'rss-step': { type: 'string', multiple: true },
  keep: { type: 'string', multiple: true },
  since: { type: 'string', multiple: true },
  dumps: { type: 'string', multiple: true },
  log: { type: 'string', multiple: true },
  'limit-scope': { type: 'string', multiple: true },
};

const oneOf =
  (...values: readonly string[]) =>
  (v: string): string | null =>
    values.includes(v) ? null : `takes ${values.join(', ')}`;
const wholeNumber = (v: string): string | null => (/^\d+$/.test(v) ? null : 'takes a whole number');
// `--pid 12`, or `--pid node-a:12` where pids repeat across hosts (core/model/process-host.ts)
const pidRef = (v: string): string | null =>
  /^(?:[^:\s]+:)?\d+$/.test(v) ? null : 'takes a pid (12, or host:pid such as node-a:12)';
const snapshotRef = (v: string): string | null =>
  v === 'last' || v === 'first' || v === 'peak' || /^\d+$/.test(v)
    ? null
    : 'takes last, first, peak or a sequence number';
const regex = (v: string): string | null => {
  try {
    new RegExp(v);
    return null;
  } catch (e) {
    return `takes a regular expression (${e instanceof Error ? e.message : String(e)})`;
  }
};

/**
 * Checks of option values, run before a command reads anything. The value sets of --sample and
 * --granularity are the core/ modules' own; they are repeated here only as names for the message.
 */
const VALUE_CHECKS: Record<string, (v: string) => string | null> = {
  top: wholeNumber,
  pid: pidRef,
  port: (v) => (/^\d+$/.test(v) && Number(v) <= 65535 ? null : 'takes a port number (0: any free port)'),
  stacks: oneOf(...STACK_MODES),
  snapshot: snapshotRef,
  base: snapshotRef,
  target: snapshotRef,
  format: oneOf('pprof', 'folded', 'speedscope'),
  measure: oneOf('bytes', 'objects'),
  // any name: a profile may declare its own sample types; loadInput checks it against the job (resolveSampleType)
  sample: (v) => (v.trim() !== '' ? null : `takes ${SAMPLE_TYPE_NAMES.join(', ')} or a type the profiles declare`),
  granularity: oneOf(...GRANULARITIES),
  'limit-scope': oneOf('job', 'process'),
  focus: regex,
  ignore: regex,
  hide: regex,
  show: regex,
};

/** Lets other modules add the value check of an option they own (--sample, --granularity). */
export function addValueCheck(name: string, check: (v: string) => string | null): void {
  VALUE_CHECKS[name] = check;
}

interface NodeError {
  code?: string;
  message: string;
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const [command = 'help', ...rest] = argv;
  let parsed: ReturnType<
    typeof utilParseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true; tokens: true }>
  >;
  try {
    parsed = utilParseArgs({ args: [...rest], options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    const err = e as NodeError;
    const name = /'(-[^' ]+)/.exec(err.message)?.[1] ?? '';
    switch (err.code) {
      case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
        throw new UsageError(`unknown option ${name} for "${command}"`);
      case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
        throw new UsageError(
          /argument missing/.test(err.message)
            ? `${name} needs a value`
            : /does not take an argument/.test(err.message)
              ? `${name} takes no value`
              : err.message,
        );
      default:
        throw new UsageError(err.message);
    }
  }
  const flags = new Map<string, string[]>();
  const spelling = new Map<string, string>();
  // From the tokens, so repeated options keep their order and booleans read 'true'.
  for (const t of parsed.tokens) {
    if (t.kind !== 'option') continue;
    const list = flags.get(t.name) ?? [];
    list.push(t.value ?? 'true');
    flags.set(t.name, list);
    spelling.set(t.name, t.rawName);
  }
  return { command, positional: parsed.positionals, flags, spelling };
}

/** An option as the user typed it (`-n`), else its long name. */
export function optionName(args: ParsedArgs, name: string): string {
  return args.spelling?.get(name) ?? `--${name}`;
}

export function flag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return v ? v[v.length - 1] : undefined;
}

/** Every value of a repeatable option, in order. */
export function flags(args: ParsedArgs, name: string): string[] {
  return args.flags.get(name) ?? [];
}

export function has(args: ParsedArgs, name: string): boolean {
  return args.flags.has(name);
}

export function intFlag(args: ParsedArgs, name: string, fallback: number): number {
  const v = flag(args, name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v))
    throw new UsageError(`${optionName(args, name)} takes a whole number, got ${JSON.stringify(v)}`);
  return Number(v);
}

/** --focus/--ignore/--hide/--show as the view's filters (their expressions were checked by checkFlags; the last wins). */
export function sliceFilter(args: ParsedArgs): StackFilterChip[] {
  const chips: StackFilterChip[] = [];
  for (const kind of ['focus', 'ignore', 'hide', 'show'] as const) {
    const re = flag(args, kind);
    if (re !== undefined) chips.push({ kind, re });
  }
  return chips;
}

/** Rejects options the command does not take and any bad value; call before reading any input. */
export function checkFlags(args: ParsedArgs, allowed: readonly string[]): void {
  for (const [name, values] of args.flags) {
    if (!allowed.includes(name)) throw new UsageError(`unknown option ${optionName(args, name)} for "${args.command}"`);
    const check = VALUE_CHECKS[name];
    if (!check) continue;
    for (const v of values) {
      const problem = check(v);
      if (problem) throw new UsageError(`${optionName(args, name)} ${problem}, got ${JSON.stringify(v)}`);
    }
  }
}
