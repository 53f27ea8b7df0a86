// PgEngine: the cluster engine on PostgreSQL, through libpq (no ORM). One
// object is one connection (ClusterEngine's contract).
//
// Schema (made by the first head that connects, in a transaction under an
// advisory lock, so heads starting together make it once): tables
// sharemgr_cluster (one row: schema version, generation, cluster id),
// sharemgr_groups, sharemgr_shares and sharemgr_changes (the change log).
// Names, paths, options and texts are bytea: paths need not be UTF-8
// (Latin-1 file names), and a database's encoding must not refuse them.
//
// The URL is a libpq connection string or a postgresql:// URI (several
// hosts with target_session_attrs=read-write work as libpq documents).
// Credentials come from libpq's usual places (~/.pgpass, PGPASSFILE, a
// service file): a URL that carries a password is refused, since any user
// reads it in ps.
#ifndef LIBSHARE_PG_PG_ENGINE_H_
#define LIBSHARE_PG_PG_ENGINE_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "libshare/cluster_engine.h"

namespace libshare {

// The schema version PgEngine writes (sharemgr_cluster.schema_version).
inline constexpr int kPgSchemaVersion = 2;  // 2: shares.fs_identity

// Whether `url` names a PostgreSQL engine ("postgresql://", "postgres://",
// or a key=value connection string) rather than "sqlite:PATH".
bool IsPostgresUrl(std::string_view url);

// Refuses a URL libpq cannot parse, or one with a password in it; the
// error says where credentials belong.
[[nodiscard]] absl::Status CheckPostgresUrl(const std::string& url);

// "PostgreSQL at HOST:PORT, database DB" from the URL (before connecting).
std::string DescribePostgresUrl(const std::string& url);

// Connects (connect_timeout 5 s and TCP keepalives unless the URL says
// otherwise), makes the schema if the database has none, and checks its
// version. `application_name`: how pg_stat_activity shows the head.
[[nodiscard]] absl::StatusOr<std::unique_ptr<ClusterEngine>> ConnectPostgres(
    const std::string& url, const std::string& application_name);

}  // namespace libshare

#endif  // LIBSHARE_PG_PG_ENGINE_H_
