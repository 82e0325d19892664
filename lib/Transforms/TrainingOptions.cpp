//===- TrainingOptions.cpp - options resolved from other options ----------===//

#include "traincc/Transforms/TrainingOptions.h"

#include "llvm/ADT/StringExtras.h"

#include <cmath>

using namespace traincc;

std::variant<TrainingOptions::LossScale, std::string>
TrainingOptions::getLossScale() const {
  LossScale scale;
  if (lossScale.empty()) {
    scale.mode = precision == Precision::FP16 ? LossScaleMode::Dynamic
                                              : LossScaleMode::None;
  } else if (lossScale == "dynamic") {
    scale.mode = LossScaleMode::Dynamic;
  } else if (lossScale == "none") {
    scale.mode = LossScaleMode::None;
  } else {
    double value;
    if (llvm::StringRef(lossScale).getAsDouble(value) || !std::isfinite(value))
      return "--loss-scale must be dynamic, none or a number, got '" +
             lossScale + "'";
    if (!(value > 0.0))
      return "--loss-scale must be positive, got " + lossScale;
    scale.mode = LossScaleMode::Static;
    scale.value = value;
  }
  if (scale.mode != LossScaleMode::None && precision == Precision::FP32)
    return "--loss-scale " + lossScale +
           " needs --precision fp16 or bf16: fp32 gradients do not underflow";
  if (scale.mode == LossScaleMode::Dynamic) {
    if (!(lossScaleInit > 0.0) || !std::isfinite(lossScaleInit) ||
        lossScaleInit > 3.4028234663852886e38)
      return "--loss-scale-init must be a positive f32 number, got " +
             std::to_string(lossScaleInit);
    if (lossScaleGrowthInterval < 1)
      return "--loss-scale-growth-interval must be positive, got " +
             std::to_string(lossScaleGrowthInterval);
  }
  return scale;
}
