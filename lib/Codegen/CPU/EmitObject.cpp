//===- EmitObject.cpp - LLVM dialect module -> object file ----------------===//

#include "traincc/Codegen/CPU/EmitObject.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <chrono>
#include <optional>

using namespace mlir;
using traincc::ObjectOptions;

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

/// Wall time of each pass and analysis, less that of the passes nested in
/// it (LLVM's -time-passes keeps global timers, which threads would share).
class PassClock {
public:
  explicit PassClock(llvm::StringMap<double> &seconds) : seconds_(seconds) {}

  void attach(llvm::PassInstrumentationCallbacks &callbacks) {
    callbacks.registerBeforeNonSkippedPassCallback(
        [this](llvm::StringRef pass, llvm::Any) { start(pass); });
    callbacks.registerAfterPassCallback(
        [this](llvm::StringRef pass, llvm::Any,
               const llvm::PreservedAnalyses &) { stop(); });
    callbacks.registerAfterPassInvalidatedCallback(
        [this](llvm::StringRef pass, const llvm::PreservedAnalyses &) {
          stop();
        });
    callbacks.registerBeforeAnalysisCallback(
        [this](llvm::StringRef analysis, llvm::Any) {
          start(("(A) " + analysis).str());
        });
    callbacks.registerAfterAnalysisCallback(
        [this](llvm::StringRef, llvm::Any) { stop(); });
  }

private:
  struct Running {
    std::string name;
    std::chrono::steady_clock::time_point start;
    double nestedSeconds = 0;
  };
  void start(llvm::StringRef name) {
    running_.push_back({name.str(), std::chrono::steady_clock::now(), 0});
  }
  void stop() {
    if (running_.empty())
      return;
    Running done = running_.pop_back_val();
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - done.start)
                         .count();
    seconds_[done.name] += seconds - done.nestedSeconds;
    if (!running_.empty())
      running_.back().nestedSeconds += seconds;
  }

  llvm::StringMap<double> &seconds_;
  llvm::SmallVector<Running> running_;
};

/// Runs LLVM's standard module pipeline of `level`; with `passSeconds`,
/// times each pass.
void optimize(llvm::Module &module, llvm::TargetMachine &machine,
              llvm::OptimizationLevel level,
              llvm::StringMap<double> *passSeconds) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgsccs;
  llvm::ModuleAnalysisManager modules;
  llvm::PipelineTuningOptions tuning;
  // The kernels arrive tiled and vectorized, their register tiles already
  // unrolled (traincc-vectorize-contractions). LLVM's unroller would also
  // unroll loops with large constant trip counts completely (a fill of
  // 24 x 3136 floats became 4,704 stores): code and compile time for no
  // speed.
  // Step times of the example CNN and a CIFAR ResNet-18 do not change.
  tuning.LoopUnrolling = false;
  llvm::PassInstrumentationCallbacks callbacks;
  std::optional<PassClock> clock;
  if (passSeconds) {
    clock.emplace(*passSeconds);
    clock->attach(callbacks);
  }
  llvm::PassBuilder builder(&machine, tuning, std::nullopt,
                            passSeconds ? &callbacks : nullptr);
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

namespace {

/// The host's target machine for `options`, or an error on `module`.
FailureOr<std::unique_ptr<llvm::TargetMachine>>
createHostMachine(ModuleOp module, const ObjectOptions &options) {
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
  return machine;
}

/// Registers the translations to LLVM IR and initialises the host target.
void prepareTranslation(ModuleOp module) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  module->getContext()->appendDialectRegistry(registry);
}

/// A weak, hidden `__truncsfbf2` (f32 -> bf16, round to nearest even, NaN
/// kept quiet) in every object. traincc-expand-bf16-conversions leaves no
/// conversion in the IR, but an x86 CPU without AVX512-BF16 (AMD Zen 3,
/// say) holds bf16 selects, phis and vector lanes in f32 registers and the
/// backend rounds them back with this libcall, which GCC 12's libgcc
/// lacks. Those values are bf16 already, so any correct rounding will do.
void addBF16TruncationLibcall(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  auto *type = llvm::FunctionType::get(llvm::Type::getBFloatTy(context),
                                       {llvm::Type::getFloatTy(context)},
                                       /*isVarArg=*/false);
  llvm::Function *function = module.getFunction("__truncsfbf2");
  if (function && !function->isDeclaration())
    return;
  if (!function)
    function = llvm::Function::Create(type, llvm::GlobalValue::WeakAnyLinkage,
                                      "__truncsfbf2", module);
  function->setLinkage(llvm::GlobalValue::WeakAnyLinkage);
  function->setVisibility(llvm::GlobalValue::HiddenVisibility);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", function));
  llvm::Value *value = function->getArg(0);
  llvm::Value *bits = b.CreateBitCast(value, b.getInt32Ty());
  llvm::Value *lsb = b.CreateAnd(b.CreateLShr(bits, 16), 1);
  llvm::Value *rounded =
      b.CreateLShr(b.CreateAdd(bits, b.CreateAdd(lsb, b.getInt32(0x7fff))), 16);
  llvm::Value *quietNaN = b.CreateOr(b.CreateLShr(bits, 16), 0x40);
  llvm::Value *isNaN = b.CreateFCmpUNO(value, value);
  llvm::Value *result =
      b.CreateTrunc(b.CreateSelect(isNaN, quietNaN, rounded), b.getInt16Ty());
  b.CreateRet(b.CreateBitCast(result, b.getBFloatTy()));
}

