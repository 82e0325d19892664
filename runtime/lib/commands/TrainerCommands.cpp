//===- TrainerCommands.cpp - train, eval, predict, info -------------------===//

#include "traincc/runtime/commands/TrainerMain.h"

#include "traincc/runtime/data/DataSources.h"
#include "traincc/runtime/distributed/DataParallel.h"
#include "traincc/runtime/distributed/SyncBatchNorm.h"
#include "traincc/runtime/exec/Evaluate.h"
#include "traincc/runtime/exec/MemoryPlan.h"
#include "traincc/runtime/exec/ModelSession.h"
#include "traincc/runtime/exec/StepBackend.h"
#include "traincc/runtime/formats/Npy.h"
#include "traincc/runtime/formats/OnnxExport.h"
#include "traincc/runtime/loop/TrainLoop.h"
#include "traincc/runtime/loop/Weights.h"
#include "traincc/runtime/support/Signals.h"
#include "traincc/runtime/support/ThreadPool.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace traincc::rt {

namespace {

/// The shortest text that reads back as the same float ("0.9", not the
/// double 0.89999997615814209).
std::string formatFloat(float value) {
  char buffer[32];
  std::to_chars_result r = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, r.ptr);
}

int threadCount(const TrainerOptions &options) {
  return options.threads ? int(*options.threads) : defaultThreadCount();
}

/// The weights file the command line names, if any (Weights.h).
std::optional<WeightsFile> weightsFileOf(const TrainerOptions &options) {
  if (options.weightsPath)
    return WeightsFile{"--weights", *options.weightsPath, WeightsFormat::Onnx};
  if (options.checkpointPath)
    return WeightsFile{"--checkpoint", *options.checkpointPath,
                       WeightsFormat::Checkpoint};
  if (options.initFromPath)
    return WeightsFile{"--init-from", *options.initFromPath,
                       WeightsFormat::Either};
  return std::nullopt;
}

/// Opens the model on its device with the weights the command line names
/// (the compiled-in ones when it names none); `announce` as in
/// ModelSession::open, and it also hears where --init-from's weights came
/// from.
Expected<ModelSession> openWithWeights(const TrainerOptions &options,
                                       const ModelInfo &model,
                                       std::FILE *announce = nullptr) {
  Expected<ModelSession> session =
      ModelSession::open(model, options.device, announce);
  if (!session)
    return session;
  std::optional<WeightsFile> file = weightsFileOf(options);
  if (!file)
    return session;
  Expected<int64_t> loaded = loadWeights(model, session->backend(), *file);
  if (!loaded)
    return loaded.takeError();
  if (announce)
    std::fprintf(announce, "initialized from %s (%lld tensors)\n",
                 file->path.c_str(), static_cast<long long>(*loaded));
  return session;
}

bool hasBatchNorm(const traincc_model &abi) {
  for (int32_t i = 0; i < abi.num_state; ++i)
    if (abi.state[i].kind == TRAINCC_STATE_RUNNING_MEAN)
      return true;
  return false;
}

/// Several replicas on one host each take a GPU of their own, by local
/// rank: CUDA_VISIBLE_DEVICES is narrowed to that one before the driver
/// starts (GPU 0 is the one a trainer uses). Left alone when it already
/// names a single GPU (the launcher chose).
void useLocalGpu(const Communicator &replicas) {
  if (replicas.localSize() <= 1)
    return;
  std::string visible;
  if (const char *given = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::vector<std::string> list;
    std::string item;
    for (const char *c = given;; ++c) {
      if (*c == ',' || !*c) {
        list.push_back(item);
        item.clear();
        if (!*c)
          break;
      } else {
        item += *c;
      }
    }
    if (list.size() <= 1 || size_t(replicas.localRank()) >= list.size())
      return;
    visible = list[size_t(replicas.localRank())];
  } else {
    visible = std::to_string(replicas.localRank());
  }
  ::setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1);
}

