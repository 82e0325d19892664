//===- Dataset.cpp - Samples and their labels or targets ------------------===//

#include "traincc/runtime/data/Dataset.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace traincc::rt {

namespace {

/// The first non-finite element, as an error naming sample and position.
Error checkFinite(const FloatTensor &tensor, int64_t rowElements,
                  const char *what) {
  const float *data = tensor.data.data();
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i)
    if (!std::isfinite(data[i]))
      return makeError(tensor.source, ": ", what, " of sample ",
                       i / rowElements, " holds ", double(data[i]),
                       " (element ", i % rowElements, ")");
  return Error::success();
}

std::vector<int64_t> rowShape(const std::vector<int64_t> &shape) {
  return std::vector<int64_t>(shape.begin() + 1, shape.end());
}

Error checkElementsMatch(const std::string &source, const char *what,
                         const std::vector<int64_t> &ours, int64_t ourElements,
                         const std::vector<int64_t> &model) {
  Expected<int64_t> modelElements = checkedElementCount(model);
  if (!modelElements)
    return modelElements.takeError().withContext("model shape");
  if (*modelElements != ourElements)
    return makeError(source, ": ", what, " have shape ", formatShape(ours),
                     " (", ourElements, " values), the model expects ",
                     formatShape(model), " (", *modelElements, " values)");
  return Error::success();
}

} // namespace

namespace {

/// The checks every input file gets (a sample axis, a shape that matches
/// the values, non-empty samples); sets the count and sample shape.
template <typename T>
Error checkInputShape(const HostTensor<T> &inputs, int64_t &count,
                      std::vector<int64_t> &sampleShape,
                      int64_t &sampleElements) {
  if (inputs.rank() < 1)
    return makeError(inputs.source,
                     ": inputs need a leading sample dimension, got shape ",
                     formatShape(inputs.shape));
  Expected<int64_t> elements = checkedElementCount(inputs.shape);
  if (!elements)
    return elements.takeError().withContext(inputs.source);
  if (*elements != inputs.numElements())
    return makeError(inputs.source, ": shape ", formatShape(inputs.shape),
                     " does not match ", inputs.numElements(), " values");
  if (inputs.shape[0] == 0)
    return makeError(inputs.source, ": no samples (shape ",
                     formatShape(inputs.shape), ")");
  count = inputs.shape[0];
  sampleShape = rowShape(inputs.shape);
  sampleElements = *elements / count;
  if (sampleElements == 0)
    return makeError(inputs.source, ": samples are empty (shape ",
                     formatShape(inputs.shape), ")");
  return Error::success();
}

} // namespace

Expected<Dataset> Dataset::fromInputs(InputTensor inputs) {
  Dataset data;
  if (auto *ids = std::get_if<Int64Tensor>(&inputs)) {
    if (Error err = checkInputShape(*ids, data.count_, data.sampleShape_,
                                    data.sampleElements_))
      return err;
    data.ids_ = std::make_shared<const Int64Tensor>(std::move(*ids));
    return data;
  }
  FloatTensor &values = std::get<FloatTensor>(inputs);
  if (Error err = checkInputShape(values, data.count_, data.sampleShape_,
                                  data.sampleElements_))
    return err;
  if (Error err = checkFinite(values, data.sampleElements_, "input"))
    return err;
  data.inputs_ = std::make_shared<const FloatTensor>(std::move(values));
  return data;
}

Expected<Dataset> Dataset::withLabels(InputTensor inputs, Int64Tensor labels,
                                      int64_t numClasses) {
  if (numClasses < 1)
    return makeError(labels.source, ": the model has ", numClasses, " classes");
  if (labels.rank() != 1 || labels.numElements() != labels.shape[0])
    return makeError(labels.source, ": expected labels of shape [N], got ",
                     formatShape(labels.shape));
  Expected<Dataset> data = fromInputs(std::move(inputs));
  if (!data)
    return data;
  if (labels.shape[0] != data->count_)
    return makeError(labels.source, ": ", labels.shape[0], " labels for ",
                     data->count_, " samples in ", data->inputSource());
  for (int64_t i = 0; i < data->count_; ++i) {
    int64_t label = labels.data[i];
    if (label < 0 || label >= numClasses)
      return makeError(labels.source, ": label ", label, " of sample ", i,
                       " is out of range for ", numClasses,
                       " classes (expected 0..", numClasses - 1, ")");
  }
  data->kind_ = TargetKind::ClassLabels;
  data->numClasses_ = numClasses;
  data->labels_ = std::make_shared<const Int64Tensor>(std::move(labels));
  return data;
}

