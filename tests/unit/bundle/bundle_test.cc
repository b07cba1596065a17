// Record bundles (bundle/, store/exchange.h): provenance as stored, export
// and merge between two real SQLite files, and the file reader on bad input
// (docs/BUNDLES.md).
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "bundle/bundle_file.h"
#include "bundle/content.h"
#include "bundle/keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "kernels_templates/registry.h"
#include "tests/support/small_job.h"
#include "tests/support/temp_store.h"

namespace tunefleet::bundle {
namespace {

using ::testing::HasSubstr;
using tunefleet::v1::Measurement;

// A fresh Ed25519 key pair as PEM texts (private, public).
std::pair<std::string, std::string> NewKeyPair() {
  base::PkeyPtr key(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519"));
  EXPECT_NE(key, nullptr);
  auto pem = [](auto write) {
    BIO* bio = BIO_new(BIO_s_mem());
    write(bio);
    char* data = nullptr;
    const long size = BIO_get_mem_data(bio, &data);
    std::string text(data, static_cast<size_t>(size));
    BIO_free(bio);
    return text;
  };
  return {pem([&](BIO* b) {
            PEM_write_bio_PrivateKey(b, key.get(), nullptr, nullptr, 0, nullptr,
                                     nullptr);
          }),
          pem([&](BIO* b) { PEM_write_bio_PUBKEY(b, key.get()); })};
}

Measurement Ok(double ns) {
  Measurement m;
  m.set_error(Measurement::OK);
  m.add_times_ns(ns);
  m.add_times_ns(ns + 1);
  return m;
}

class BundleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(a_, nullptr);
    ASSERT_NE(b_, nullptr);
  }

  // A job of `store` on "test-gpu" with trials of the given times (ns),
  // stored as an agent reports them (lease provenance included).
  static int64_t Tune(store::Store* store, const std::vector<double>& times,
                      uint64_t seed = 1) {
    tunefleet::v1::DeviceInfo info;
    info.set_device_name("Test GPU");
    info.set_driver_version("3.1-test");
    EXPECT_TRUE(store->UpsertDevice("test-gpu", info).ok());
    auto job = store->CreateJob(testing::SmallGemmJob(16, seed));
    EXPECT_TRUE(job.ok()) << job.status();
    EXPECT_TRUE(store->SetJobReference(*job, 5000).ok());
    std::vector<store::NewTrial> trials;
    for (size_t i = 0; i < times.size(); ++i) {
      trials.push_back({i, absl::StrCat("MWG=", 8 << i)});
    }
    auto ids = store->InsertTrials(*job, trials);
    EXPECT_TRUE(ids.ok());
    for (size_t i = 0; i < times.size(); ++i) {
      store::TrialLease lease{"agent-1", 1, 1000};
      lease.driver_version = "3.1-test";
      lease.kernel_sha256 = std::string(64, 'a' + static_cast<char>(i));
      EXPECT_TRUE(
          store->CompleteTrial((*ids)[i], Ok(times[i]), times[i], 1.0, lease)
              .ok());
    }
    return *job;
  }

  static std::vector<tunefleet::v1::TuningRecord> All(store::Store* s,
                                                      bool best = false) {
    store::RecordFilter filter;
    filter.best_only = best;
    auto records = s->QueryRecords(filter);
    EXPECT_TRUE(records.ok()) << records.status();
    return records.ok() ? *records : std::vector<tunefleet::v1::TuningRecord>{};
  }

  testing::TempStore a_db_{"bundle_a"};
  testing::TempStore b_db_{"bundle_b"};
  store::Store* a_ = a_db_.store();
  store::Store* b_ = b_db_.store();
};

TEST_F(BundleTest, EveryTrialKeepsItsProvenance) {
  Tune(a_, {300, 200});
  const auto records = All(a_);
  ASSERT_EQ(records.size(), 2u);
  const tunefleet::v1::Provenance& p = records[0].provenance();
  EXPECT_EQ(p.driver_version(), "3.1-test");
  EXPECT_EQ(p.kernel_sha256(), std::string(64, 'a'));
  EXPECT_EQ(p.tunefleet_version(), TUNEFLEET_VERSION);
  EXPECT_EQ(p.agent_name(), "agent-1");
  EXPECT_GT(p.measured_unix_ms(), 0);
  EXPECT_EQ(p.template_version(), records[0].template_version());
  EXPECT_EQ(p.template_source_hash().size(), 16u);
  EXPECT_EQ(p.measurement_id().size(), 64u);
  EXPECT_NE(p.measurement_id(), records[1].provenance().measurement_id());
  EXPECT_FALSE(p.imported());
}

TEST_F(BundleTest, ImportMergesOnceAndKeepsEveryMeasurement) {
  Tune(a_, {300, 200, 250});
  auto file = ExportBundle(*a_, {}, nullptr);
  ASSERT_TRUE(file.ok()) << file.status();
  auto first = ImportBundle(*b_, *file, nullptr);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->merged.trials_added, 3);
  EXPECT_EQ(first->merged.jobs_added, 1);
  EXPECT_EQ(first->merged.devices_added, 1);
  EXPECT_EQ(first->merged.templates_added, 1);

