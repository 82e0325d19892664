//===- TrainingOptions.h - how a trainer trains -----------------*- C++ -*-===//
//
// The compile-time training options, defined once: the enumerations below
// with their spellings, and TrainingOptions.def with every option's type,
// flag, default and help. `traincc`'s flags, the training pipeline's
// options, the passes' enumerated options and the trainer's generated
// defaults are all built from these two lists, and the spellings are parsed
// only here (symbolizeEnum), so no other code compares option strings.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_TRANSFORMS_TRAININGOPTIONS_H
#define TRAINCC_TRANSFORMS_TRAININGOPTIONS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace traincc {

// Each list is X(ENUMERATOR, "spelling"), in the order --help shows them.
#define TRAINCC_LOSS_KINDS(X)                                                  \
  X(Auto, "auto")                                                              \
  X(CrossEntropy, "cross-entropy")                                             \
  X(MSE, "mse")                                                                \
  X(Output, "output")
#define TRAINCC_OPTIMIZER_KINDS(X)                                             \
  X(SGD, "sgd")                                                                \
  X(Adam, "adam")                                                              \
  X(AdamW, "adamw")
#define TRAINCC_BN_STATS_MODES(X)                                              \
  X(Micro, "micro")                                                            \
  X(Step, "step")
#define TRAINCC_PRECISIONS(X)                                                  \
  X(FP32, "fp32")                                                              \
  X(FP16, "fp16")                                                              \
  X(BF16, "bf16")
#define TRAINCC_LOSS_SCALE_MODES(X)                                            \
  X(None, "none")                                                              \
  X(Dynamic, "dynamic")                                                        \
  X(Static, "static")

/// Spellings of an enumeration: `all` pairs each value with its name.
template <typename E>
struct EnumSpellings;

#define TRAINCC_ENUMERATOR_(NAME, SPELLING) NAME,
#define TRAINCC_SPELLING_(NAME, SPELLING) {E::NAME, SPELLING},
#define TRAINCC_DEFINE_ENUM_(ENUM, LIST)                                       \
  enum class ENUM { LIST(TRAINCC_ENUMERATOR_) };                               \
  template <>                                                                  \
  struct EnumSpellings<ENUM> {                                                 \
    using E = ENUM;                                                            \
    static constexpr std::pair<E, llvm::StringLiteral> all[] = {               \
        LIST(TRAINCC_SPELLING_)};                                              \
  };

/// The loss appended to the model (`auto` is resolved by the AppendLoss
/// pass from the model's output).
TRAINCC_DEFINE_ENUM_(LossKind, TRAINCC_LOSS_KINDS)
/// The optimizer of @apply_step (torch.optim semantics).
TRAINCC_DEFINE_ENUM_(OptimizerKind, TRAINCC_OPTIMIZER_KINDS)
/// When BatchNorm running statistics are updated: every micro-batch
/// (PyTorch) or once per optimizer step from the pooled statistics.
TRAINCC_DEFINE_ENUM_(BNStatsMode, TRAINCC_BN_STATS_MODES)
/// The type contractions and most elementwise ops compute in (mixed
/// precision keeps fp32 master weights, BatchNorm, softmax and the loss).
TRAINCC_DEFINE_ENUM_(Precision, TRAINCC_PRECISIONS)
/// Loss scaling: none, GradScaler's dynamic scale, or a fixed scale (steps
/// with inf/NaN gradients are skipped either way).
TRAINCC_DEFINE_ENUM_(LossScaleMode, TRAINCC_LOSS_SCALE_MODES)

#undef TRAINCC_DEFINE_ENUM_
#undef TRAINCC_SPELLING_
#undef TRAINCC_ENUMERATOR_

/// The spelling of `value` ("cross-entropy", "adamw", ...).
template <typename E>
llvm::StringRef stringifyEnum(E value) {
  for (const auto &[candidate, name] : EnumSpellings<E>::all)
    if (candidate == value)
      return name;
  return "";
}

