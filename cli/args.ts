// Command-line parsing: positional paths plus --flags (repeatable ones collect into arrays).

export class UsageError extends Error {}

export interface ParsedArgs {
  command: string;
  positional: string[];
  flags: Map<string, string[]>;
}

/** Flags that take no value. */
const BOOLEAN_FLAGS = new Set(['json', 'help', 'no-symbols', 'show-allocator', 'sanitize']);

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const [command = 'help', ...rest] = argv;
  const positional: string[] = [];
  const flags = new Map<string, string[]>();
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '--') {
      positional.push(...rest.slice(i + 1));
      break;
    }
    if (a.startsWith('--') || (a.startsWith('-') && a.length === 2 && a !== '-')) {
      let name = a.startsWith('--') ? a.slice(2) : a.slice(1);
      let value: string | undefined;
      const eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.slice(eq + 1);
        name = name.slice(0, eq);
      }
      if (name === 'n') name = 'top';
      if (name === 'o') name = 'output';
      if (name === 'h') name = 'help';
      if (BOOLEAN_FLAGS.has(name)) {
        if (value !== undefined) throw new UsageError(`--${name} takes no value`);
        value = 'true';
      } else if (value === undefined) {
        value = rest[++i];
        if (value === undefined) throw new UsageError(`--${name} needs a value`);
      }
      const list = flags.get(name) ?? [];
      list.push(value);
      flags.set(name, list);
    } else {
      positional.push(a);
    }
  }
  return { command, positional, flags };
}

export function flag(args: ParsedArgs, name: string): string | undefined {
  const v = args.flags.get(name);
  return v ? v[v.length - 1] : undefined;
}

export function has(args: ParsedArgs, name: string): boolean {
  return args.flags.has(name);
}

export function intFlag(args: ParsedArgs, name: string, fallback: number): number {
  const v = flag(args, name);
  if (v === undefined) return fallback;
  if (!/^\d+$/.test(v)) throw new UsageError(`--${name} takes a whole number, got ${JSON.stringify(v)}`);
  return Number(v);
}

export function checkFlags(args: ParsedArgs, allowed: readonly string[]): void {
  for (const name of args.flags.keys()) {
    if (!allowed.includes(name)) throw new UsageError(`unknown option --${name} for "${args.command}"`);
  }
}