/// The train command in one process, alone (`replicas` null) or as one
/// replica of a data-parallel run.
Error trainReplica(const TrainerOptions &options, const ModelInfo &model,
                   std::FILE *out, Communicator *replicas) {
  // The device first: a missing GPU should fail before the data loads.
  Expected<ModelSession> session = openWithWeights(options, model, out);
  if (!session)
    return session.takeError();
  std::optional<ReplicaSync> sync;
  std::optional<ActiveBatchNormReplicas> syncedBatchNorm;
  if (replicas) {
    // SyncBatchNorm: the steps of a trainer compiled with traincc
    // --sync-bn average their BatchNorm sums over the replicas: the CPU
    // micro_step through the runtime (SyncBatchNorm.h), the GPU plans
    // through their collectives (below, once NCCL is settled).
    bool syncBatchNorm = options.syncBatchNorm && hasBatchNorm(*model.abi);
    if (syncBatchNorm) {
      if (!model.abi->sync_bn)
        return makeError("--sync-bn: this trainer was compiled without "
                         "traincc --sync-bn, so its micro_step computes "
                         "BatchNorm statistics of its own slice only; "
                         "recompile with --sync-bn, or run without it (each "
                         "replica normalises with its own slice, as DDP "
                         "does)");
      syncedBatchNorm.emplace(*replicas);
    }
    Expected<ReplicaSync> created =
        ReplicaSync::create(*model.abi, *replicas, options.bucketMiB);
    if (!created)
      return created.takeError();
    sync.emplace(created.take());
    std::string unavailable;
    if (Error err = sync->useDeviceCollectives(
            session->backend(), options.distTimeout, unavailable))
      return err;
    if (!unavailable.empty())
      std::fprintf(out, "data-parallel: no NCCL (%s)\n", unavailable.c_str());
    if (syncBatchNorm)
      sync->synchronizeBatchNorm(session->backend());
  }
  TrainingSettings settings =
      resolveTrainingSettings(options.loop, options.data, model);
  Expected<TrainingData> data = loadTrainingData(options.data, model);
  if (!data)
    return data.takeError();
  // A bad --export path should fail in seconds, not after the run: try
  // creating the temporary file now (and remove it again, so an interrupted
  // run leaves nothing behind).
  if (options.exportPath) {
    if (!model.abi->onnx_model || model.abi->onnx_model_bytes == 0)
      return makeError("--export: this trainer carries no ONNX model");
    Expected<AtomicFileWriter> probe =
        AtomicFileWriter::create(*options.exportPath);
    if (!probe)
      return probe.takeError().withContext("--export");
  }

  // Replicas on one host share its cores.
  int threads = threadCount(options);
  if (replicas && !options.threads)
    threads = std::max(1, threads / replicas->localSize());
  ThreadPool pool(threads);
  ActiveThreadPool active(pool);
  Expected<TrainingOutcome> outcome =
      runTraining(model, session->backend(), data.take(), settings, out,
                  sync ? &*sync : nullptr);
  if (!outcome)
    return outcome.takeError();
  if (outcome->signal) {
    // The run is not finished: no export; main exits with 128 + signal.
    recordInterruptedExit(outcome->signal);
    return Error::success();
  }
  // The replicas end with the same weights; rank 0 exports them.
  if (options.exportPath && (!replicas || replicas->rank() == 0)) {
    Expected<AtomicFileWriter> writer =
        AtomicFileWriter::create(*options.exportPath);
    if (!writer)
      return writer.takeError().withContext("--export");
    if (Error err = exportOnnx(*model.abi, session->memory(), *writer,
                               ExportOptions{options.exportFoldBatchNorm}))
      return err;
    std::fprintf(out, "exported %s\n", options.exportPath->c_str());
  }
  return Error::success();
}

} // namespace