/// Optimises `llvmModule` and writes it as LLVM IR text or an object file.
/// False if the target cannot emit objects.
bool compileModule(llvm::Module &llvmModule, llvm::TargetMachine &machine,
                   const ObjectOptions &options, bool emitIR,
                   llvm::raw_pwrite_stream &os,
                   traincc::ObjectPartTiming *timing = nullptr) {
  auto start = std::chrono::steady_clock::now();
  auto secondsSince = [](auto since) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         since)
        .count();
  };
  llvmModule.setTargetTriple(machine.getTargetTriple());
  llvmModule.setDataLayout(machine.createDataLayout());
  optimize(llvmModule, machine, optimizationLevel(options.optLevel),
           timing ? &timing->passSeconds : nullptr);
  if (timing) {
    timing->optimizeSeconds = secondsSince(start);
    start = std::chrono::steady_clock::now();
  }
  if (emitIR) {
    llvmModule.print(os, nullptr);
    return true;
  }
  llvm::legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return false;
  codegen.run(llvmModule);
  if (timing)
    timing->codegenSeconds = secondsSince(start);
  return true;
}

/// Splits `module`'s function definitions into at most `parts` modules of
/// about equal size (operations counted), largest first onto the lightest
/// part. A function with internal linkage that one function alone calls
/// (a parallel body, called by its thunk) goes with that function, so LLVM
/// can still inline it; the other definitions get external linkage, hidden,
/// and each part declares the functions the others define. Returns one
/// module when the module holds anything but functions and constant
/// globals (nothing to split safely).
SmallVector<OwningOpRef<ModuleOp>> splitByFunction(ModuleOp module,
                                                   unsigned parts) {
  SmallVector<LLVM::LLVMFuncOp> definitions;
  bool splittable = true;
  for (Operation &op : module.getBody()->getOperations()) {
    if (auto func = dyn_cast<LLVM::LLVMFuncOp>(op)) {
      if (!func.isExternal())
        definitions.push_back(func);
    } else if (auto global = dyn_cast<LLVM::GlobalOp>(op)) {
      splittable &= global.getConstant();
    } else {
      splittable = false;
    }
  }
  SmallVector<OwningOpRef<ModuleOp>> modules;
  if (!splittable || std::min<size_t>(parts, definitions.size()) <= 1) {
    modules.push_back(OwningOpRef<ModuleOp>(module.clone()));
    return modules;
  }

  // Who refers to each internal function; those with one referrer follow
  // it (`owner`).
  SymbolTable symbols(module);
  DenseMap<Operation *, SmallPtrSet<Operation *, 2>> referrers;
  for (LLVM::LLVMFuncOp func : definitions)
    if (std::optional<SymbolTable::UseRange> uses =
            SymbolTable::getSymbolUses(&func.getBody()))
      for (const SymbolTable::SymbolUse &use : *uses) {
        auto callee = dyn_cast_or_null<LLVM::LLVMFuncOp>(
            symbols.lookup(use.getSymbolRef().getRootReference()));
        if (callee && callee != func && !callee.isExternal() &&
            callee.getLinkage() == LLVM::Linkage::Internal)
          referrers[callee].insert(func);
      }
  // A function whose address is taken (a thunk handed to the thread pool)
  // is never inlined: it need not follow its referrer.
  DenseSet<Operation *> addressTaken;
  module.walk([&](LLVM::AddressOfOp address) {
    if (Operation *target = symbols.lookup(address.getGlobalName()))
      addressTaken.insert(target);
  });
  DenseMap<Operation *, Operation *> owner;
  for (auto &[callee, from] : referrers)
    if (from.size() == 1 && !addressTaken.contains(callee))
      owner[callee] = *from.begin();
  auto root = [&](Operation *func) {
    // Chains are short (body <- thunk); the bound guards against cycles.
    for (size_t steps = 0; owner.count(func) && steps <= owner.size(); ++steps)
      func = owner.lookup(func);
    return func;
  };

  DenseMap<Operation *, int64_t> groupSize;
  for (LLVM::LLVMFuncOp func : definitions) {
    int64_t size = 0;
    func.walk([&](Operation *) { ++size; });
    groupSize[root(func)] += size;
  }
  SmallVector<std::pair<int64_t, Operation *>> bySize;
  for (LLVM::LLVMFuncOp func : definitions)
    if (root(func) == func.getOperation())
      bySize.push_back({groupSize[func], func});
  llvm::stable_sort(bySize, [](const auto &a, const auto &b) {
    return a.first > b.first;
  });
  parts = std::min<unsigned>(parts, bySize.size());
  SmallVector<int64_t> load(parts, 0);
  DenseMap<Operation *, unsigned> partOf;
  for (auto [size, func] : bySize) {
    unsigned lightest =
        std::min_element(load.begin(), load.end()) - load.begin();
    load[lightest] += size;
    partOf[func] = lightest;
  }

  for (unsigned part = 0; part < parts; ++part) {
    OpBuilder builder(module.getContext());
    OwningOpRef<ModuleOp> partModule(ModuleOp::create(module.getLoc()));
    (*partModule)->setAttrs(module->getAttrs());
    builder.setInsertionPointToEnd(partModule->getBody());
    for (Operation &op : module.getBody()->getOperations()) {
      auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
      if (!func || func.isExternal()) {
        builder.clone(op);
        continue;
      }
      Operation *groupRoot = root(func);
      if (partOf.lookup(groupRoot) == part) {
        auto copy = cast<LLVM::LLVMFuncOp>(builder.clone(op));
        // Roots may be referred to from other parts.
        if (groupRoot == func.getOperation() &&
            copy.getLinkage() != LLVM::Linkage::External) {
          copy.setLinkage(LLVM::Linkage::External);
          copy.setVisibility_(LLVM::Visibility::Hidden);
        }
        continue;
      }
      if (groupRoot != func.getOperation())
        continue; // Only its own group's root refers to it.
      auto declaration =
          cast<LLVM::LLVMFuncOp>(builder.cloneWithoutRegions(op));
      declaration.setLinkage(LLVM::Linkage::External);
      declaration.setVisibility_(LLVM::Visibility::Default);
    }
    modules.push_back(std::move(partModule));
  }
  return modules;
}

} // namespace