Expected<Dataset> Dataset::withTargets(InputTensor inputs,
                                       FloatTensor targets) {
  Expected<Dataset> data = fromInputs(std::move(inputs));
  if (!data)
    return data;
  Expected<int64_t> count = checkedElementCount(targets.shape);
  if (!count)
    return count.takeError().withContext(targets.source);
  if (targets.rank() < 1 || *count != targets.numElements())
    return makeError(targets.source,
                     ": expected targets of shape [N,...], "
                     "got ",
                     formatShape(targets.shape));
  if (targets.shape[0] != data->count_)
    return makeError(targets.source, ": ", targets.shape[0], " targets for ",
                     data->count_, " samples in ", data->inputSource());
  data->targetShape_ = rowShape(targets.shape);
  data->targetElements_ = *count / data->count_;
  if (data->targetElements_ == 0)
    return makeError(targets.source, ": target rows are empty (shape ",
                     formatShape(targets.shape), ")");
  if (Error err = checkFinite(targets, data->targetElements_, "target"))
    return err;
  data->kind_ = TargetKind::Values;
  data->targets_ = std::make_shared<const FloatTensor>(std::move(targets));
  return data;
}

Expected<Dataset> Dataset::inputsOnly(InputTensor inputs) {
  return fromInputs(std::move(inputs));
}

const std::string &Dataset::inputSource() const {
  return ids_ ? ids_->source : inputs_->source;
}

const float *Dataset::inputRow(int64_t index) const {
  return inputs_->data.data() + (begin_ + index) * sampleElements_;
}

const int64_t *Dataset::inputIdRow(int64_t index) const {
  return ids_->data.data() + (begin_ + index) * sampleElements_;
}

int64_t Dataset::label(int64_t index) const {
  return labels_ ? labels_->data[begin_ + index] : 0;
}

const float *Dataset::targetRow(int64_t index) const {
  return targets_ ? targets_->data.data() + (begin_ + index) * targetElements_
                  : nullptr;
}

Expected<Dataset> Dataset::slice(int64_t begin, int64_t count) const {
  if (begin < 0 || count < 1 || begin > count_ || count > count_ - begin)
    return makeError(inputSource(), ": samples [", begin, ", ", begin + count,
                     ") are not inside the ", count_, " samples");
  Dataset part = *this;
  part.begin_ = begin_ + begin;
  part.count_ = count;
  return part;
}

Expected<std::pair<Dataset, Dataset>>
Dataset::splitValidation(double fraction) const {
  if (!(fraction > 0.0 && fraction < 1.0))
    return makeError("--val-split must lie strictly between 0 and 1, got ",
                     fraction);
  // round(N * F), halves rounding up: N * F is exact enough for any N below
  // 2^52, and std::floor is exactly specified.
  int64_t validation =
      static_cast<int64_t>(std::floor(double(count_) * fraction + 0.5));
  if (validation < 1)
    return makeError("--val-split ", fraction, " of ", count_,
                     " samples leaves no validation samples");
  if (validation >= count_)
    return makeError("--val-split ", fraction, " of ", count_,
                     " samples leaves no training samples");
  Expected<Dataset> train = slice(0, count_ - validation);
  if (!train)
    return train.takeError();
  Expected<Dataset> val = slice(count_ - validation, validation);
  if (!val)
    return val.takeError();
  return std::make_pair(train.take(), val.take());
}

Error Dataset::checkSampleShape(
    const std::vector<int64_t> &modelSampleShape) const {
  return checkElementsMatch(inputSource(), "samples", sampleShape_,
                            sampleElements_, modelSampleShape);
}

Error Dataset::checkTargetShape(
    const std::vector<int64_t> &modelTargetShape) const {
  if (kind_ != TargetKind::Values)
    return makeError(inputSource(), ": the dataset has no float targets");
  return checkElementsMatch(targets_->source, "targets", targetShape_,
                            targetElements_, modelTargetShape);
}

std::vector<int64_t> Dataset::classCounts() const {
  std::vector<int64_t> counts;
  if (kind_ != TargetKind::ClassLabels)
    return counts;
  counts.assign(static_cast<size_t>(numClasses_), 0);
  for (int64_t i = 0; i < count_; ++i)
    ++counts[static_cast<size_t>(label(i))];
  return counts;
}