  const auto a_records = All(a_), b_records = All(b_);
  ASSERT_EQ(b_records.size(), a_records.size());
  for (size_t i = 0; i < a_records.size(); ++i) {
    EXPECT_EQ(b_records[i].provenance().measurement_id(),
              a_records[i].provenance().measurement_id());
    EXPECT_EQ(b_records[i].time_ns(), a_records[i].time_ns());
    EXPECT_EQ(b_records[i].provenance().kernel_sha256(),
              a_records[i].provenance().kernel_sha256());
    EXPECT_TRUE(b_records[i].provenance().imported());
  }
  EXPECT_EQ(All(b_, true)[0].time_ns(), 200);
  auto reference = b_->ReferenceTime("test-gpu", a_records[0].workload_key(),
                                     a_records[0].template_name());
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ(reference->value_or(0), 5000);
  // Transfer learning reads imported jobs as it reads local ones.
  auto history = b_->HistoryRecords("gemm", a_records[0].template_name(), 100);
  ASSERT_TRUE(history.ok());
  EXPECT_EQ(history->size(), 3u);

  // Twice: nothing new.
  auto second = ImportBundle(*b_, *file, nullptr);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->merged.trials_added, 0);
  EXPECT_EQ(second->merged.trials_present, 3);
  EXPECT_EQ(second->merged.jobs_added, 0);
  EXPECT_EQ(All(b_).size(), 3u);

  // Back to the site it came from: A recognises its own measurements.
  auto back = ExportBundle(*b_, {}, nullptr);
  ASSERT_TRUE(back.ok());
  auto home = ImportBundle(*a_, *back, nullptr);
  ASSERT_TRUE(home.ok()) << home.status();
  EXPECT_EQ(home->merged.trials_added, 0);
  EXPECT_EQ(home->merged.jobs_added, 0);
  EXPECT_EQ(All(a_).size(), 3u);
}

TEST_F(BundleTest, ASlowerImportNeverReplacesAFasterLocalRecord) {
  Tune(b_, {100}, /*seed=*/7);  // B's own, faster
  Tune(a_, {300, 200});
  auto file = ExportBundle(*a_, {}, nullptr);
  ASSERT_TRUE(file.ok());
  ASSERT_TRUE(ImportBundle(*b_, *file, nullptr).ok());
  EXPECT_EQ(All(b_).size(), 3u);  // every measurement kept
  const auto best = All(b_, true);
  ASSERT_EQ(best.size(), 1u);
  EXPECT_EQ(best[0].time_ns(), 100);
  EXPECT_FALSE(best[0].provenance().imported());
}

TEST_F(BundleTest, FiltersByDeviceKeyAndOp) {
  Tune(a_, {300});
  EXPECT_EQ(ExportBundle(*a_, {"other-gpu", ""}, nullptr).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(ExportBundle(*a_, {"", "conv2d"}, nullptr).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(ExportBundle(*a_, {"test-gpu", "gemm"}, nullptr).ok());
}

class BadBundleTest : public BundleTest {
 protected:
  void SetUp() override {
    BundleTest::SetUp();
    Tune(a_, {300, 200});
    auto [private_pem, public_pem] = NewKeyPair();
    auto key = SigningKey::FromPem(private_pem);
    ASSERT_TRUE(key.ok()) << key.status();
    key_ = std::make_unique<SigningKey>(*std::move(key));
    auto trust = TrustedKeys::FromPem(public_pem);
    ASSERT_TRUE(trust.ok()) << trust.status();
    trust_ = std::make_unique<TrustedKeys>(*std::move(trust));
    auto file = ExportBundle(*a_, {}, key_.get());
    ASSERT_TRUE(file.ok());
    file_ = *file;
  }

  // Imports `bytes` into B, expecting a refusal with `code` whose message
  // has `cause`, and B left empty.
  void ExpectRefused(const std::string& bytes, absl::StatusCode code,
                     const std::string& cause,
                     const TrustedKeys* trust = nullptr) {
    auto result = ImportBundle(*b_, bytes, trust);
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), code) << result.status();
    EXPECT_THAT(std::string(result.status().message()), HasSubstr(cause));
    EXPECT_TRUE(All(b_).empty());
    auto devices = b_->ListDevices();
    ASSERT_TRUE(devices.ok());
    EXPECT_TRUE(devices->empty());
  }

  // The file with its content replaced by `content` (digest and size made
  // to match, unsigned): what passes the envelope and reaches the reader.
  static std::string Rewrap(const std::string& content) {
    return *EncodeFile(content, nullptr);
  }
  std::string Content() const {
    return std::string(file_.substr(file_.find("\n\n") + 2));
  }

  std::unique_ptr<SigningKey> key_;
  std::unique_ptr<TrustedKeys> trust_;
  std::string file_;
};

