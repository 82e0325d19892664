//===- FashionMnist.h - Built-in datasets (--dataset) -----------*- C++ -*-===//
//
// `--dataset fashion-mnist[:DIR]`: the IDX files train-images-idx3-ubyte,
// train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte in
// DIR (each may carry a .gz suffix; Debian's dataset-fashion-mnist ships them
// gzipped in /usr/share/datasets/fashion-mnist). Pixels are scaled to [0,1]
// as float32(v) / 255.0f, which is what torchvision's ToTensor computes, and
// images come out as [N,1,rows,cols]; labels as int64 [N].
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_DATA_FASHIONMNIST_H
#define TRAINCC_RUNTIME_DATA_FASHIONMNIST_H

#include "traincc/runtime/support/Error.h"
#include "traincc/runtime/support/Tensor.h"

#include <string>
#include <string_view>

namespace traincc::rt {

constexpr const char *kDefaultFashionMnistDir =
    "/usr/share/datasets/fashion-mnist";
constexpr int64_t kFashionMnistClasses = 10;

/// Images with one label each.
struct LabeledImages {
  FloatTensor images; // [N,1,rows,cols], values in [0,1]
  Int64Tensor labels; // [N]
};

/// The training split ("train") and the validation split ("t10k").
struct TrainAndValidation {
  LabeledImages train;
  LabeledImages validation;
};

/// The value of --dataset, split into a name and a folder.
struct DatasetSpec {
  std::string name;
  std::string dir;
};

/// Parses "fashion-mnist" or "fashion-mnist:DIR"; other names are errors.
Expected<DatasetSpec> parseDatasetSpec(std::string_view text);

/// Reads an images file (IDX 0x00000803) and its labels file (0x00000801);
/// the two must hold the same number of items.
Expected<LabeledImages> loadIdxImagesAndLabels(const std::string &imagesPath,
                                               const std::string &labelsPath);

/// Loads one Fashion-MNIST split ("train" or "t10k") from `dir`.
Expected<LabeledImages> loadFashionMnistSplit(const std::string &dir,
                                              const std::string &split);

/// Loads both Fashion-MNIST splits from `dir`.
Expected<TrainAndValidation> loadFashionMnist(const std::string &dir);

/// Loads the dataset a parsed --dataset value names.
Expected<TrainAndValidation> loadNamedDataset(const DatasetSpec &spec);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_DATA_FASHIONMNIST_H