MicroBatch Dataset::makeBatch(int64_t rows) const {
  MicroBatch batch;
  batch.rows = std::max<int64_t>(rows, 0);
  size_t inputElements = static_cast<size_t>(batch.rows * sampleElements_);
  if (integerInputs())
    batch.inputIds.assign(inputElements, 0);
  else
    batch.inputs.assign(inputElements, 0.f);
  if (kind_ == TargetKind::ClassLabels)
    batch.labels.assign(static_cast<size_t>(batch.rows), 0);
  if (kind_ == TargetKind::Values)
    batch.targets.assign(static_cast<size_t>(batch.rows * targetElements_),
                         0.f);
  batch.indices.assign(static_cast<size_t>(batch.rows), -1);
  return batch;
}

namespace {

/// Checks that `batch` has the buffers makeBatch() would give it.
bool batchFits(const Dataset &data, const MicroBatch &batch) {
  size_t rows = static_cast<size_t>(batch.rows);
  bool labels = data.targetKind() == TargetKind::ClassLabels;
  bool targets = data.targetKind() == TargetKind::Values;
  size_t inputs = rows * size_t(data.sampleElements());
  bool ids = data.integerInputs();
  return batch.rows >= 0 && batch.inputs.size() == (ids ? 0 : inputs) &&
         batch.inputIds.size() == (ids ? inputs : 0) &&
         batch.labels.size() == (labels ? rows : 0) &&
         batch.targets.size() ==
             (targets ? rows * size_t(data.targetElements()) : 0) &&
         batch.indices.size() == rows;
}

/// Copies sample `index` into `row` of the batch, or pads it when -1.
void setRow(const Dataset &data, int64_t index, int64_t row,
            MicroBatch &batch) {
  int64_t in = data.sampleElements(), tgt = data.targetElements();
  if (data.integerInputs()) {
    // Padding rows hold id 0, which every embedding has.
    int64_t *ids = batch.inputIds.data() + row * in;
    if (index < 0)
      std::fill(ids, ids + in, int64_t(0));
    else
      std::memcpy(ids, data.inputIdRow(index), sizeof(int64_t) * size_t(in));
  } else {
    float *inputs = batch.inputs.data() + row * in;
    if (index < 0)
      std::fill(inputs, inputs + in, 0.f);
    else
      std::memcpy(inputs, data.inputRow(index), sizeof(float) * size_t(in));
  }
  if (data.targetKind() == TargetKind::ClassLabels)
    batch.labels[size_t(row)] = index < 0 ? 0 : data.label(index);
  if (data.targetKind() == TargetKind::Values) {
    float *targets = batch.targets.data() + row * tgt;
    if (index < 0)
      std::fill(targets, targets + tgt, 0.f);
    else
      std::memcpy(targets, data.targetRow(index), sizeof(float) * size_t(tgt));
  }
  batch.indices[size_t(row)] = index;
}

} // namespace

Error Dataset::fillBatch(const int64_t *indices, int64_t count,
                         MicroBatch &batch) const {
  if (!batchFits(*this, batch))
    return makeError("internal error: batch buffers do not match ",
                     inputSource());
  if (count < 0 || count > batch.rows)
    return makeError("internal error: ", count, " samples for a batch of ",
                     batch.rows, " rows");
  for (int64_t row = 0; row < count; ++row)
    if (indices[row] < 0 || indices[row] >= count_)
      return makeError("internal error: sample index ", indices[row],
                       " outside ", inputSource(), " (", count_, " samples)");
  for (int64_t row = 0; row < batch.rows; ++row)
    setRow(*this, row < count ? indices[row] : -1, row, batch);
  batch.realRows = count;
  return Error::success();
}

int64_t evalBatchCount(const Dataset &data, int64_t rows) {
  if (rows < 1)
    return 0;
  return (data.size() + rows - 1) / rows;
}

Error fillEvalBatch(const Dataset &data, int64_t batchIndex,
                    MicroBatch &batch) {
  int64_t batches = evalBatchCount(data, batch.rows);
  if (batchIndex < 0 || batchIndex >= batches)
    return makeError("internal error: evaluation batch ", batchIndex, " of ",
                     batches);
  if (!batchFits(data, batch))
    return makeError("internal error: batch buffers do not match ",
                     data.inputSource());
  int64_t first = batchIndex * batch.rows;
  int64_t real = std::min(batch.rows, data.size() - first);
  for (int64_t row = 0; row < batch.rows; ++row)
    setRow(data, row < real ? first + row : -1, row, batch);
  batch.realRows = real;
  return Error::success();
}

} // namespace traincc::rt
