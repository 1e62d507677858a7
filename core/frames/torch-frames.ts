// PyTorch's own frames in a CUDA memory snapshot's stacks (`_record_memory_history(stacks="all")`), folded as
// jemalloc's own allocator frames are (StackTable.allocatorDepth: hidden by default, shown on request). Every such
// stack starts, leaf first, with the unwinder capturing it, the caching allocator, the empty-tensor kernels, the
// dispatcher, the Python binding and CPython's call machinery: 15–30 frames before the line that asked for memory.
//
// The rule (ours; PyTorch's viewer, torch/cuda/_memory_viz.py, drops a fixed list of names and files anywhere in
// a stack): a stack's leading run of frames that are
//   - always: the capture (torch::unwind::, CapturedTraceback::gather, gather_with_cpp), the caching allocator
//     (c10::cuda::CUDACachingAllocator::, c10 allocator and dispatcher types), at::_ops:: entry points, the
//     empty-tensor helpers (at::detail::empty*), generated registration/boxing code (core/boxing, Register*.cpp,
//     Redispatch*.cpp);
//   - when a Python frame follows the run: any frame of PyTorch's namespaces (c10::, at::, torch::, pybind11::,
//     THP…) or of CPython's call machinery (Py…/_Py… functions, Objects/*.c, ceval, pythonrun, main.c), since
//     they are the path from that Python line to the allocator;
// never the whole stack (its outermost frame stays, so a stack is never empty). A user's own C++ frame (an
// extension) ends the run: it is what allocated.

export interface TorchFrameName {
  name: string;
  filename: string;
  /** a Python frame (a .py file or a <…> pseudo-file) */
  python: boolean;
}

/** The qualified function of a demangled name: template arguments, parameters and the return type removed. */
export function qualifiedName(name: string): string {
  let s = name;
  // balanced <…> (template arguments may hold parentheses and spaces), innermost first
  for (let prev = ''; prev !== s;) {
    prev = s;
    s = s.replace(/<[^<>]*>/g, '');
  }
  // "(anonymous namespace)" is part of a name, not its parameters
  const cut = s.replace(/\(anonymous namespace\)/g, '{anon}');
  const p = cut.indexOf('(');
  const head = (p >= 0 ? cut.slice(0, p) : cut).trim();
  const last = head.slice(head.lastIndexOf(' ') + 1);
  return last.replace(/\{anon\}/g, '(anonymous namespace)');
}

const ALWAYS_NAME =
  /^torch::unwind::|CapturedTraceback::gather|(^|::)gather_with_cpp$|^c10::cuda::CUDACachingAllocator::|^c10::(CachingAllocator|CachingDeviceAllocator|impl::|Dispatcher::|KernelFunction|BoxedKernel|OperatorHandle|TypedOperatorHandle|callUnboxedKernelFunction)|^at::_ops::|^at::detail::_?empty/;
const ALWAYS_FILE = /core\/boxing\/|\/Register\w*\.cpp$|\/Redispatch\w*\.cpp$|CUDACachingAllocator\.cpp$/;
const PATH_NAME =
  /^(c10|at|torch|pybind11)::|^THP|^_?Py|^cfunction_|^method_vectorcall|^vectorcall_|^slot_tp_|^__libc_start|^_start$/;
const PATH_FILE =
  /\/Objects\/\w+\.c$|\/Python\/(ceval|pythonrun|call)\.c$|\/Modules\/main\.c$|pycore_\w+\.h$|cpython\/abstract\.h$/;
const CPYTHON_FILE = /\/(Objects|Python|Modules|Parser)\/\w+\.[ch]$|\/Include\/(internal\/|cpython\/)?\w+\.h$/;

/**
 * Whether a native frame is CPython's own (its source file is under Objects/, Python/, Modules/, Include/): the
 * interpreter's frames, folded as libpython's are in the Python-first view.
 */
export function isCPythonSource(filename: string): boolean {
  return CPYTHON_FILE.test(filename);
}

/** Whether a native frame is PyTorch's capture, allocator or dispatcher machinery (folded wherever it leads). */
export function isTorchMachinery(f: Pick<TorchFrameName, 'name' | 'filename'>): boolean {
  return ALWAYS_NAME.test(qualifiedName(f.name)) || ALWAYS_FILE.test(f.filename);
}

/** Whether a native frame lies on the path from a Python call into PyTorch and its allocator. */
export function isTorchPath(f: Pick<TorchFrameName, 'name' | 'filename'>): boolean {
  return isTorchMachinery(f) || PATH_NAME.test(qualifiedName(f.name)) || PATH_FILE.test(f.filename);
}

/** How many of a stack's leading frames (leaf first) are PyTorch's own, by the rule above. */
export function torchAllocatorDepth(frames: readonly TorchFrameName[]): number {
  const firstPython = frames.findIndex((f) => f.python);
  let d = 0;
  if (firstPython > 0) {
    while (d < firstPython && isTorchPath(frames[d])) d++;
    if (d === firstPython) return d;
    // a frame of the user's own ends the run; the machinery before it still folds
    d = 0;
  }
  while (d < frames.length - 1 && !frames[d].python && isTorchMachinery(frames[d])) d++;
  return d;
}
