//===- FashionMnist.cpp - Built-in datasets (--dataset) -------------------===//

#include "traincc/runtime/data/FashionMnist.h"

#include "traincc/runtime/formats/Idx.h"
#include "traincc/runtime/support/File.h"

namespace traincc::rt {

namespace {

/// DIR/NAME when it exists, else DIR/NAME.gz when that exists.
Expected<std::string> findIdxFile(const std::string &dir,
                                  const std::string &name) {
  std::string plain = dir + "/" + name;
  if (isRegularFile(plain))
    return plain;
  if (isRegularFile(plain + ".gz"))
    return plain + ".gz";
  return makeError("fashion-mnist: neither ", name, " nor ", name, ".gz is in ",
                   dir,
                   " (install dataset-fashion-mnist or pass --dataset "
                   "fashion-mnist:DIR)");
}

Expected<LabeledImages> loadSplit(const std::string &dir,
                                  const std::string &prefix) {
  Expected<std::string> images =
      findIdxFile(dir, prefix + "-images-idx3-ubyte");
  if (!images)
    return images.takeError();
  Expected<std::string> labels =
      findIdxFile(dir, prefix + "-labels-idx1-ubyte");
  if (!labels)
    return labels.takeError();
  return loadIdxImagesAndLabels(*images, *labels);
}

} // namespace

Expected<DatasetSpec> parseDatasetSpec(std::string_view text) {
  size_t colon = text.find(':');
  DatasetSpec spec;
  spec.name = std::string(text.substr(0, colon));
  if (spec.name != "fashion-mnist")
    return makeError("--dataset: unknown dataset '", spec.name,
                     "' (known: fashion-mnist)");
  if (colon == std::string_view::npos) {
    spec.dir = kDefaultFashionMnistDir;
  } else {
    spec.dir = std::string(text.substr(colon + 1));
    if (spec.dir.empty())
      return makeError("--dataset: empty folder after 'fashion-mnist:'");
  }
  return spec;
}

Expected<LabeledImages> loadIdxImagesAndLabels(const std::string &imagesPath,
                                               const std::string &labelsPath) {
  Expected<ByteTensor> images = readIdxUInt8(imagesPath, 3);
  if (!images)
    return images.takeError();
  Expected<ByteTensor> labels = readIdxUInt8(labelsPath, 1);
  if (!labels)
    return labels.takeError();
  if (images->shape[0] != labels->shape[0])
    return makeError(labelsPath, ": ", labels->shape[0], " labels for ",
                     images->shape[0], " images in ", imagesPath);

  LabeledImages result;
  result.images.source = imagesPath;
  result.images.shape = {images->shape[0], 1, images->shape[1],
                         images->shape[2]};
  result.images.data.resize(images->data.size());
  // Division by 255 (not multiplication by 1/255) matches torchvision's
  // ToTensor bit for bit.
  for (size_t i = 0; i < images->data.size(); ++i)
    result.images.data[i] = static_cast<float>(images->data[i]) / 255.0f;

  result.labels.source = labelsPath;
  result.labels.shape = {labels->shape[0]};
  result.labels.data.assign(labels->data.begin(), labels->data.end());
  return result;
}

Expected<LabeledImages> loadFashionMnistSplit(const std::string &dir,
                                              const std::string &split) {
  return loadSplit(dir, split);
}

Expected<TrainAndValidation> loadFashionMnist(const std::string &dir) {
  Expected<LabeledImages> train = loadSplit(dir, "train");
  if (!train)
    return train.takeError();
  Expected<LabeledImages> validation = loadSplit(dir, "t10k");
  if (!validation)
    return validation.takeError();
  return TrainAndValidation{train.take(), validation.take()};
}

Expected<TrainAndValidation> loadNamedDataset(const DatasetSpec &spec) {
  if (spec.name == "fashion-mnist")
    return loadFashionMnist(spec.dir);
  return makeError("--dataset: unknown dataset '", spec.name, "'");
}

} // namespace traincc::rt
