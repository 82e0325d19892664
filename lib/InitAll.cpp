//===- InitAll.cpp - dialects and passes traincc uses ---------------------===//
//
// One place that knows every dialect, interface model and pass of traincc:
// `traincc` registers the dialects, `traincc-opt` both, so that any stage of
// a compile can be replayed on MLIR text.
//
//===----------------------------------------------------------------------===//

#include "traincc/InitAll.h"

#include "traincc/Codegen/CPU/Passes.h"
#include "traincc/Codegen/Common/Passes.h"
#include "traincc/Codegen/GPU/Passes.h"
#include "traincc/Codegen/GPUEmulation/Passes.h"
#include "traincc/Codegen/TrainToLinalg/Passes.h"
#include "traincc/Dialect/Train/IR/TrainDialect.h"
#include "traincc/Import/Passes.h"
#include "traincc/Pipelines/Pipelines.h"
#include "traincc/Transforms/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/TilingInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void traincc::registerAllDialects(DialectRegistry &registry) {
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  // convert-gpu-to-nvvm lowers the kernels' other dialects through these.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  index::registerConvertIndexToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  registerBuiltinDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  registry.insert<train::TrainDialect, func::FuncDialect, arith::ArithDialect,
                  linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect, bufferization::BufferizationDialect,
                  memref::MemRefDialect, scf::SCFDialect,
                  LLVM::LLVMDialect>();
  // Bufferization of the step functions' linalg/tensor/arith ops and of
  // function boundaries.
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  // Splitting kernels across threads tiles them through TilingInterface.
  linalg::registerTilingInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
}

void traincc::registerAllPasses() {
  registerTrainccImportPasses();
  registerTrainccTransformsPasses();
  registerTrainccCodegenTrainToLinalgPasses();
  registerTrainccCodegenCommonPasses();
  registerTrainccCodegenCPUPasses();
  registerTrainccCodegenGPUPasses();
  registerTrainccCodegenGPUEmulationPasses();
  registerCanonicalizerPass();
  registerCSEPass();
  registerSymbolDCEPass();
  registerPipelines();
}
