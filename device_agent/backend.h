// Where an agent's measurements run: in this process (tests), in a
// supervised worker process (the default: a hanging or crashing kernel
// cannot take the agent down), or nowhere at all (a fake backend for load
// benchmarks).
#ifndef TUNEFLEET_DEVICE_AGENT_BACKEND_H_
#define TUNEFLEET_DEVICE_AGENT_BACKEND_H_

#include <memory>
#include <string>

#include "measure/measurer.h"
#include "tunefleet/v1/common.pb.h"

namespace tunefleet::device_agent {

// Used by one measurement thread at a time.
class MeasurementBackend {
 public:
  virtual ~MeasurementBackend() = default;
  virtual const tunefleet::v1::DeviceInfo& device_info() const = 0;
  // Runs one trial; never fails as a call (errors are the measurement's).
  virtual tunefleet::v1::Measurement Measure(
      const tunefleet::v1::MeasureRequest& request) = 0;
  // A hint that `next` will be measured after the coming Measure() call (or
  // a later one; the agent hints each queued trial once): the backend may
  // build its programs in the background meanwhile (Measurer::Prefetch).
  // Default: ignored.
  virtual void Prefetch(const tunefleet::v1::MeasureRequest& next) {}
};

// Measures in this process with a Measurer.
class LocalBackend : public MeasurementBackend {
 public:
  explicit LocalBackend(std::unique_ptr<measure::Measurer> measurer)
      : measurer_(std::move(measurer)) {}
  const tunefleet::v1::DeviceInfo& device_info() const override {
    return measurer_->device_info();
  }
  tunefleet::v1::Measurement Measure(
      const tunefleet::v1::MeasureRequest& request) override {
    return measurer_->Measure(request);
  }
  void Prefetch(const tunefleet::v1::MeasureRequest& next) override {
    measurer_->Prefetch(next);
  }

 private:
  std::unique_ptr<measure::Measurer> measurer_;
};

// A fake device for load benchmarks (bench/fleet_load): answers every
// request OK after `delay_us` of sleep with a time derived from the trial
// id, touching no OpenCL. Named as fake everywhere it is used.
class FakeBackend : public MeasurementBackend {
 public:
  // A device like a mid-range GPU (16 CUs, work-groups of 1024, 64 KiB of
  // local memory), so that the built-in templates have valid configs.
  // `name` tells where it is used.
  static tunefleet::v1::DeviceInfo FakeDevice(const std::string& name);

  FakeBackend(tunefleet::v1::DeviceInfo info, int delay_us)
      : info_(std::move(info)), delay_us_(delay_us) {}
  const tunefleet::v1::DeviceInfo& device_info() const override {
    return info_;
  }
  tunefleet::v1::Measurement Measure(
      const tunefleet::v1::MeasureRequest& request) override;

 private:
  tunefleet::v1::DeviceInfo info_;
  int delay_us_;
};

}  // namespace tunefleet::device_agent

#endif  // TUNEFLEET_DEVICE_AGENT_BACKEND_H_
