//===- TestModelMath.h - The test model's arithmetic ------------*- C++ -*-===//
//
// The computations of the hand-written test model (TestModel.cpp), shared
// by its CPU step functions and by the "kernels" of the fake CUDA driver
// (fake-cuda/FakeKernels.cpp), so that a run with --device cuda on the fake
// driver must give bit-identical losses and weights when the runtime
// marshals every launch argument right: any wrong offset, buffer, scalar or
// ordering changes the numbers.
//
// Sizes are parameters (the kernels receive them as immediates).
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_TEST_RUNTIME_TESTMODELMATH_H
#define TRAINCC_TEST_RUNTIME_TESTMODELMATH_H

#include <cmath>
#include <cstdint>

namespace testmodel {

constexpr float kBnEps = 1e-5f;

/// y = BN(x) over all n values (one channel), x-hat alongside. Training:
/// normalise with the biased batch variance and update the running
/// statistics (PyTorch momentum 0.1, unbiased running variance);
/// evaluation: use the running statistics.
inline void bnForward(const float *x, float *y, float *xhat,
                      const float *scale, const float *bias, float *runMean,
                      float *runVar, int64_t n, bool training) {
  float mean, var;
  if (training) {
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i)
      sum += x[i];
    mean = float(sum / n);
    for (int64_t i = 0; i < n; ++i)
      sq += double(x[i] - mean) * double(x[i] - mean);
    var = float(sq / n);
    *runMean = 0.9f * *runMean + 0.1f * mean;
    *runVar = 0.9f * *runVar + 0.1f * float(sq / (n - 1));
  } else {
    mean = *runMean;
    var = *runVar;
  }
  float invStd = 1.0f / std::sqrt(var + kBnEps);
  for (int64_t i = 0; i < n; ++i) {
    xhat[i] = (x[i] - mean) * invStd;
    y[i] = *scale * xhat[i] + *bias;
  }
}

/// logits[r] = y[r] W^T + b for row r.
inline void forwardRow(const float *y, const float *w, const float *b,
                       float *logits, int64_t r, int64_t classes,
                       int64_t pixels) {
  for (int64_t k = 0; k < classes; ++k) {
    double acc = b[k];
    for (int64_t j = 0; j < pixels; ++j)
      acc += double(y[r * pixels + j]) * w[k * pixels + j];
    logits[r * classes + k] = float(acc);
  }
}

/// Cross-entropy of one row of logits; `grad` (optional) gets softmax -
/// one-hot.
inline float crossEntropyRow(const float *logits, int64_t label, float *grad,
                             int64_t classes) {
  float maxLogit = logits[0];
  for (int64_t k = 1; k < classes; ++k)
    maxLogit = std::fmax(maxLogit, logits[k]);
  double sum = 0;
  for (int64_t k = 0; k < classes; ++k)
    sum += std::exp(double(logits[k] - maxLogit));
  if (grad)
    for (int64_t k = 0; k < classes; ++k)
      grad[k] = float(std::exp(double(logits[k] - maxLogit)) / sum) -
                (k == label ? 1.0f : 0.0f);
  return float(std::log(sum) + maxLogit - logits[label]);
}

/// Squared error of one row summed over its values; `grad` (optional)
/// gets 2 (logits - target).
inline float squaredErrorRow(const float *logits, const float *target,
                             float *grad, int64_t classes) {
  double sum = 0;
  for (int64_t k = 0; k < classes; ++k) {
    double diff = double(logits[k]) - target[k];
    sum += diff * diff;
    if (grad)
      grad[k] = float(2 * diff);
  }
  return float(sum);
}

/// The loss of row `r` and, optionally, its gradient with respect to that
/// row's logits. MSE: mean over the row's values.
inline float rowLoss(const float *logits, const void *target, int64_t r,
                     float *grad, int64_t classes, bool mse) {
  const float *row = logits + r * classes;
  if (mse) {
    const float *t = static_cast<const float *>(target) + r * classes;
    return squaredErrorRow(row, t, grad, classes) / float(classes);
  }
  return crossEntropyRow(row, static_cast<const int64_t *>(target)[r], grad,
                         classes);
}

/// The mean loss over `rows` rows and dlogits, the gradient of that mean
/// (cross-entropy averages over rows, MSE over all values).
inline float lossAndGradient(const float *logits, const void *target,
                             float *dlogits, int64_t rows, int64_t classes,
                             bool mse) {
  const float gradDivisor = mse ? float(rows * classes) : float(rows);
  double lossSum = 0;
  for (int64_t r = 0; r < rows; ++r) {
    lossSum += rowLoss(logits, target, r, dlogits + r * classes, classes, mse);
    for (int64_t k = 0; k < classes; ++k)
      dlogits[r * classes + k] /= gradDivisor;
  }
  return float(lossSum / rows);
}

/// Adds scale times the gradient of class k's weights and bias.
inline void weightGradientClass(const float *y, const float *dlogits,
                                float *gradW, float *gradB, float scale,
                                int64_t k, int64_t rows, int64_t classes,
                                int64_t pixels) {
  double gb = 0;
  for (int64_t r = 0; r < rows; ++r)
    gb += dlogits[r * classes + k];
  gradB[k] += scale * float(gb);
  for (int64_t j = 0; j < pixels; ++j) {
    double g = 0;
    for (int64_t r = 0; r < rows; ++r)
      g += double(dlogits[r * classes + k]) * y[r * pixels + j];
    gradW[k * pixels + j] += scale * float(g);
  }
}

/// BN's affine gradients: dy = dlogits W, then sums with x-hat.
inline void bnBackward(const float *dlogits, const float *w, const float *xhat,
                       float *gradScale, float *gradBias, float scale,
                       int64_t rows, int64_t classes, int64_t pixels) {
  double dScale = 0, dBias = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < pixels; ++j) {
      double dy = 0;
      for (int64_t k = 0; k < classes; ++k)
        dy += double(dlogits[r * classes + k]) * w[k * pixels + j];
      dScale += dy * xhat[r * pixels + j];
      dBias += dy;
    }
  *gradScale += scale * float(dScale);
  *gradBias += scale * float(dBias);
}

/// torch.optim.SGD(momentum, weight_decay, dampening=0) on n values; clears
/// the gradient.
inline void sgdUpdate(float *param, float *grad, float *buf, int64_t n,
                      float lr, float momentum, float weightDecay) {
  for (int64_t i = 0; i < n; ++i) {
    float g = grad[i] + weightDecay * param[i];
    buf[i] = momentum * buf[i] + g;
    param[i] -= lr * buf[i];
    grad[i] = 0;
  }
}

} // namespace testmodel

#endif // TRAINCC_TEST_RUNTIME_TESTMODELMATH_H
