// Network matching shared by evaluation and the resolvers. Not public API.
#ifndef AUTHCACHE_SRC_INTERNAL_NET_MATCH_H_
#define AUTHCACHE_SRC_INTERNAL_NET_MATCH_H_

#include "libshare/options.h"

namespace authcache::internal {

// The prefix length implied by a network written without one: every byte
// up to the last non-zero byte ("@10.0.0.0" is /8, "@10.1.0.0" is /16), in
// bits of the network's own family.
int PrefixFromTrailingZeros(const libshare::IpAddress& network);

// Whether `client` lies in `network` with a prefix length as written in an
// access list (IPv4: 0-32, IPv6: 0-128, -1: implied). Families never mix.
bool InWrittenNetwork(const libshare::IpAddress& client,
                      const libshare::IpAddress& network,
                      int prefix_len_as_written);

}  // namespace authcache::internal

#endif  // AUTHCACHE_SRC_INTERNAL_NET_MATCH_H_