LogicalResult traincc::emitHostCode(ModuleOp module,
                                    const ObjectOptions &options, bool emitIR,
                                    llvm::raw_pwrite_stream &os) {
  prepareTranslation(module);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "traincc-kernels");
  if (!llvmModule)
    return module.emitError("translation to LLVM IR failed");
  addBF16TruncationLibcall(*llvmModule);
  FailureOr<std::unique_ptr<llvm::TargetMachine>> machine =
      createHostMachine(module, options);
  if (failed(machine))
    return failure();
  if (!compileModule(*llvmModule, **machine, options, emitIR, os))
    return module.emitError("the LLVM target cannot emit object files");
  return success();
}

LogicalResult
traincc::emitHostObjects(ModuleOp module, const ObjectOptions &options,
                         StringRef directory,
                         SmallVectorImpl<std::string> &objects,
                         SmallVectorImpl<ObjectPartTiming> *timings) {
  prepareTranslation(module);
  unsigned jobs = options.jobs ? options.jobs
                               : llvm::hardware_concurrency().compute_thread_count();
  // Four parts per thread: a part's cost follows its size only roughly,
  // and a thread that finishes early takes the next part.
  SmallVector<OwningOpRef<ModuleOp>> parts =
      splitByFunction(module, jobs == 1 ? 1 : 4 * jobs);

  // Translation reads the MLIR context: one part after the other. Each
  // part then owns its LLVM context, so the rest runs in parallel.
  struct Part {
    std::unique_ptr<llvm::LLVMContext> context;
    std::unique_ptr<llvm::Module> module;
    std::unique_ptr<llvm::TargetMachine> machine;
    std::string path;
    bool emitted = false;
    ObjectPartTiming timing;
  };
  SmallVector<Part> compiled(parts.size());
  for (auto [index, part] : llvm::enumerate(parts)) {
    Part &out = compiled[index];
    for (auto func : part->getOps<LLVM::LLVMFuncOp>())
      out.timing.functions += !func.isExternal();
    out.context = std::make_unique<llvm::LLVMContext>();
    out.module = translateModuleToLLVMIR(*part, *out.context,
                                         "traincc-kernels-" + Twine(index).str());
    if (!out.module)
      return module.emitError("translation to LLVM IR failed");
    addBF16TruncationLibcall(*out.module);
    part = nullptr;
    FailureOr<std::unique_ptr<llvm::TargetMachine>> machine =
        createHostMachine(module, options);
    if (failed(machine))
      return failure();
    out.machine = std::move(*machine);
    SmallString<128> path(directory);
    llvm::sys::path::append(path, "kernels-" + Twine(index) + ".o");
    out.path = std::string(path);
  }

  llvm::DefaultThreadPool pool(llvm::hardware_concurrency(jobs));
  for (Part &part : compiled)
    pool.async([&part, &options] {
      std::error_code error;
      llvm::raw_fd_ostream os(part.path, error);
      part.emitted = !error && compileModule(*part.module, *part.machine,
                                             options, false, os, &part.timing);
      part.module.reset();
    });
  pool.wait();
  for (Part &part : compiled) {
    if (!part.emitted)
      return module.emitError("cannot emit the object file '")
             << part.path << "'";
    objects.push_back(part.path);
    if (timings)
      timings->push_back(part.timing);
  }
  return success();
}