/// The value spelled `name`, or none.
template <typename E>
std::optional<E> symbolizeEnum(llvm::StringRef name) {
  for (const auto &[value, spelling] : EnumSpellings<E>::all)
    if (spelling == name)
      return value;
  return std::nullopt;
}

/// "a, b or c": the spellings, for error messages.
template <typename E>
std::string enumSpellingList() {
  std::string list;
  llvm::ArrayRef spellings(EnumSpellings<E>::all);
  for (auto [index, entry] : llvm::enumerate(spellings)) {
    if (index)
      list += index + 1 == spellings.size() ? " or " : ", ";
    list += entry.second.str();
  }
  return list;
}

/// The values of an enumerated option for llvm::cl, as a modifier of the
/// option (pass and pipeline options: `-traincc-build-optimizer=
/// optimizer=adamw`).
template <typename E>
struct EnumClValues {
  template <class Opt>
  void apply(Opt &option) const {
    for (const auto &[value, spelling] : EnumSpellings<E>::all)
      option.getParser().addLiteralOption(spelling, value, spelling);
  }
};

/// An llvm::cl modifier that does nothing (see clValuesOf).
struct NoClModifier {
  template <class Opt>
  void apply(Opt &) const {}
};

/// The llvm::cl values of an option of type T: its spellings when T is an
/// enumeration, nothing otherwise.
template <typename T>
auto clValuesOf() {
  if constexpr (std::is_enum_v<T>)
    return EnumClValues<T>();
  else
    return NoClModifier();
}

/// The type an option of type T has on a command line or in a pipeline
/// option: T itself, or V for an option that may stay unset
/// (std::optional<V>: it is unset when the flag is not given).
template <typename T>
struct OptionValue {
  using type = T;
};
template <typename V>
struct OptionValue<std::optional<V>> {
  using type = V;
};
template <typename T>
using OptionValueType = typename OptionValue<T>::type;

/// The initial value of the command-line or pipeline option of a field of
/// type T that defaults to `value` (a value-initialised V when unset).
template <typename T>
OptionValueType<T> optionInitialValue(const T &value) {
  if constexpr (std::is_same_v<T, OptionValueType<T>>)
    return value;
  else
    return value.value_or(OptionValueType<T>());
}

/// The field of type T an option gives: an unset-able field stays unset
/// when the option was not given.
template <typename T>
T fieldFromOption(const OptionValueType<T> &value, bool given) {
  if constexpr (std::is_same_v<T, OptionValueType<T>>)
    return value;
  else
    return given ? T(value) : T();
}

/// How the trainer trains (the compile-time options of docs/ARCHITECTURE.md,
/// "Command-line contracts"), one field per entry of TrainingOptions.def.
struct TrainingOptions {
#define TRAINING_OPTION(TYPE, FIELD, FLAG, DEFAULT, VALUE_NAME, HELP)          \
  TYPE FIELD = DEFAULT;
#include "traincc/Transforms/TrainingOptions.def"

  /// PyTorch's weight decay for `optimizer`: torch.optim.AdamW's 0.01,
  /// SGD's and Adam's 0.
  static double defaultWeightDecay(OptimizerKind optimizer) {
    return optimizer == OptimizerKind::AdamW ? 0.01 : 0.0;
  }
  /// The weight decay this compile uses: --weight-decay, or the optimizer's
  /// default. The one place an unset weight decay is resolved.
  double getWeightDecay() const {
    return weightDecay.value_or(defaultWeightDecay(optimizer));
  }

  /// --loss-scale resolved: the mode, and for a fixed scale its value.
  struct LossScale {
    LossScaleMode mode = LossScaleMode::None;
    double value = 0.0;
  };
  /// The loss scaling this compile uses: --loss-scale (dynamic, none or a
  /// positive number), else dynamic for fp16 and none otherwise. An error
  /// message for a bad value or a bad combination (loss scaling with fp32).
  std::variant<LossScale, std::string> getLossScale() const;
};

} // namespace traincc

#endif // TRAINCC_TRANSFORMS_TRAININGOPTIONS_H