TEST_F(BadBundleTest, SignedByATrustedKeyIsAccepted) {
  auto result = ImportBundle(*b_, file_, trust_.get());
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->signer_key_hex.size(), 64u);
  EXPECT_EQ(result->merged.trials_added, 2);
}

TEST_F(BadBundleTest, RefusesAFlippedByte) {
  std::string bytes = file_;
  bytes[bytes.size() - 10] ^= 0x01;
  ExpectRefused(bytes, absl::StatusCode::kDataLoss, "SHA-256 mismatch");
}

TEST_F(BadBundleTest, RefusesATruncatedOrPaddedFile) {
  ExpectRefused(file_.substr(0, file_.size() - 1), absl::StatusCode::kDataLoss,
                "truncated");
  ExpectRefused(file_.substr(0, 20), absl::StatusCode::kInvalidArgument,
                "not a tunefleet record bundle");
  ExpectRefused(file_ + "x", absl::StatusCode::kDataLoss, "truncated");
}

TEST_F(BadBundleTest, RefusesAnAlteredSignatureOrHeader) {
  std::string bytes = file_;
  const size_t sig = bytes.find("signature ed25519 ");
  ASSERT_NE(sig, std::string::npos);
  const size_t last = bytes.find('\n', sig) - 1;
  bytes[last] = bytes[last] == '0' ? '1' : '0';
  ExpectRefused(bytes, absl::StatusCode::kPermissionDenied,
                "signature does not verify");
  ExpectRefused("tunefleet-bundle 2\n" + file_.substr(file_.find('\n') + 1),
                absl::StatusCode::kInvalidArgument, "format version 2");
  ExpectRefused("hello\n", absl::StatusCode::kInvalidArgument,
                "not a tunefleet record bundle");
  ExpectRefused("", absl::StatusCode::kInvalidArgument,
                "not a tunefleet record bundle");
}

TEST_F(BadBundleTest, RefusesUntrustedAndUnsignedBundles) {
  auto [other_private, other_public] = NewKeyPair();
  auto other = TrustedKeys::FromPem(other_public);
  ASSERT_TRUE(other.ok());
  ExpectRefused(file_, absl::StatusCode::kPermissionDenied, "untrusted key",
                &*other);
  ExpectRefused(Rewrap(Content()), absl::StatusCode::kPermissionDenied,
                "unsigned", trust_.get());
}

TEST_F(BadBundleTest, RefusesMalformedContent) {
  ExpectRefused(Rewrap("{not json"), absl::StatusCode::kInvalidArgument,
                "not valid JSON");
  ExpectRefused(Rewrap("[]"), absl::StatusCode::kInvalidArgument,
                "the top level is not an object");
  ExpectRefused(Rewrap("{\"format\":\"zip\"}"),
                absl::StatusCode::kInvalidArgument, "format is not");
  ExpectRefused(Rewrap(std::string(100, '[') + std::string(100, ']')),
                absl::StatusCode::kInvalidArgument, "nested deeper");
  // The content with one edit each: a field removed, a field of the wrong
  // type, a newer content version, a measurement whose content no longer
  // matches its identity.
  const std::string content = Content();
  const struct {
    const char* from;
    const char* to;
    const char* cause;
  } kEdits[] = {
      {"\"config\":", "\"konfig\":", "trials[0].config is missing"},
      {"\"format_version\":1", "\"format_version\":\"1\"",
       "format_version is not an integer"},
      {"\"format_version\":1", "\"format_version\":9", "format_version 9"},
      {"\"agent_name\":\"agent-1\"", "\"agent_name\":\"agent-2\"",
       "does not match its content"},
  };
  for (const auto& edit : kEdits) {
    SCOPED_TRACE(edit.to);
    std::string edited = content;
    const size_t at = edited.find(edit.from);
    ASSERT_NE(at, std::string::npos);
    edited.replace(at, std::strlen(edit.from), edit.to);
    ExpectRefused(Rewrap(edited), absl::StatusCode::kInvalidArgument,
                  edit.cause);
  }
}

TEST_F(BadBundleTest, KeysOfTheWrongKindAreRefused) {
  EXPECT_EQ(SigningKey::FromPem("nope").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TrustedKeys::FromPem("").status().code(),
            absl::StatusCode::kInvalidArgument);
  base::PkeyPtr rsa(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  ASSERT_NE(rsa, nullptr);
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PUBKEY(bio, rsa.get());
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  const std::string pem(data, static_cast<size_t>(size));
  BIO_free(bio);
  auto status = TrustedKeys::FromPem(pem).status();
  EXPECT_THAT(std::string(status.message()), HasSubstr("not an Ed25519"));
}

}  // namespace
}  // namespace tunefleet::bundle
