//===- Monitors.cpp - What the log reports about the state arena ----------===//

#include "traincc/runtime/loop/Monitors.h"

#include "traincc/runtime/support/HalfFloat.h"
#include "traincc/runtime/support/Model.h"

#include <cmath>
#include <cstring>

namespace traincc::rt {

namespace {

int64_t elementCount(const traincc_state_tensor &t) {
  int64_t size = abiDtypeSize(t.dtype);
  return size > 0 ? int64_t(t.bytes) / size : 0;
}

/// Element `i` of a state tensor as a double (float types only).
double elementAt(const traincc_state_tensor &t, const uint8_t *data,
                 int64_t i) {
  return loadElement(data, t.dtype, i);
}

bool isFloat(int32_t dtype) {
  return dtype == TRAINCC_DTYPE_F32 || dtype == TRAINCC_DTYPE_F64 ||
         dtype == TRAINCC_DTYPE_F16 || dtype == TRAINCC_DTYPE_BF16;
}

} // namespace

double gradientNorm(const traincc_model &model, const uint8_t *arena) {
  double sum = 0;
  for (int32_t s = 0; s < model.num_state; ++s) {
    const traincc_state_tensor &t = model.state[s];
    if (t.kind != TRAINCC_STATE_GRADIENT || !isFloat(t.dtype))
      continue;
    const uint8_t *data = arena + t.offset;
    if (t.dtype == TRAINCC_DTYPE_F32) {
      // The common case without the per-element switch.
      const float *values = reinterpret_cast<const float *>(data);
      for (int64_t i = 0, e = elementCount(t); i < e; ++i)
        sum += double(values[i]) * double(values[i]);
      continue;
    }
    for (int64_t i = 0, e = elementCount(t); i < e; ++i) {
      double v = elementAt(t, data, i);
      sum += v * v;
    }
  }
  return std::sqrt(sum);
}

Error checkGradientsClippable(const traincc_model &model) {
  for (int32_t s = 0; s < model.num_state; ++s) {
    const traincc_state_tensor &t = model.state[s];
    if (t.kind == TRAINCC_STATE_GRADIENT && t.dtype != TRAINCC_DTYPE_F32 &&
        t.dtype != TRAINCC_DTYPE_F64)
      return makeError("--grad-clip-norm: gradient tensor '", t.name, "' is ",
                       abiDtypeName(t.dtype),
                       "; only float32 and float64 gradients can be clipped");
  }
  return Error::success();
}

double clipGradients(const traincc_model &model, uint8_t *arena, double norm,
                     double maxNorm) {
  double factor = maxNorm / (norm + 1e-6);
  // NaN norms are left alone, as torch leaves them (the loss check or the
  // loss scaler deals with them).
  if (!(factor < 1))
    return 1;
  for (int32_t s = 0; s < model.num_state; ++s) {
    const traincc_state_tensor &t = model.state[s];
    if (t.kind != TRAINCC_STATE_GRADIENT)
      continue;
    if (t.dtype == TRAINCC_DTYPE_F32) {
      float *values = reinterpret_cast<float *>(arena + t.offset);
      const float f = float(factor);
      for (int64_t i = 0, e = elementCount(t); i < e; ++i)
        values[i] *= f;
    } else if (t.dtype == TRAINCC_DTYPE_F64) {
      double *values = reinterpret_cast<double *>(arena + t.offset);
      for (int64_t i = 0, e = elementCount(t); i < e; ++i)
        values[i] *= factor;
    }
  }
  return factor;
}

std::vector<uint8_t> snapshotTrainable(const traincc_model &model,
                                       const uint8_t *arena) {
  // Reserved: growing by doubling would hold up to twice the parameters.
  size_t bytes = 0;
  for (int32_t s = 0; s < model.num_state; ++s)
    if (model.state[s].kind == TRAINCC_STATE_TRAINABLE)
      bytes += size_t(model.state[s].bytes);
  std::vector<uint8_t> out;
  out.reserve(bytes);
  for (int32_t s = 0; s < model.num_state; ++s) {
    const traincc_state_tensor &t = model.state[s];
    if (t.kind == TRAINCC_STATE_TRAINABLE)
      out.insert(out.end(), arena + t.offset, arena + t.offset + t.bytes);
  }
  return out;
}

std::vector<std::pair<std::string, double>>
parameterChange(const traincc_model &model, const uint8_t *arena,
                const std::vector<uint8_t> &snapshot) {
  std::vector<std::pair<std::string, double>> out;
  uint64_t position = 0;
  for (int32_t s = 0; s < model.num_state; ++s) {
    const traincc_state_tensor &t = model.state[s];
    if (t.kind != TRAINCC_STATE_TRAINABLE)
      continue;
    double sum = 0;
    if (position + t.bytes <= snapshot.size() && isFloat(t.dtype)) {
      const uint8_t *before = snapshot.data() + position;
      const uint8_t *now = arena + t.offset;
      for (int64_t i = 0, e = elementCount(t); i < e; ++i) {
        double d = elementAt(t, now, i) - elementAt(t, before, i);
        sum += d * d;
      }
    }
    position += t.bytes;
    out.emplace_back(t.name ? t.name : "", std::sqrt(sum));
  }
  return out;
}

std::vector<TensorSummary> runningStatSummaries(const traincc_model &model,
                                                const uint8_t *arena) {
  std::vector<TensorSummary> out;
  for (int32_t s = 0; s < model.num_state; ++s) {
    const traincc_state_tensor &t = model.state[s];
    if ((t.kind != TRAINCC_STATE_RUNNING_MEAN &&
         t.kind != TRAINCC_STATE_RUNNING_VAR) ||
        !isFloat(t.dtype))
      continue;
    TensorSummary summary;
    summary.name = t.name ? t.name : "";
    int64_t count = elementCount(t);
    double sum = 0;
    for (int64_t i = 0; i < count; ++i) {
      double v = elementAt(t, arena + t.offset, i);
      sum += v;
      summary.maxAbs = std::fmax(summary.maxAbs, std::fabs(v));
      if (std::isnan(v))
        summary.maxAbs = v;
    }
    summary.mean = count ? sum / double(count) : 0;
    out.push_back(summary);
  }
  return out;
}

} // namespace traincc::rt
