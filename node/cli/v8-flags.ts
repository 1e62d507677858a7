// V8 flags for the CLI's short runs. Set before any script is compiled (code-cache.ts): V8's code cache carries a
// hash of every flag, and a cache made under other flags is rejected, so they must be the same from the start.

import { setFlagsFromString } from 'node:v8';

/**
 * V8 optimizes a JS function once it has run about 66 KB of bytecode (its default interrupt budget, made for
 * long-lived pages): in a CLI run of a fraction of a second the optimizing compiler's background work costs more
 * than it saves (`top -n 20` of a 1 MB python3.11 dump: 0.84× the CPU with a 1 MB budget). Functions that stay hot
 * on large inputs are still optimized (`summary` of a 105 MB process and of a 0.78 GB job: the same CPU or less).
 */
const INTERRUPT_BUDGET = 1_000_000;

/**
 * V8 recompiles a WASM function with its optimizing compiler once the function has run about 1.8 MB of code (its
 * default budget). In a CLI run that sends the symbolizer's large DWARF-parsing functions to TurboFan on background
 * threads for more CPU than the whole lookup takes in the baseline code: a third of `top`'s CPU on a 1 MB python3.11
 * dump (0.61 s → 0.41 s without it), and slower lookups up to 40k addresses on 2 cores. With this budget only
 * functions that stay hot on large inputs (the symbolizer's, or xz's decoder on a large file) are optimized.
 */
const WASM_TIERING_BUDGET = 500_000_000;

/** The flags as one string (also part of the code cache's key). */
export const CLI_V8_FLAGS = `--interrupt-budget=${INTERRUPT_BUDGET} --wasm-tiering-budget=${WASM_TIERING_BUDGET}`;

let applied = false;

/** Sets the CLI's V8 flags once; V8 reads them whenever a function's budget is (re)set or a module is compiled. */
export function applyCliV8Flags(): void {
  if (applied) return;
  applied = true;
  for (const f of CLI_V8_FLAGS.split(' ')) setFlagsFromString(f);
}
