// Tests that the tensor-core kernels of mixed-precision contractions (a
// bf16 convolution and an f16 GEMM, each accumulating in f32) become PTX
// mma.sync m16n8k16 that ptxas accepts for sm_90 and sm_80, and that the
// emulation pipeline (which exchanges each warp's fragments through shared
// memory) compiles them for the CPU with no NVVM op left. Before sm_80 the
// same contractions keep the scalar tiled kernels.

// RUN: traincc-opt %s -traincc-gpu-codegen-pipeline='arch=sm_90' | %python %S/Inputs/extract-ptx.py > %t.sm90.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90.ptx
// RUN: FileCheck %s --check-prefix=SHARED < %t.sm90.ptx
// RUN: /usr/local/cuda/bin/ptxas -arch=sm_90 %t.sm90.ptx -o %t.sm90.cubin
// RUN: traincc-opt %s -traincc-gpu-codegen-pipeline='arch=sm_80' | %python %S/Inputs/extract-ptx.py > %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm80.ptx
// RUN: FileCheck %s --check-prefix=SHARED < %t.sm80.ptx
// RUN: /usr/local/cuda/bin/ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin
// PTX: .entry micro_step_kernel
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// PTX: .entry micro_step_kernel
// PTX: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32

// Shared tiles are read with 4-byte loads of bf16 pairs and wider vector
// loads: every one is declared 16-byte aligned, not at its element size.
// SHARED: .shared .align 16 .b8 __wg_micro_step_kernel
// SHARED-NOT: .shared .align {{[1248] }}

// GPUs before sm_80 have no mma.sync m16n8k16: the scalar tiled kernels.
// RUN: traincc-opt %s -traincc-gpu-codegen-pipeline='arch=sm_75' | %python %S/Inputs/extract-ptx.py > %t.sm75.ptx
// RUN: FileCheck %s --check-prefix=SM75 --implicit-check-not=mma.sync < %t.sm75.ptx
// RUN: FileCheck %s --check-prefix=SHARED < %t.sm75.ptx
// RUN: /usr/local/cuda/bin/ptxas -arch=sm_75 %t.sm75.ptx -o %t.sm75.cubin
// SM75: .target sm_75
// SM75: .entry micro_step_kernel

// RUN: traincc-opt %s -traincc-gpu-emulation-pipeline | FileCheck %s --check-prefix=EMU --implicit-check-not=nvvm.
// EMU: llvm.func @micro_step_kernel(

train.param @w trainable : tensor<8x3x3x3xf32>
train.param @w.bf16 weight_copy : tensor<8x3x3x3xbf16> {source = @w}
train.param @fc trainable : tensor<10x512xf32>
train.param @fc.f16 weight_copy : tensor<10x512xf16> {source = @fc}

func.func @micro_step(%x: tensor<16x3x8x8xf32>) -> tensor<16x10xf32> {
  %xb = train.cast %x : tensor<16x3x8x8xf32> to tensor<16x3x8x8xbf16>
  %w = train.read_param @w.bf16 : tensor<8x3x3x3xbf16>
  %c = train.conv %xb, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<16x3x8x8xbf16>, tensor<8x3x3x3xbf16>) -> tensor<16x8x8x8xbf16>
  %r = train.relu %c : tensor<16x8x8x8xbf16>
  %f = train.reshape %r : tensor<16x8x8x8xbf16> -> tensor<16x512xbf16>
  %fh = train.cast %f : tensor<16x512xbf16> to tensor<16x512xf16>
  %fc = train.read_param @fc.f16 : tensor<10x512xf16>
  %y = train.gemm %fh, %fc {trans_b = true} : (tensor<16x512xf16>, tensor<10x512xf16>) -> tensor<16x10xf16>
  %yf = train.cast %y : tensor<16x10xf16> to tensor<16x10xf32>
  return %yf : tensor<16x10xf32>
}
