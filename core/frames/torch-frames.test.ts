// The rule that folds PyTorch's own frames (torch-frames.ts), on names as PyTorch's unwinder symbolizes them
// (demangled, with return types, template arguments and parameters) and on the generator's stacks="all" stacks.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTorchMachinery, qualifiedName, torchAllocatorDepth, type TorchFrameName } from './torch-frames.js';
import { readTorchSnapshot } from '../formats/torch-snapshot.js';
import { TORCH_FIXTURES, torchExpected } from '../../tools/fixtures.js';

const f = (name: string, filename = '', python = false): TorchFrameName => ({ name, filename, python });

describe('PyTorch frames folded as allocator frames', () => {
  it('qualified names: return type, template arguments and parameters removed; anonymous namespaces kept', () => {
    expect(qualifiedName('at::TensorBase at::detail::_empty_generic<long>(c10::ArrayRef<long>, c10::Allocator*)')).toBe(
      'at::detail::_empty_generic',
    );
    expect(
      qualifiedName(
        'c10::impl::wrap_kernel_functor_unboxed_<c10::impl::detail::WrapFunctionIntoFunctor_<at::Tensor (c10::ArrayRef<long>), &f>, at::Tensor>::call(c10::OperatorKernel*)',
      ),
    ).toBe('c10::impl::wrap_kernel_functor_unboxed_::call');
    expect(qualifiedName('torch::cuda::(anonymous namespace)::gather_with_cpp()')).toBe(
      'torch::cuda::(anonymous namespace)::gather_with_cpp',
    );
    expect(qualifiedName('_PyEval_EvalFrameDefault')).toBe('_PyEval_EvalFrameDefault');
  });

  it("the generator's stacks: every frame ahead of the first Python frame folds", () => {
    const want = torchExpected().cpp;
    const s = readTorchSnapshot(new Uint8Array(readFileSync(join(TORCH_FIXTURES, want.file))));
    const blocks = s.devices[0].segments.flatMap((x) => x.blocks).filter((b) => b.frames.length > 0);
    expect(blocks.length).toBeGreaterThan(0);
    for (const b of blocks) {
      const frames = b.frames.map((x) => ({ ...x, python: x.filename.endsWith('.py') }));
      expect(torchAllocatorDepth(frames)).toBe(want.frames_before_python);
    }
  });

  it("a user's extension frame ends the run: the capture and allocator fold, the extension leads", () => {
    const stack = [
      f('torch::unwind::unwind()'),
      f(
        'c10::cuda::CUDACachingAllocator::Native::DeviceCachingAllocator::malloc(signed char, unsigned long, CUstream_st*)',
      ),
      f('at::detail::empty_cuda(c10::ArrayRef<long>)'),
      f('my_ext::fused_attention(at::Tensor const&)', '/src/my_ext/attn.cu'),
      f('_PyEval_EvalFrameDefault', '/usr/src/python/Python/ceval.c'),
      f('forward', '/job/model.py', true),
    ];
    expect(torchAllocatorDepth(stack)).toBe(3);
  });

  it('a stack with no Python frame (the autograd engine thread) folds only the machinery, never the whole stack', () => {
    const stack = [
      f('torch::unwind::unwind()'),
      f('torch::CapturedTraceback::gather(bool, bool, bool)'),
      f('at::native::cat_out_cuda(c10::ArrayRef<at::Tensor>)'),
      f('torch::autograd::Engine::thread_main(std::shared_ptr<torch::autograd::GraphTask> const&)'),
    ];
    expect(torchAllocatorDepth(stack)).toBe(2);
    expect(torchAllocatorDepth([f('torch::unwind::unwind()')])).toBe(0);
    // generated registration and boxing code by its file
    expect(
      isTorchMachinery(f('at::(anonymous namespace)::wrapper_CUDA_empty()', '/b/aten/src/ATen/RegisterCUDA.cpp')),
    ).toBe(true);
    expect(isTorchMachinery(f('at::native::cat_out_cuda()', '/aten/src/ATen/native/cuda/Shape.cu'))).toBe(false);
  });
});
