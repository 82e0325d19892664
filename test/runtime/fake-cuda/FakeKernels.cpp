//===- FakeKernels.cpp - CPU "kernels" of the fake CUDA driver ------------===//
//
// The kernels of the test model's GPU program (test/runtime/TestModelGpu.inc),
// computed exactly as its CPU step functions compute them (TestModelMath.h).
//
//===----------------------------------------------------------------------===//

#include "FakeKernels.h"

#include "../TestModelMath.h"

namespace fakecuda {

namespace {

void bnForward(const KernelArgs &a) {
  testmodel::bnForward(a.ptr<const float>(0), a.ptr<float>(1),
                       a.ptr<float>(2), a.ptr<const float>(3),
                       a.ptr<const float>(4), a.ptr<float>(5), a.ptr<float>(6),
                       a.i64(7), a.i64(8) != 0);
}

void forward(const KernelArgs &a) {
  for (int64_t r = 0, rows = a.i64(4); r < rows; ++r)
    testmodel::forwardRow(a.ptr<const float>(0), a.ptr<const float>(1),
                          a.ptr<const float>(2), a.ptr<float>(3), r, a.i64(5),
                          a.i64(6));
}

void lossGrad(const KernelArgs &a) {
  *a.ptr<float>(3) = testmodel::lossAndGradient(
      a.ptr<const float>(0), a.ptr<const void>(1), a.ptr<float>(2), a.i64(4),
      a.i64(5), a.i64(6) != 0);
}

void weightGrad(const KernelArgs &a) {
  float scale = *a.ptr<const float>(4); // in the parameter block
  for (int64_t k = 0, classes = a.i64(6); k < classes; ++k)
    testmodel::weightGradientClass(a.ptr<const float>(0),
                                   a.ptr<const float>(1), a.ptr<float>(2),
                                   a.ptr<float>(3), scale, k, a.i64(5),
                                   classes, a.i64(7));
}

void bnBackward(const KernelArgs &a) {
  testmodel::bnBackward(a.ptr<const float>(0), a.ptr<const float>(1),
                        a.ptr<const float>(2), a.ptr<float>(3),
                        a.ptr<float>(4), *a.ptr<const float>(5), a.i64(6),
                        a.i64(7), a.i64(8));
}

void sgd(const KernelArgs &a) {
  testmodel::sgdUpdate(a.ptr<float>(0), a.ptr<float>(1), a.ptr<float>(2),
                       a.i64(4), *a.ptr<const float>(3), a.f32(5), a.f32(6));
}

void evalLoss(const KernelArgs &a) {
  float *losses = a.ptr<float>(2);
  for (int64_t r = 0, rows = a.i64(3); r < rows; ++r)
    losses[r] = testmodel::rowLoss(a.ptr<const float>(0), a.ptr<const void>(1),
                                   r, nullptr, a.i64(4), a.i64(5) != 0);
}

const KernelDef kKernels[] = {
    {"tm_bn_forward", "pppppppii", bnForward},
    {"tm_forward", "ppppiii", forward},
    {"tm_loss_grad", "ppppiii", lossGrad},
    {"tm_weight_grad", "pppppiii", weightGrad},
    {"tm_bn_backward", "ppppppiii", bnBackward},
    {"tm_sgd", "ppppiff", sgd},
    {"tm_eval_loss", "pppiii", evalLoss},
};

} // namespace

const KernelDef *findKernel(const char *name) {
  for (const KernelDef &k : kKernels)
    if (std::strcmp(k.name, name) == 0)
      return &k;
  return nullptr;
}

} // namespace fakecuda
