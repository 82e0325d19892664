// Tests that a bf16 training step (conv, ReLU, casts and a GEMM on bf16
// weight copies; loss-scaled SGD that rewrites the copies and skips on
// overflow) goes through every code generation pipeline: on the CPU, bf16
// conversions are integer code (no fptrunc to bf16 for LLVM to turn into
// libgcc's __truncsfbf2 or a denormal-flushing AVX512-BF16 instruction); on
// the GPU, PTX for sm_90 and sm_80 that ptxas accepts.

// RUN: traincc-opt %s -traincc-cpu-codegen-pipeline | FileCheck %s --check-prefix=CPU --implicit-check-not='fptrunc {{.*}} to bf16'
// CPU: llvm.func @micro_step(
// CPU: llvm.bitcast %{{.*}} : i16 to bf16
// CPU: llvm.func @apply_step(

// RUN: traincc-opt %s -traincc-gpu-emulation-pipeline | FileCheck %s --check-prefix=EMU --implicit-check-not='fptrunc {{.*}} to bf16'
// EMU: llvm.func @micro_step_kernel(
// EMU: llvm.func @apply_step_kernel(

// RUN: traincc-opt %s -traincc-gpu-codegen-pipeline='arch=sm_90' | %python %S/GPU/Inputs/extract-ptx.py > %t.sm90.ptx
// RUN: FileCheck %s --check-prefix=PTX < %t.sm90.ptx
// RUN: /usr/local/cuda/bin/ptxas -arch=sm_90 %t.sm90.ptx -o %t.sm90.cubin
// PTX: .target sm_90
// PTX: .entry micro_step_kernel
// PTX: cvt.rn.bf16.f32
// PTX: .entry apply_step_kernel

// RUN: traincc-opt %s -traincc-gpu-codegen-pipeline='arch=sm_80' | %python %S/GPU/Inputs/extract-ptx.py > %t.sm80.ptx
// RUN: /usr/local/cuda/bin/ptxas -arch=sm_80 %t.sm80.ptx -o %t.sm80.cubin

train.param @w trainable : tensor<8x3x3x3xf32>
train.param @w.grad gradient : tensor<8x3x3x3xf32>
train.param @w.bf16 weight_copy : tensor<8x3x3x3xbf16> {source = @w}
train.param @fc trainable : tensor<10x512xf32>
train.param @fc.grad gradient : tensor<10x512xf32>
train.param @fc.bf16 weight_copy : tensor<10x512xbf16> {source = @fc}
train.param @loss_scaler.scale loss_scaler : tensor<f32> = dense<65536.0>
train.param @loss_scaler.growth_tracker loss_scaler : tensor<i64> = dense<0>
train.param @loss_scaler.found_inf loss_scaler : tensor<f32> = dense<0.0>

func.func @micro_step(%x: tensor<2x3x8x8xf32>) -> tensor<2x10xf32> {
  %xb = train.cast %x : tensor<2x3x8x8xf32> to tensor<2x3x8x8xbf16>
  %w = train.read_param @w.bf16 : tensor<8x3x3x3xbf16>
  %c = train.conv %xb, %w strides [1, 1] pads [1, 1, 1, 1] dilations [1, 1] groups 1 : (tensor<2x3x8x8xbf16>, tensor<8x3x3x3xbf16>) -> tensor<2x8x8x8xbf16>
  %r = train.relu %c : tensor<2x8x8x8xbf16>
  %f = train.reshape %r : tensor<2x8x8x8xbf16> -> tensor<2x512xbf16>
  %fc = train.read_param @fc.bf16 : tensor<10x512xbf16>
  %y = train.gemm %f, %fc {trans_b = true} : (tensor<2x512xbf16>, tensor<10x512xbf16>) -> tensor<2x10xbf16>
  %yf = train.cast %y : tensor<2x10xbf16> to tensor<2x10xf32>
  return %yf : tensor<2x10xf32>
}

func.func @apply_step(%lr: f32 {train.name = "lr"}, %step: i64 {train.name = "step"}) {
  train.unscale_check_finite @loss_scaler.scale, @loss_scaler.found_inf
  %found = train.read_param @loss_scaler.found_inf : tensor<f32>
  train.sgd_update @w, @w.grad weight_copy @w.bf16 lr %lr step %step skip_if %found
  train.zero @w.grad
  train.sgd_update @fc, @fc.grad weight_copy @fc.bf16 lr %lr step %step skip_if %found
  train.zero @fc.grad
  train.update_loss_scale @loss_scaler.scale, @loss_scaler.growth_tracker, @loss_scaler.found_inf growth 2.0 backoff 5.0e-01 interval 2000
  return
}
