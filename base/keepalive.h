// HTTP/2 keepalive pings between tunefleet's clients (agents, the CLI) and
// tunefleet-server, so that a connection that died silently (a Wi-Fi
// partition, a NAT that forgot the flow) is noticed in seconds instead of
// after the kernel's TCP retransmission timeout (~15 min). Clients ping
// every kClientPingIntervalMs and drop the connection when no answer comes
// within kClientPingTimeoutMs; the server accepts pings that often (gRPC
// closes a connection with "too many pings" otherwise). Channel arguments:
// gRPC's doc/keepalive.md.
#ifndef TUNEFLEET_BASE_KEEPALIVE_H_
#define TUNEFLEET_BASE_KEEPALIVE_H_

namespace tunefleet::base {

inline constexpr int kClientPingIntervalMs = 10'000;
inline constexpr int kClientPingTimeoutMs = 5'000;
// The shortest ping interval the server accepts without a strike; below
// the clients' own interval, so their pings never count as abuse.
inline constexpr int kServerMinPingIntervalMs = kClientPingIntervalMs / 2;

}  // namespace tunefleet::base

#endif  // TUNEFLEET_BASE_KEEPALIVE_H_
