#include "client/channel.h"

#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "base/files.h"
#include "base/host_port.h"
#include "base/keepalive.h"
#include "base/status_macros.h"
#include "grpcpp/support/client_interceptor.h"

namespace tunefleet::client {
namespace {

// Adds "authorization: Bearer <token>" to the call's initial metadata.
class BearerInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit BearerInterceptor(const std::string* token) : token_(token) {}
  void Intercept(
      grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::
                PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->emplace(
          kAuthorizationMetadataKey, absl::StrCat(kBearerPrefix, *token_));
    }
    methods->Proceed();
  }

 private:
  const std::string* token_;  // owned by the factory, which the channel keeps
};

class BearerInterceptorFactory
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerInterceptorFactory(std::string token)
      : token_(std::move(token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    // gRPC takes ownership of the interceptor and deletes it with the call.
    return std::make_unique<BearerInterceptor>(&token_).release();
  }

 private:
  const std::string token_;
};

}  // namespace

absl::StatusOr<std::string> ReadTokenFile(const std::string& path) {
  absl::StatusOr<std::string> text = base::ReadWholeFile(path, "token file");
  if (!text.ok()) return text.status();
  absl::string_view line = *text;
  line = line.substr(0, line.find('\n'));
  line = absl::StripAsciiWhitespace(line);
  if (line.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", path, " is empty"));
  }
  return std::string(line);
}

absl::StatusOr<ChannelOptions> LoadChannelOptions(const ChannelFiles& files) {
  ChannelOptions options;
  if (!files.token.empty() && !files.token_file.empty()) {
    return absl::InvalidArgumentError(
        "--token and --token-file: give one of them, not both");
  }
  options.token = std::string(absl::StripAsciiWhitespace(files.token));
  if (!files.token_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile(files.token_file);
    if (!token.ok()) return token.status();
    options.token = *std::move(token);
  }
  if (files.client_cert_file.empty() != files.client_key_file.empty()) {
    return absl::InvalidArgumentError(
        "--client-cert and --client-key go together");
  }
  if (!files.client_cert_file.empty() && files.ca_file.empty()) {
    return absl::InvalidArgumentError(
        "--client-cert needs TLS: pass --ca FILE too");
  }
  if (!files.ca_file.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(options.ca_pem,
                               base::ReadWholeFile(files.ca_file, "CA file"));
  }
  if (!files.client_cert_file.empty()) {
    TUNEFLEET_ASSIGN_OR_RETURN(
        options.client_cert_pem,
        base::ReadWholeFile(files.client_cert_file, "client certificate"));
    TUNEFLEET_ASSIGN_OR_RETURN(
        options.client_key_pem,
        base::ReadWholeFile(files.client_key_file, "client key"));
  }
  return options;
}

absl::StatusOr<std::string> CheckServerAddress(absl::string_view address) {
  TUNEFLEET_ASSIGN_OR_RETURN(base::HostPort parsed,
                             base::ParseHostPort(address, "--server"));
  return parsed.ToString();
}

absl::Status CheckTokenTransport(absl::string_view address,
                                 const ChannelOptions& options, bool insecure) {
  if (options.token.empty() || !options.ca_pem.empty() || insecure) {
    return absl::OkStatus();
  }
  TUNEFLEET_ASSIGN_OR_RETURN(base::HostPort parsed,
                             base::ParseHostPort(address, "--server"));
  if (base::IsLoopbackHost(parsed.host)) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "refusing to send the access token in clear text to ", address,
      " (not a loopback address): pass --ca CA.pem to use TLS, or "
      "--insecure to send it in plaintext anyway"));
}

std::shared_ptr<grpc::Channel> CreateServerChannel(
    const std::string& address, const ChannelOptions& options) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.ca_pem.empty()) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = options.ca_pem;
    ssl.pem_cert_chain = options.client_cert_pem;
    ssl.pem_private_key = options.client_key_pem;
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, base::kClientPingIntervalMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, base::kClientPingTimeoutMs);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  if (options.token.empty()) {
    return grpc::CreateCustomChannel(address, credentials, args);
  }
  std::vector<
      std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(
      std::make_unique<BearerInterceptorFactory>(options.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      address, credentials, args, std::move(interceptors));
}

absl::StatusOr<ServerConnection> ConnectionTo(const std::string& address,
                                              const ChannelFiles& files) {
  TUNEFLEET_ASSIGN_OR_RETURN(std::string checked, CheckServerAddress(address));
  TUNEFLEET_ASSIGN_OR_RETURN(ChannelOptions channel, LoadChannelOptions(files));
  TUNEFLEET_RETURN_IF_ERROR(
      CheckTokenTransport(checked, channel, files.insecure));
  return ServerConnection{std::move(checked), std::move(channel)};
}

std::shared_ptr<grpc::Channel> Dial(const ServerConnection& connection) {
  return CreateServerChannel(connection.address, connection.channel);
}

}  // namespace tunefleet::client