Error runTrainCommand(const TrainerOptions &options, const ModelInfo &model,
                      std::FILE *out) {
  Expected<std::unique_ptr<Communicator>> replicas =
      connectReplicas(options.distTimeout);
  if (!replicas)
    return replicas.takeError().withContext("data-parallel start");
  if (!*replicas)
    return trainReplica(options, model, out, nullptr);
  // Only rank 0 speaks and writes (log, checkpoints, export).
  Communicator &comm = **replicas;
  useLocalGpu(comm);
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> quiet(nullptr, &std::fclose);
  if (comm.rank() != 0) {
    quiet.reset(std::fopen("/dev/null", "w"));
    if (!quiet)
      return makeError("/dev/null: cannot open");
  }
  Error err = trainReplica(options, model, comm.rank() == 0 ? out : quiet.get(),
                           &comm);
  if (!err)
    err = comm.finish();
  if (err) {
    // The others must not wait for this replica: report, then end them all.
    std::fflush(out);
    std::fprintf(stderr, "error: replica %d of %d: %s\n", comm.rank(),
                 comm.size(), err.message().c_str());
    std::fflush(stderr);
    comm.abort(1);
  }
  return Error::success();
}

Error runEvalCommand(const TrainerOptions &options, const ModelInfo &model,
                     std::FILE *out) {
  Expected<ModelSession> session = openWithWeights(options, model);
  if (!session)
    return session.takeError();
  Expected<Dataset> data = loadEvaluationData(options.data, model);
  if (!data)
    return data.takeError();
  Expected<Evaluator> evaluator = Evaluator::create(model, data.take());
  if (!evaluator)
    return evaluator.takeError();
  ThreadPool pool(threadCount(options));
  ActiveThreadPool active(pool);
  Expected<EvaluationResult> result = evaluator->run(session->backend());
  if (!result)
    return result.takeError();
  // Shortest round-trip text, as in the --log file.
  std::string text = strCat("samples: ", result->samples,
                            "\nloss: ", formatDouble(result->loss), "\n");
  if (result->accuracy)
    text += strCat("accuracy: ", formatDouble(*result->accuracy), "\n");
  std::fputs(text.c_str(), out);
  return Error::success();
}

Error runPredictCommand(const TrainerOptions &options, const ModelInfo &model,
                        std::FILE *out) {
  Expected<ModelSession> session = openWithWeights(options, model);
  if (!session)
    return session.takeError();
  Expected<Dataset> data = loadPredictionInputs(options.data, model);
  if (!data)
    return data.takeError();
  ThreadPool pool(threadCount(options));
  ActiveThreadPool active(pool);
  Expected<FloatTensor> outputs = predictAll(model, session->backend(), *data);
  if (!outputs)
    return outputs.takeError();
  if (Error err = writeNpy(*options.predictOutput, *outputs))
    return std::move(err).withContext("-o");
  std::fprintf(out, "wrote %s: float32 %s\n", options.predictOutput->c_str(),
               formatShape(outputs->shape).c_str());
  return Error::success();
}

namespace {

/// "123.4 MB", "1.23 GFLOP": decimal units, as `traincc --report` prints.
std::string formatScaled(uint64_t value, const char *const units[5],
                         bool twoDecimals) {
  double scaled = double(value);
  int unit = 0;
  while (scaled >= 1000 && unit < 4) {
    scaled /= 1000;
    ++unit;
  }
  char text[64];
  std::snprintf(text, sizeof text,
                unit == 0 ? "%.0f %s" : twoDecimals ? "%.2f %s" : "%.1f %s",
                scaled, units[unit]);
  return text;
}

/// One line of step costs, or nothing when the trainer has none.
std::string describeCosts(const char *target, const char *unit,
                          const traincc_step_costs &costs) {
  static const char *const bytes[5] = {"B", "KB", "MB", "GB", "TB"};
  static const char *const flops[5] = {"FLOP", "KFLOP", "MFLOP", "GFLOP",
                                       "TFLOP"};
  const traincc_step_cost *steps[3] = {&costs.micro_step, &costs.apply_step,
                                       &costs.eval_step};
  const char *names[3] = {"micro_step", "apply_step", "eval_step"};
  if (!steps[0]->kernels && !steps[1]->kernels && !steps[2]->kernels)
    return "";
  std::string text = strCat(target, " kernels:");
  for (int i = 0; i < 3; ++i)
    text += strCat(i ? ";" : "", " ", names[i], " ", steps[i]->kernels, " ",
                   unit, ", ", formatScaled(steps[i]->bytes, bytes, false),
                   " moved, ", formatScaled(steps[i]->flops, flops, true));
  return text + "\n";
}

} // namespace

