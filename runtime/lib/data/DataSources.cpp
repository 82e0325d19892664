//===- DataSources.cpp - The data a command line names, fitted to the model ===//

#include "traincc/runtime/data/DataSources.h"

#include "traincc/runtime/data/FashionMnist.h"
#include "traincc/runtime/formats/Npy.h"

namespace traincc::rt {

namespace {

/// Checks that the samples fit the model's input: as many values per sample.
Error checkInputs(const Dataset &data, const ModelInfo &model,
                  const char *flag) {
  return data.checkSampleShape(model.inputSampleShape).withContext(flag);
}

/// `shape` without its dimensions of size 1.
std::vector<int64_t> withoutUnitDims(const std::vector<int64_t> &shape) {
  std::vector<int64_t> out;
  for (int64_t d : shape)
    if (d != 1)
      out.push_back(d);
  return out;
}

/// Checks inputs read from a file: as many values per sample, and the
/// model's shape up to dimensions of size 1 unless --reshape was given.
Error checkFileInputs(const Dataset &data, const ModelInfo &model,
                      const char *flag, const DataOptions &options) {
  if (Error err = checkInputs(data, model, flag))
    return err;
  const std::vector<int64_t> &ours = data.sampleShape();
  const std::vector<int64_t> &theirs = model.inputSampleShape;
  if (options.reshape || withoutUnitDims(ours) == withoutUnitDims(theirs))
    return Error::success();
  std::vector<int64_t> full = {data.size()};
  full.insert(full.end(), ours.begin(), ours.end());
  std::string expected = "[N";
  for (int64_t d : theirs)
    expected += "," + std::to_string(d);
  expected += "]";
  int64_t values = 1;
  for (int64_t d : theirs)
    values *= d;
  return makeError(flag, ": ", data.inputSource(), ": inputs have shape ",
                   formatShape(full), ", the model expects ", expected,
                   "; both hold ", values,
                   " values per sample: give --reshape to read each sample "
                   "as ", formatShape(theirs),
                   " in C order (flattened images; channels-last [N,H,W,C] "
                   "data needs a transpose to [N,C,H,W] instead)");
}

/// Dataset::with* errors start with the name of the file they are about;
/// prefix the flag that named that file.
Error withFlagOfFile(Error err, const std::string &xPath, const char *xFlag,
                     const char *yFlag) {
  bool aboutInputs = err.message().rfind(xPath + ":", 0) == 0;
  return std::move(err).withContext(aboutInputs ? xFlag : yFlag);
}

/// Reads inputs as float32, then applies --scale (uint8 only) and
/// --normalize to them.
Expected<FloatTensor> readFloatInputs(const std::string &path,
                                      const char *flag,
                                      const DataOptions &options,
                                      const ModelInfo &model) {
  Expected<NpyFloatArray> array = readNpyAsFloat32(path);
  if (!array)
    return array.takeError().withContext(flag);
  FloatTensor &inputs = array->tensor;
  if (array->storedType == DType::UInt8) {
    if (options.scale) {
      // torchvision's ToTensor: float32 division by 255.
      for (float &v : inputs.data)
        v = v / 255.0f;
    } else if (options.warnings) {
      std::fprintf(options.warnings,
                   "warning: %s: %s holds uint8 values, used as they are "
                   "(0..255); give --scale to divide them by 255 (to "
                   "[0,1]), as --dataset fashion-mnist does\n",
                   flag, path.c_str());
    }
  } else if (options.scale) {
    return makeError(flag, ": ", path, ": --scale divides uint8 values "
                     "(0..255) by 255, but the file holds ",
                     dtypeName(array->storedType),
                     " values; scale them yourself or leave out --scale");
  }
  if (options.normalize)
    if (Error err = normalizeInputs(inputs, *options.normalize,
                                    model.inputSampleShape))
      return err;
  return std::move(inputs);
}

/// Reads the ids of a model with an integer input (int64; int32 and uint8
/// widened) and checks each against the rows of the table it indexes: an id
/// outside [0, id_limit) is an error here, before any step runs, and not a
/// clamped read in the step.
Expected<Int64Tensor> readIdInputs(const std::string &path, const char *flag,
                                   const DataOptions &options,
                                   const ModelInfo &model) {
  const char *imageFlag = options.scale       ? "--scale"
                          : options.normalize ? "--normalize"
                                              : nullptr;
  if (imageFlag)
    return makeError(imageFlag, ": the model's input '",
                     model.abi->input.name,
                     "' is int64 ids, which are not scaled or normalized");
  Expected<Int64Tensor> ids = readNpyIds(path);
  if (!ids)
    return ids.takeError().withContext(flag);
  int64_t limit = model.abi->input.id_limit;
  int64_t row = std::max<int64_t>(model.inputSampleElements, 1);
  for (int64_t i = 0, e = ids->numElements(); i < e; ++i) {
    int64_t id = ids->data[size_t(i)];
    if (id < 0 || (limit > 0 && id >= limit))
      return makeError(flag, ": ", path, ": id ", id, " of sample ", i / row,
                       " (element ", i % row, ") is out of range: the "
                       "model's input '", model.abi->input.name, "' indexes ",
                       limit > 0 ? strCat(limit, " rows (ids 0..", limit - 1,
                                          ")")
                                 : std::string("tables from row 0"));
  }
  return ids;
}

/// The inputs in the model's input type.
Expected<InputTensor> readInputs(const std::string &path, const char *flag,
                                 const DataOptions &options,
                                 const ModelInfo &model) {
  if (model.integerInput()) {
    Expected<Int64Tensor> ids = readIdInputs(path, flag, options, model);
    if (!ids)
      return ids.takeError();
    return InputTensor(ids.take());
  }
  Expected<FloatTensor> values = readFloatInputs(path, flag, options, model);
  if (!values)
    return values.takeError();
  return InputTensor(values.take());
}

/// Inputs from `xFlag` with the labels or targets from `yFlag` that the
/// model's loss needs.
Expected<Dataset> loadSamples(const std::string &xPath,
                              const std::optional<std::string> &yPath,
                              const char *xFlag, const char *yFlag,
                              const DataOptions &options,
                              const ModelInfo &model) {
  Expected<InputTensor> inputs = readInputs(xPath, xFlag, options, model);
  if (!inputs)
    return inputs.takeError();

  Expected<Dataset> data = makeError("internal error: no dataset");
  switch (model.abi->loss) {
  case TRAINCC_LOSS_CROSS_ENTROPY: {
    if (!yPath)
      return makeError(xFlag, " needs ", yFlag,
                       " (the model's cross-entropy loss needs int64 class "
                       "labels)");
    Expected<Int64Tensor> labels = readNpyInt64(*yPath);
    if (!labels)
      return labels.takeError().withContext(yFlag);
    data = Dataset::withLabels(inputs.take(), labels.take(),
                               model.abi->num_classes);
    if (!data)
      return withFlagOfFile(data.takeError(), xPath, xFlag, yFlag);
    break;
  }
  case TRAINCC_LOSS_MSE: {
    if (!yPath)
      return makeError(xFlag, " needs ", yFlag,
                       " (the model's mse loss needs float32 targets)");
    Expected<FloatTensor> targets = readNpyFloat32(*yPath);
    if (!targets)
      return targets.takeError().withContext(yFlag);
    data = Dataset::withTargets(inputs.take(), targets.take());
    if (!data)
      return withFlagOfFile(data.takeError(), xPath, xFlag, yFlag);
    if (Error err = data->checkTargetShape(model.targetSampleShape))
      return std::move(err).withContext(yFlag);
    break;
  }
  default:
    if (yPath)
      return makeError(yFlag, ": the model computes its own loss (--loss "
                              "output) and takes no targets");
    data = Dataset::inputsOnly(inputs.take());
    if (!data)
      return data.takeError().withContext(xFlag);
    break;
  }
  if (Error err = checkFileInputs(*data, model, xFlag, options))
    return err;
  return data;
}

/// Built-in datasets are labelled images: checked before loading them.
Expected<DatasetSpec> datasetFor(const std::string &text, bool scale,
                                 const ModelInfo &model) {
  Expected<DatasetSpec> spec = parseDatasetSpec(text);
  if (!spec)
    return spec;
  if (scale)
    return makeError("--scale: --dataset ", spec->name,
                     " is scaled to [0,1] already (its uint8 pixels are "
                     "divided by 255 as they are loaded)");
  if (model.integerInput())
    return makeError("--dataset: ", spec->name, " holds float32 images, but "
                     "the model's input '", model.abi->input.name,
                     "' is int64 ids");
  if (!model.crossEntropy())
    return makeError("--dataset: ", spec->name, " holds class labels, but the "
                     "model's loss is ",
                     lossKindName(model.abi->loss));
  return spec;
}

/// Images with labels from a built-in dataset split.
Expected<Dataset> fromLabeledImages(LabeledImages images,
                                    const DataOptions &options,
                                    const ModelInfo &model) {
  if (options.normalize)
    if (Error err = normalizeInputs(images.images, *options.normalize,
                                    model.inputSampleShape))
      return err;
  Expected<Dataset> data = Dataset::withLabels(
      std::move(images.images), std::move(images.labels),
      model.abi->num_classes);
  if (!data)
    return data.takeError().withContext("--dataset");
  if (Error err = checkInputs(*data, model, "--dataset"))
    return err;
  return data;
}

} // namespace

Expected<TrainingData> loadTrainingData(const DataOptions &options,
                                        const ModelInfo &model) {
  if (options.augment.enabled() && model.integerInput())
    return makeError("--augment: the model's input '", model.abi->input.name,
                     "' is int64 ids, not images");
  if (options.dataset) {
    Expected<DatasetSpec> spec = datasetFor(*options.dataset, options.scale, model);
    if (!spec)
      return spec.takeError();
    Expected<TrainAndValidation> both = loadNamedDataset(*spec);
    if (!both)
      return both.takeError().withContext("--dataset");
    Expected<Dataset> train =
        fromLabeledImages(std::move(both->train), options, model);
    if (!train)
      return train.takeError();
    Expected<Dataset> validation =
        fromLabeledImages(std::move(both->validation), options, model);
    if (!validation)
      return validation.takeError();
    return TrainingData{train.take(), validation.take()};
  }

  Expected<Dataset> train =
      loadSamples(*options.trainX, options.trainY, "--train-x", "--train-y",
                  options, model);
  if (!train)
    return train.takeError();
  TrainingData result{train.take(), std::nullopt};
  if (options.valX) {
    Expected<Dataset> validation =
        loadSamples(*options.valX, options.valY, "--val-x", "--val-y",
                    options, model);
    if (!validation)
      return validation.takeError();
    result.validation = validation.take();
  } else if (options.valSplit) {
    Expected<std::pair<Dataset, Dataset>> split =
        result.train.splitValidation(*options.valSplit);
    if (!split)
      return split.takeError();
    result.train = std::move(split->first);
    result.validation = std::move(split->second);
  }
  return result;
}

Expected<Dataset> loadEvaluationData(const DataOptions &options,
                                     const ModelInfo &model) {
  if (options.dataset) {
    Expected<DatasetSpec> spec = datasetFor(*options.dataset, options.scale, model);
    if (!spec)
      return spec.takeError();
    Expected<LabeledImages> images = loadFashionMnistSplit(spec->dir, "t10k");
    if (!images)
      return images.takeError().withContext("--dataset");
    return fromLabeledImages(images.take(), options, model);
  }
  return loadSamples(*options.evalX, options.evalY, "--x", "--y", options,
                     model);
}

Expected<Dataset> loadPredictionInputs(const DataOptions &options,
                                       const ModelInfo &model) {
  Expected<InputTensor> inputs =
      readInputs(*options.evalX, "--x", options, model);
  if (!inputs)
    return inputs.takeError();
  Expected<Dataset> data = Dataset::inputsOnly(inputs.take());
  if (!data)
    return data.takeError().withContext("--x");
  if (Error err = checkFileInputs(*data, model, "--x", options))
    return err;
  return data;
}

void configureSampler(SamplerOptions &sampler, const DataOptions &options,
                      const ModelInfo &model) {
  sampler.augmentation = options.augment;
  sampler.imageShape = model.inputSampleShape;
  sampler.normalization = options.normalize;
  sampler.prefetch = options.prefetch;
}

} // namespace traincc::rt
