#include "cost_model/xgb_ranker.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace tunefleet::cost_model {
namespace {

struct DMatrixDeleter {
  void operator()(void* m) const { XGDMatrixFree(m); }
};
using DMatrix = std::unique_ptr<void, DMatrixDeleter>;

absl::Status XgbError(absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, ": ", XGBGetLastError()));
}

absl::StatusOr<DMatrix> MakeDMatrix(const FeatureMatrix& x) {
  DMatrixHandle handle = nullptr;
  if (XGDMatrixCreateFromMat(x.data.data(), x.rows, x.cols,
                             std::numeric_limits<float>::quiet_NaN(),
                             &handle) != 0) {
    return XgbError("XGDMatrixCreateFromMat");
  }
  return DMatrix(handle);
}

}  // namespace

void XgbRanker::BoosterDeleter::operator()(void* booster) const {
  XGBoosterFree(booster);
}

XgbRanker::XgbRanker(XgbOptions options) : options_(std::move(options)) {}
XgbRanker::~XgbRanker() = default;
XgbRanker::XgbRanker(XgbRanker&&) noexcept = default;
XgbRanker& XgbRanker::operator=(XgbRanker&&) noexcept = default;

absl::Status XgbRanker::Fit(const FeatureMatrix& x,
                            const std::vector<float>& labels,
                            const std::vector<unsigned>& group_sizes) {
  if (x.rows == 0 || x.cols == 0) {
    return absl::InvalidArgumentError("cannot fit on an empty feature matrix");
  }
  if (labels.size() != x.rows || x.data.size() != x.rows * x.cols) {
    return absl::InvalidArgumentError(absl::StrCat(
        "feature matrix has ", x.rows, " rows but ", labels.size(), " labels"));
  }
  absl::StatusOr<DMatrix> train = MakeDMatrix(x);
  if (!train.ok()) return train.status();
  if (XGDMatrixSetFloatInfo(train->get(), "label", labels.data(),
                            labels.size()) != 0) {
    return XgbError("setting labels");
  }
  std::vector<unsigned> groups = group_sizes;
  if (groups.empty()) groups.push_back(static_cast<unsigned>(x.rows));
  size_t grouped = 0;
  for (unsigned g : groups) grouped += g;
  if (grouped != x.rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("query groups cover ", grouped, " rows of ", x.rows));
  }
  if (XGDMatrixSetUIntInfo(train->get(), "group", groups.data(),
                           groups.size()) != 0) {
    return XgbError("setting the query groups");
  }
  DMatrixHandle dmats[] = {train->get()};
  BoosterHandle raw = nullptr;
  if (XGBoosterCreate(dmats, 1, &raw) != 0) return XgbError("XGBoosterCreate");
  std::unique_ptr<void, BoosterDeleter> booster(raw);
  const std::pair<const char*, std::string> params[] = {
      {"objective", options_.objective},
      {"max_depth", std::to_string(options_.max_depth)},
      {"eta", std::to_string(options_.eta)},
      {"min_child_weight", std::to_string(options_.min_child_weight)},
      {"subsample", std::to_string(options_.subsample)},
      {"seed", std::to_string(options_.seed)},
      {"nthread", std::to_string(options_.nthread)},
      {"tree_method", options_.tree_method},
      {"verbosity", "0"},
  };
  for (const auto& [name, value] : params) {
    if (XGBoosterSetParam(booster.get(), name, value.c_str()) != 0) {
      return XgbError(absl::StrCat("XGBoosterSetParam(", name, ")"));
    }
  }
  for (int i = 0; i < options_.rounds; ++i) {
    if (XGBoosterUpdateOneIter(booster.get(), i, train->get()) != 0) {
      return XgbError("XGBoosterUpdateOneIter");
    }
  }
  booster_ = std::move(booster);
  cols_ = x.cols;
  return absl::OkStatus();
}

absl::StatusOr<std::vector<float>> XgbRanker::Predict(
    const FeatureMatrix& x) const {
  if (!trained()) return absl::FailedPreconditionError("model is not trained");
  if (x.rows == 0) return std::vector<float>();
  if (x.cols != cols_) {
    return absl::InvalidArgumentError(absl::StrCat(
        "model was trained on ", cols_, " features, got ", x.cols));
  }
  absl::StatusOr<DMatrix> m = MakeDMatrix(x);
  if (!m.ok()) return m.status();
  bst_ulong len = 0;
  const float* out = nullptr;
  if (XGBoosterPredict(booster_.get(), m->get(), 0, 0, 0, &len, &out) != 0) {
    return XgbError("XGBoosterPredict");
  }
  return std::vector<float>(out, out + len);
}

}  // namespace tunefleet::cost_model
