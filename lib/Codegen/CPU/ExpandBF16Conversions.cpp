//===- ExpandBF16Conversions.cpp - bf16 conversions as integer code -------===//
//
// Only upstream's bf16 patterns, not the whole `arith-expand` pass, which
// would also rewrite maximumf/minimumf and so change the f32 kernels.
//
//===----------------------------------------------------------------------===//

#include "traincc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace traincc {
#define GEN_PASS_DEF_EXPANDBF16CONVERSIONSPASS
#include "traincc/Codegen/CPU/Passes.h.inc"
} // namespace traincc

using namespace mlir;

namespace {

struct ExpandBF16ConversionsPass
    : public traincc::impl::ExpandBF16ConversionsPassBase<
          ExpandBF16ConversionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
