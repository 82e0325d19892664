//===- EmitObject.cpp - LLVM dialect module -> object file ----------------===//

#include "traincc/Codegen/CPU/EmitObject.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

namespace {

/// LLVM's optimisation level for traincc's -O0 ... -O3.
llvm::OptimizationLevel optimizationLevel(unsigned level) {
  switch (level) {
  case 0:
    return llvm::OptimizationLevel::O0;
  case 1:
    return llvm::OptimizationLevel::O1;
  case 2:
    return llvm::OptimizationLevel::O2;
  default:
    return llvm::OptimizationLevel::O3;
  }
}

llvm::CodeGenOptLevel codeGenLevel(unsigned level) {
  switch (level) {
  case 0:
    return llvm::CodeGenOptLevel::None;
  case 1:
    return llvm::CodeGenOptLevel::Less;
  case 2:
    return llvm::CodeGenOptLevel::Default;
  default:
    return llvm::CodeGenOptLevel::Aggressive;
  }
}

/// Runs LLVM's standard module pipeline of `level`.
void optimize(llvm::Module &module, llvm::TargetMachine &machine,
              llvm::OptimizationLevel level) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgsccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgsccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgsccs, modules);
  llvm::ModulePassManager pipeline =
      level == llvm::OptimizationLevel::O0
          ? builder.buildO0DefaultPipeline(level)
          : builder.buildPerModuleDefaultPipeline(level);
  pipeline.run(module, modules);
}

} // namespace

/// The host target's subtarget for `cpu`, or null without a host target.
static std::unique_ptr<llvm::MCSubtargetInfo>
hostSubtarget(llvm::StringRef cpu) {
  llvm::InitializeNativeTarget();
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  return std::unique_ptr<llvm::MCSubtargetInfo>(
      target->createMCSubtargetInfo(triple, cpu, ""));
}

bool traincc::cpuHasFeature(llvm::StringRef cpu, llvm::StringRef feature) {
  if (cpu == "native") {
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    auto it = features.find(feature);
    return it != features.end() && it->second;
  }
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget = hostSubtarget(cpu);
  return subtarget && subtarget->isCPUStringValid(cpu) &&
         subtarget->checkFeatures(("+" + feature).str());
}

bool traincc::isKnownCPU(llvm::StringRef cpu) {
  if (cpu == "native")
    return true;
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget = hostSubtarget("");
  return !subtarget || subtarget->isCPUStringValid(cpu);
}

LogicalResult traincc::emitHostCode(ModuleOp module,
                                    const ObjectOptions &options, bool emitIR,
                                    llvm::raw_pwrite_stream &os) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "traincc-kernels");
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return module.emitError("no LLVM target for ")
           << triple.str() << ": " << error;
  std::string cpu = options.cpu == "native"
                        ? llvm::sys::getHostCPUName().str()
                        : options.cpu;
  std::string features;
  if (options.cpu == "native") {
    llvm::SubtargetFeatures hostFeatures;
    for (const auto &[name, enabled] : llvm::sys::getHostCPUFeatures())
      hostFeatures.AddFeature(name, enabled);
    features = hostFeatures.getString();
  }
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpu, features, targetOptions, llvm::Reloc::PIC_, std::nullopt,
      codeGenLevel(options.optLevel)));
  if (!machine)
    return module.emitError("cannot create an LLVM target machine for CPU '")
           << cpu << "'";
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  optimize(*llvmModule, *machine, optimizationLevel(options.optLevel));

  if (emitIR) {
    llvmModule->print(os, nullptr);
    return success();
  }
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return module.emitError("the LLVM target cannot emit object files");
  codegen.run(*llvmModule);
  return success();
}
