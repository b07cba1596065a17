// How the server admits agents to a device key (server/agent_service.h),
// over real gRPC streams to a server in this process with a real SQLite
// file: two unlike agents connecting at the same moment cannot both join a
// key (the device check and the joining are one step), and an agent of an
// older build (Hello.device_info_revision 0, no image fields) does not
// overwrite the image fields a newer agent stored for its key.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "client/channel.h"
#include "contract/device_info_revision.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "tests/support/agent_hello.h"
#include "tunefleet/v1/agent.grpc.pb.h"

namespace tunefleet {
namespace {

tunefleet::v1::DeviceInfo Device(uint32_t compute_units) {
  tunefleet::v1::DeviceInfo d;
  d.set_device_name("test-gpu");
  d.set_vendor("tests");
  d.set_device_type("GPU");
  d.set_driver_version("1.0");
  d.set_compute_units(compute_units);
  d.set_max_work_group_size(256);
  d.add_max_work_item_sizes(256);
  d.add_max_work_item_sizes(256);
  d.add_max_work_item_sizes(64);
  d.set_local_mem_bytes(32768);
  d.set_max_mem_alloc_bytes(1 << 28);
  d.set_global_mem_bytes(1 << 30);
  d.set_max_clock_mhz(1000);
  d.set_preferred_vector_width_float(4);
  d.set_native_vector_width_float(4);
  d.set_address_bits(64);
  d.set_opencl_c_version("OpenCL C 1.2");
  d.set_device_version("OpenCL 1.2");
  d.set_platform_name("tests");
  d.set_platform_version("OpenCL 1.2");
  return d;
}

// An agent stream that said Hello: connected (welcomed) until destroyed,
// or refused with status().
class Agent {
 public:
  Agent(const std::string& address, const std::string& key,
        const tunefleet::v1::DeviceInfo& device, uint32_t revision)
      : stub_(tunefleet::v1::AgentService::NewStub(client::Dial({address}))),
        stream_(stub_->Connect(&context_)) {
    stream_->Write(testing::AgentHello(
        key, device, absl::StrCat("admission-", device.compute_units()),
        revision));
    tunefleet::v1::ServerMessage reply;
    welcomed_ = stream_->Read(&reply) && reply.has_welcome();
    if (!welcomed_) status_ = stream_->Finish();
  }
  ~Agent() {
    if (!welcomed_) return;
    stream_->WritesDone();
    (void)stream_->Finish();
  }
  bool welcomed() const { return welcomed_; }
  const grpc::Status& status() const { return status_; }

 private:
  std::unique_ptr<tunefleet::v1::AgentService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<tunefleet::v1::AgentMessage,
                                           tunefleet::v1::ServerMessage>>
      stream_;
  bool welcomed_ = false;
  grpc::Status status_;
};

class AgentAdmission : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = absl::StrCat(
        ::testing::TempDir(), "/admission_", getpid(), "_",
        ::testing::UnitTest::GetInstance()->current_test_info()->name(), ".db");
    Remove();
    server::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.db_path = db_;
    options.verbose = false;
    options.no_auth = true;
    auto server = server::Server::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  void TearDown() override {
    server_.reset();
    Remove();
  }
  void Remove() {
    for (const char* suffix : {"", "-wal", "-shm", "-openers", "-owner"}) {
      std::filesystem::remove(db_ + suffix);
    }
  }
  std::string db_;
  std::unique_ptr<server::Server> server_;
};

TEST_F(AgentAdmission, TwoUnlikeAgentsConnectingAtOnceAreNotBothAdmitted) {
  // The first agent is held between its device check and its joining;
  // the second, of another device, connects meanwhile.
  absl::Notification first_checked, release_first;
  std::atomic<int> admissions{0};
  server_->agent_service().SetAdmitHookForTest(
      [&](const tunefleet::v1::Hello&) {
        if (admissions.fetch_add(1) == 0) {
          first_checked.Notify();
          release_first.WaitForNotification();
        }
      });
  std::unique_ptr<Agent> first, second;
  std::thread a([&] {
    first = std::make_unique<Agent>(server_->address(), "shared", Device(8),
                                    contract::kDeviceInfoRevision);
  });
  first_checked.WaitForNotification();
  absl::Notification second_done;
  std::thread b([&] {
    second = std::make_unique<Agent>(server_->address(), "shared", Device(4),
                                     contract::kDeviceInfoRevision);
    second_done.Notify();
  });
  // Without one admission lock the second passes its check now, against
  // a key nobody has joined yet.
  (void)second_done.WaitForNotificationWithTimeout(absl::Seconds(2));
  release_first.Notify();
  a.join();
  b.join();
  ASSERT_TRUE(first->welcomed());
  EXPECT_FALSE(second->welcomed()) << "two unlike devices share a key";
  EXPECT_EQ(second->status().error_code(),
            grpc::StatusCode::FAILED_PRECONDITION)
      << second->status().error_message();
  EXPECT_NE(second->status().error_message().find("compute_units 4, not 8"),
            std::string::npos)
      << second->status().error_message();
}

TEST_F(AgentAdmission, AnOlderAgentKeepsTheKeysImageFields) {
  tunefleet::v1::DeviceInfo newer = Device(8);
  newer.set_image_support(true);
  newer.set_image2d_max_width(16384);
  newer.set_image2d_max_height(16384);
  newer.set_image_max_buffer_size(1 << 26);
  newer.set_image_pitch_alignment(64);
  newer.add_libraries("clblast");
  { Agent agent(server_->address(), "board", newer, 2); }
  // An agent of an earlier build fills none of the image fields (revision
  // 0) nor the libraries (revision 1).
  tunefleet::v1::DeviceInfo older = Device(8);
  {
    Agent agent(server_->address(), "board", older, 0);
    ASSERT_TRUE(agent.welcomed()) << agent.status().error_message();
  }
  auto stored = server_->store().GetDevice("board");
  ASSERT_TRUE(stored.ok()) << stored.status();
  EXPECT_TRUE(stored->image_support());
  EXPECT_EQ(stored->image2d_max_width(), 16384u);
  EXPECT_EQ(stored->image2d_max_height(), 16384u);
  EXPECT_EQ(stored->image_max_buffer_size(), uint64_t{1} << 26);
  EXPECT_EQ(stored->image_pitch_alignment(), 64u);
  ASSERT_EQ(stored->libraries_size(), 1);
  EXPECT_EQ(stored->libraries(0), "clblast");
  // What it does report is stored.
  {
    tunefleet::v1::DeviceInfo newer_driver = older;
    newer_driver.set_max_clock_mhz(1200);
    Agent agent(server_->address(), "board", newer_driver, 1);
    ASSERT_TRUE(agent.welcomed()) << agent.status().error_message();
  }
  stored = server_->store().GetDevice("board");
  ASSERT_TRUE(stored.ok());
  EXPECT_EQ(stored->max_clock_mhz(), 1200u);
  EXPECT_FALSE(stored->image_support()) << "revision 1 reports images";
  ASSERT_EQ(stored->libraries_size(), 1) << "revision 1 has no libraries";
}

}  // namespace
}  // namespace tunefleet