Error runInfoCommand(const TrainerOptions &options, const ModelInfo &model,
                     std::FILE *out) {
  Expected<std::string> device = describeDevice(model, options.device);
  if (!device)
    return device.takeError();
  const traincc_model &abi = *model.abi;
  std::string text = strCat("model: ", abi.model_name ? abi.model_name : "",
                            "\ninput: ", describeTensor(abi.input), "\n");
  if (model.hasTarget())
    text += strCat("target: ", describeTensor(abi.target), "\n");
  text += strCat("output: ", describeTensor(abi.output), "\n");
  text += strCat("parameters: ", model.trainableParameters, " trainable, ",
                 model.frozenParameters, " frozen\n");
  text += strCat("state arena: ", int64_t(abi.state_bytes), " bytes in ",
                 abi.num_state, " tensors\n");
  for (int32_t i = 0; i < abi.num_state; ++i) {
    const traincc_state_tensor &t = abi.state[i];
    text += strCat("  ", t.name, ": ", stateKindName(t.kind), " ",
                   abiDtypeName(t.dtype), " ", formatShape(shapeOf(t)),
                   " at offset ", int64_t(t.offset),
                   t.source >= 0 ? strCat(" (copy of ", abi.state[t.source].name,
                                          ")")
                                 : std::string(),
                   "\n");
  }
  text += strCat("workspace: ", int64_t(abi.workspace_bytes), " bytes\n");
  text += describeMemoryPlans(abi);
  text += strCat("micro-batch: ", abi.micro_batch, "\n");
  text += strCat("accum-steps: ", abi.accum_steps, " (default)\n");
  text += strCat("loss: ", lossKindName(abi.loss));
  if (model.crossEntropy())
    text += strCat(" (", abi.num_classes, " classes)");
  text += strCat("\noptimizer: ", optimizerKindName(abi.optimizer));
  if (abi.optimizer == TRAINCC_OPTIMIZER_SGD)
    text += strCat(" momentum ", formatFloat(abi.momentum), " dampening ",
                   formatFloat(abi.dampening), " nesterov ",
                   abi.nesterov ? "yes" : "no");
  else
    text += strCat(" beta1 ", formatFloat(abi.beta1), " beta2 ", formatFloat(abi.beta2),
                   " eps ", formatFloat(abi.eps));
  text += strCat(" weight-decay ", formatFloat(abi.weight_decay), "\n");
  text += strCat("bn-stats: ", abi.bn_stats_per_step ? "step" : "micro", "\n");
  text += strCat("precision: ", precisionName(abi.precision), "\n");
  text += strCat("loss scaling: ", lossScalingName(abi.loss_scaling));
  if (abi.loss_scaling != TRAINCC_LOSS_SCALING_NONE) {
    // The compiled initial value of the scale (a run may have moved on).
    float scale = 0.0f;
    if (const uint8_t *bytes = initialStateAt(
            abi, abi.state[abi.loss_scale_state].offset, sizeof(scale)))
      std::memcpy(&scale, bytes, sizeof(scale));
    text += strCat(abi.loss_scaling == TRAINCC_LOSS_SCALING_DYNAMIC
                       ? " (initial scale "
                       : " (scale ",
                   formatFloat(scale), ")");
  }
  text += "\n";
  text += strCat("onnx model: ", int64_t(abi.onnx_model_bytes), " bytes\n");
  text += describeCosts("cpu", "loop nests", abi.cpu_costs);
  if (abi.gpu)
    text += describeCosts("gpu", "launches", abi.gpu->costs);
  text += *device;
  std::fputs(text.c_str(), out);
  return Error::success();
}

} // namespace traincc::rt
