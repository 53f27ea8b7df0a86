#include "pg_engine.h"

#include <libpq-fe.h>
#include <poll.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/types/span.h"

namespace libshare {
namespace {

constexpr unsigned kByteaOid = 17;
constexpr char kChannel[] = "sharemgr";

absl::string_view A(std::string_view s) { return {s.data(), s.size()}; }

// libpq's messages run over lines ("...failed: ...\n\tIs the server
// running..."): one line for logs and replies.
std::string OneLine(const char* msg) {
  std::string out;
  bool space = false;
  for (const char* p = msg; p != nullptr && *p != '\0'; ++p) {
    if (*p == '\n' || *p == '\t' || *p == '\r') {
      space = !out.empty();
      continue;
    }
    if (space) out.push_back(' ');
    space = false;
    out.push_back(*p);
  }
  return out;
}

const char kSchema[] = R"sql(
CREATE TABLE IF NOT EXISTS sharemgr_cluster (
  one boolean PRIMARY KEY DEFAULT true CHECK (one),
  schema_version integer NOT NULL,
  generation bigint NOT NULL,
  cluster_id text NOT NULL);
CREATE TABLE IF NOT EXISTS sharemgr_groups (
  name bytea PRIMARY KEY,
  enabled boolean NOT NULL,
  options bytea NOT NULL,
  managed_by bytea NOT NULL);
CREATE TABLE IF NOT EXISTS sharemgr_shares (
  path bytea PRIMARY KEY,
  grp bytea NOT NULL,
  resource bytea NOT NULL,
  description bytea NOT NULL,
  options bytea NOT NULL,
  fs_identity text NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS sharemgr_shares_by_group ON sharemgr_shares(grp);
CREATE TABLE IF NOT EXISTS sharemgr_changes (
  generation bigint PRIMARY KEY,
  committed timestamptz NOT NULL DEFAULT now(),
  head text NOT NULL,
  batch bytea NOT NULL);
)sql";

// One result, cleared when it goes.
struct Result {
  PGresult* r = nullptr;
  explicit Result(PGresult* p) : r(p) {}
  ~Result() { PQclear(r); }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ExecStatusType status() const {
    return r == nullptr ? PGRES_FATAL_ERROR : PQresultStatus(r);
  }
  std::string_view Bytes(int row, int col) const {
    return {PQgetvalue(r, row, col),
            static_cast<std::size_t>(PQgetlength(r, row, col))};
  }
};

// A parameter of a statement: bytea (binary) or text.
struct Param {
  std::string_view value;
  bool binary = true;
};

// A statement's parameters as libpq takes them: bytea ones in binary,
// text ones copied (libpq reads them up to their NUL).
struct Params {
  explicit Params(const std::vector<Param>& params) {
    texts.reserve(params.size());
    for (const Param& p : params) {
      if (p.binary) {
        values.push_back(p.value.data() != nullptr ? p.value.data() : "");
      } else {
        texts.emplace_back(p.value);
        values.push_back(texts.back().c_str());
      }
      lengths.push_back(static_cast<int>(p.value.size()));
      formats.push_back(p.binary ? 1 : 0);
      types.push_back(p.binary ? kByteaOid : 0);
    }
  }
  int count() const { return static_cast<int>(values.size()); }
  std::vector<std::string> texts;
  std::vector<const char*> values;
  std::vector<int> lengths, formats;
  std::vector<unsigned> types;
};

uint64_t BigEndian64(std::string_view b) {
  uint64_t v = 0;
  for (std::size_t i = 0; i < 8 && i < b.size(); ++i) {
    v = (v << 8) | static_cast<uint8_t>(b[i]);
  }
  return v;
}

void AppendCopyBytea(std::string& out, std::string_view v) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += "\\\\x";
  for (unsigned char c : v) {
    out.push_back(kHex[c >> 4]);
    out.push_back(kHex[c & 15]);
  }
}

// The keywords of a parsed connection string, freed when it goes.
struct ConnInfo {
  PQconninfoOption* opts = nullptr;
  std::string error;
  explicit ConnInfo(const std::string& url) {
    char* err = nullptr;
    opts = PQconninfoParse(url.c_str(), &err);
    if (err != nullptr) {
      error = std::string(absl::StripTrailingAsciiWhitespace(err));
      PQfreemem(err);
    }
  }
  ~ConnInfo() {
    if (opts != nullptr) PQconninfoFree(opts);
  }
  std::string Get(std::string_view key) const {
    for (PQconninfoOption* o = opts; o != nullptr && o->keyword != nullptr;
         ++o) {
      if (key == o->keyword && o->val != nullptr) return o->val;
    }
    return "";
  }
};

class PgEngine final : public ClusterEngine {
 public:
  explicit PgEngine(PGconn* conn) : conn_(conn) {}
  ~PgEngine() override { PQfinish(conn_); }

  absl::Status Prepare() {
    if (absl::Status s = Exec("SET client_min_messages = warning"); !s.ok()) {
      return s;
    }
    // Made once, by one head at a time.
    if (absl::Status s = Exec("BEGIN"); !s.ok()) return s;
    absl::Status s = Exec("SELECT pg_advisory_xact_lock(7011903223)");
    if (s.ok()) s = Exec(kSchema);
    // Version 1 had no recorded file-system identities (issue 46, item 6).
    if (s.ok()) {
      s = Exec(
          "ALTER TABLE sharemgr_shares ADD COLUMN IF NOT EXISTS fs_identity "
          "text NOT NULL DEFAULT ''; "
          "UPDATE sharemgr_cluster SET schema_version = 2 "
          "WHERE schema_version = 1");
    }
    if (s.ok()) {
      s = Exec(absl::StrCat(
          "INSERT INTO sharemgr_cluster(schema_version, generation, "
          "cluster_id) VALUES (",
          kPgSchemaVersion,
          ", 1, gen_random_uuid()::text) ON CONFLICT (one) DO NOTHING"));
    }
    if (s.ok()) s = Exec("COMMIT");
    if (!s.ok()) {
      Rollback();
      return absl::FailedPreconditionError(absl::StrCat(
          where(), ": not a sharemgr database, or one this program cannot "
                   "use (",
          s.message(), ")"));
    }
    Result r(PQexec(conn_, "SELECT schema_version FROM sharemgr_cluster"));
    if (r.status() != PGRES_TUPLES_OK || PQntuples(r.r) != 1) {
      return Error("reading the schema version", r);
    }
    int version = 0;
    if (!absl::SimpleAtoi(PQgetvalue(r.r, 0, 0), &version)) version = -1;
    if (version != kPgSchemaVersion) {
      return absl::FailedPreconditionError(absl::StrCat(
          where(), ": the database holds sharemgr schema version ", version,
          version > kPgSchemaVersion ? ", newer than" : ", other than",
          " this program's ", kPgSchemaVersion,
          ": use a sharemgrd of that version, or another database"));
    }
    return absl::OkStatus();
  }

  std::string where() const override {
    const char* host = PQhost(conn_);
    std::string h = host == nullptr || *host == '\0' ? "local socket" : host;
    return absl::StrCat("PostgreSQL at ", h, ":", PQport(conn_),
                        ", database ", PQdb(conn_));
  }

  bool in_transaction() const override {
    const PGTransactionStatusType t = PQtransactionStatus(conn_);
    return t == PQTRANS_INTRANS || t == PQTRANS_INERROR ||
           t == PQTRANS_ACTIVE;
  }

  absl::StatusOr<EngineHead> Lock() override {
    if (!in_transaction()) {
      if (absl::Status s = Exec("BEGIN"); !s.ok()) return s;
    }
    absl::StatusOr<EngineHead> h = ReadHead(" FOR UPDATE");
    locked_ = h.ok();
    return h;
  }

  absl::Status AppendChange(uint64_t generation, std::string_view head,
                            std::string_view batch) override {
    const std::string gen = absl::StrCat(generation);
    return Run(
        "INSERT INTO sharemgr_changes(generation, head, batch) "
        "VALUES ($1::bigint, $2::text, $3)",
        {{gen, false}, {head, false}, {batch}}, "recording the change", -1);
  }

  absl::Status Publish(uint64_t generation) override {
    const std::string gen = absl::StrCat(generation);
    if (absl::Status s =
            Run("UPDATE sharemgr_cluster SET generation = $1::bigint",
                {{gen, false}}, "saving the generation", 1);
        !s.ok()) {
      return s;
    }
    return Run(absl::StrCat("SELECT pg_notify('", kChannel, "', $1)"),
               {{gen, false}}, "notifying the heads", -1);
  }

  absl::Status Commit() override {
    absl::Status s = Flush();
    locked_ = false;
    if (!s.ok()) {
      Rollback();
      return s;
    }
    return Exec("COMMIT");
  }

  void Rollback() override {
    (void)Flush();
    locked_ = false;
    if (PQtransactionStatus(conn_) != PQTRANS_IDLE &&
        PQstatus(conn_) == CONNECTION_OK) {
      Result r(PQexec(conn_, "ROLLBACK"));
    }
  }

  absl::StatusOr<EngineHead> Head() override { return ReadHead(""); }

  absl::StatusOr<std::vector<EngineChange>> ChangesAfter(
      uint64_t after, uint64_t up_to) override {
    const std::string a = absl::StrCat(after), u = absl::StrCat(up_to);
    absl::StatusOr<std::unique_ptr<Result>> r = Query(
        "SELECT generation, head, batch FROM sharemgr_changes WHERE "
        "generation > $1::bigint AND generation <= $2::bigint ORDER BY "
        "generation",
        {{a, false}, {u, false}}, "reading the change log");
    if (!r.ok()) return r.status();
    const Result& res = **r;
    std::vector<EngineChange> out;
    const int n = PQntuples(res.r);
    out.reserve(n);
    for (int i = 0; i < n; ++i) {
      EngineChange c;
      c.generation = BigEndian64(res.Bytes(i, 0));
      c.head = std::string(res.Bytes(i, 1));
      c.batch = std::string(res.Bytes(i, 2));
      out.push_back(std::move(c));
    }
    return out;
  }

  absl::StatusOr<EngineTable> LoadTable() override {
    const bool own = !in_transaction();
    if (own) {
      if (absl::Status s =
              Exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
          !s.ok()) {
        return s;
      }
    }
    absl::StatusOr<EngineTable> t = ReadTable();
    if (own) {
      if (t.ok()) {
        if (absl::Status s = Exec("COMMIT"); !s.ok()) return s;
      } else {
        Rollback();
      }
    }
    return t;
  }

  absl::Status Listen() override {
    return Exec(absl::StrCat("LISTEN ", kChannel));
  }

  absl::StatusOr<bool> Wait(int timeout_ms) override {
    if (Drain()) return true;
    pollfd p{PQsocket(conn_), POLLIN, 0};
    if (p.fd < 0) return Lost("waiting for changes");
    const int n = ::poll(&p, 1, timeout_ms);
    if (n < 0 && errno != EINTR) return Lost("waiting for changes");
    if (n > 0 && PQconsumeInput(conn_) == 0) return Lost("waiting for changes");
    if (PQstatus(conn_) != CONNECTION_OK) return Lost("waiting for changes");
    return Drain();
  }

  // ---- TableWriter.
  absl::Status InsertGroup(const GroupRow& g) override {
    return Run(
        "INSERT INTO sharemgr_groups(name, enabled, options, managed_by) "
        "VALUES ($1, $2::boolean, $3, $4)",
        {{g.name}, {g.enabled ? "t" : "f", false}, {g.options}, {g.managed_by}},
        absl::StrCat("adding group ", g.name), 1);
  }
  absl::Status DeleteGroup(std::string_view name, bool has_shares) override {
    const std::string what = absl::StrCat("deleting group ", A(name));
    if (has_shares) {
      if (absl::Status s = Run("DELETE FROM sharemgr_shares WHERE grp = $1",
                               {{name}}, what, -1);
          !s.ok()) {
        return s;
      }
    }
    return Run("DELETE FROM sharemgr_groups WHERE name = $1", {{name}}, what,
               1);
  }
  absl::Status SetGroupEnabled(std::string_view name, bool enabled) override {
    return Run("UPDATE sharemgr_groups SET enabled = $2::boolean WHERE name = $1",
               {{name}, {enabled ? "t" : "f", false}},
               absl::StrCat("enabling or disabling group ", A(name)), 1);
  }
  absl::Status SetGroupOptions(std::string_view name,
                               std::string_view options) override {
    return Run("UPDATE sharemgr_groups SET options = $2 WHERE name = $1",
               {{name}, {options}},
               absl::StrCat("setting options of group ", A(name)), 1);
  }
  absl::Status SetGroupManager(std::string_view name,
                               std::string_view file) override {
    return Run("UPDATE sharemgr_groups SET managed_by = $2 WHERE name = $1",
               {{name}, {file}},
               absl::StrCat("marking group ", A(name), " as followed"), 1);
  }
  absl::Status InsertShares(absl::Span<const ShareFields> rows) override {
    if (rows.empty()) return absl::OkStatus();
    if (absl::Status s = Flush(); !s.ok()) return s;
    {
      Result r(PQexec(conn_,
                      "COPY sharemgr_shares(path, grp, resource, description, "
                      "options, fs_identity) FROM STDIN"));
      if (r.status() != PGRES_COPY_IN) return Error("adding shares", r);
    }
    std::string buf;
    buf.reserve(64 * 1024);
    bool ok = true;
    auto flush = [&] {
      if (ok && !buf.empty()) {
        ok = PQputCopyData(conn_, buf.data(), static_cast<int>(buf.size())) == 1;
      }
      buf.clear();
    };
    for (const ShareFields& f : rows) {
      AppendCopyBytea(buf, f.path);
      buf.push_back('\t');
      AppendCopyBytea(buf, f.group);
      buf.push_back('\t');
      AppendCopyBytea(buf, f.resource);
      buf.push_back('\t');
      AppendCopyBytea(buf, f.description);
      buf.push_back('\t');
      AppendCopyBytea(buf, f.options);
      buf.push_back('\t');
      // ASCII ("uuid:" and hex digits, fs_identity.h): nothing to escape.
      buf.append(f.fs_identity);
      buf.push_back('\n');
      if (buf.size() >= 60 * 1024) flush();
    }
    flush();
    if (PQputCopyEnd(conn_, ok ? nullptr : "sharemgr: copy failed") != 1) {
      return Lost("adding shares");
    }
    Result r(PQgetResult(conn_));
    absl::Status s = r.status() == PGRES_COMMAND_OK
                         ? absl::OkStatus()
                         : Error("adding shares", r);
    while (PGresult* more = PQgetResult(conn_)) PQclear(more);
    return s;
  }
  absl::Status DeleteShare(uint64_t, std::string_view path) override {
    return Run("DELETE FROM sharemgr_shares WHERE path = $1", {{path}},
               absl::StrCat("removing share ", A(path)), 1);
  }
  absl::Status MoveShare(uint64_t, std::string_view path,
                         std::string_view group) override {
    return Run("UPDATE sharemgr_shares SET grp = $2 WHERE path = $1",
               {{path}, {group}}, absl::StrCat("moving share ", A(path)), 1);
  }
  absl::Status SetShareOptions(uint64_t, std::string_view path,
                               std::string_view options) override {
    return Run("UPDATE sharemgr_shares SET options = $2 WHERE path = $1",
               {{path}, {options}},
               absl::StrCat("setting options of share ", A(path)), 1);
  }
  absl::Status SetShareText(uint64_t, std::string_view path,
                            std::string_view description,
                            std::string_view resource) override {
    return Run(
        "UPDATE sharemgr_shares SET description = $2, resource = $3 WHERE "
        "path = $1",
        {{path}, {description}, {resource}},
        absl::StrCat("setting the texts of share ", A(path)), 1);
  }

 private:
  absl::Status Lost(std::string_view what) {
    return absl::UnavailableError(absl::StrCat(
        where(), ": connection lost while ", A(what), ": ",
        OneLine(PQerrorMessage(conn_))));
  }
  absl::Status Error(std::string_view what, const Result& r) {
    if (PQstatus(conn_) != CONNECTION_OK) return Lost(what);
    const char* msg =
        r.r != nullptr ? PQresultErrorMessage(r.r) : PQerrorMessage(conn_);
    const std::string text =
        absl::StrCat(where(), ": ", A(what), ": ", OneLine(msg));
    // The engine going away: libpq's own error (no SQLSTATE; libpq may
    // not have marked the connection bad yet), a connection exception
    // (class 08) or the server shutting down (57P01-57P03).
    const char* state =
        r.r != nullptr ? PQresultErrorField(r.r, PG_DIAG_SQLSTATE) : nullptr;
    const std::string_view code = state != nullptr ? state : "";
    if (code.empty() || code.substr(0, 2) == "08" ||
        code.substr(0, 3) == "57P") {
      return absl::UnavailableError(text);
    }
    return absl::InternalError(text);
  }
  absl::Status Exec(const std::string& sql) {
    if (absl::Status s = Flush(); !s.ok()) return s;
    Result r(PQexec(conn_, sql.c_str()));
    if (r.status() == PGRES_COMMAND_OK || r.status() == PGRES_TUPLES_OK) {
      return absl::OkStatus();
    }
    return Error(std::string_view(sql).substr(0, 40), r);
  }
  // Runs a statement; `rows` >= 0: it must change exactly that many rows.
  // Inside a batch's transaction (after Lock) the statement is only sent:
  // statements go in libpq's pipeline mode, many per round trip (15,000
  // removes one at a time took 1.4 s, a round trip each), and their
  // results are read by Flush, before any read, COPY or the commit.
  absl::Status Run(const std::string& sql, std::vector<Param> params,
                   const std::string& what, int rows) {
    if (locked_) return Send(sql, params, what, rows);
    absl::StatusOr<std::unique_ptr<Result>> r = Query(sql, params, what);
    if (!r.ok()) return r.status();
    return RowsChanged(**r, what, rows);
  }
  absl::Status RowsChanged(const Result& r, const std::string& what,
                           int rows) {
    if (rows < 0) return absl::OkStatus();
    const char* n = PQcmdTuples(r.r);
    int changed = -1;
    if (n == nullptr || !absl::SimpleAtoi(n, &changed) || changed != rows) {
      return absl::DataLossError(absl::StrCat(
          where(), ": ", what, ": changed ", n == nullptr ? "?" : n,
          " rows, not ", rows,
          " (the engine's table differs from this head's)"));
    }
    return absl::OkStatus();
  }
  struct Sent {
    std::string what;
    int rows;
  };
  absl::Status Send(const std::string& sql, const std::vector<Param>& params,
                    const std::string& what, int rows) {
    if (!piped_) {
      if (PQenterPipelineMode(conn_) != 1) return Lost("starting a pipeline");
      piped_ = true;
    }
    const Params a(params);
    if (PQsendQueryParams(conn_, sql.c_str(), a.count(), a.types.data(),
                          a.values.data(), a.lengths.data(), a.formats.data(),
                          /*resultFormat=*/1) != 1) {
      return Lost(what);
    }
    sent_.push_back({what, rows});
    // Results wait on the server's side of the socket meanwhile: read
    // them now and then so that neither side's buffer fills.
    if (sent_.size() >= 512) return Flush();
    return absl::OkStatus();
  }
  // Reads the results of the statements sent, and leaves pipeline mode.
  absl::Status Flush() {
    if (!piped_) return absl::OkStatus();
    absl::Status first;
    if (PQpipelineSync(conn_) != 1) first = Lost("ending a pipeline");
    for (const Sent& q : sent_) {
      if (!first.ok() && PQstatus(conn_) != CONNECTION_OK) break;
      Result r(PQgetResult(conn_));
      absl::Status st;
      if (r.status() == PGRES_COMMAND_OK || r.status() == PGRES_TUPLES_OK) {
        st = RowsChanged(r, q.what, q.rows);
      } else if (r.status() != PGRES_PIPELINE_ABORTED) {
        st = Error(q.what, r);
      }
      if (first.ok() && !st.ok()) first = st;
      while (PGresult* more = PQgetResult(conn_)) PQclear(more);  // its end
    }
    sent_.clear();
    if (PQstatus(conn_) == CONNECTION_OK) {
      // The sync's own result.
      while (PGresult* r = PQgetResult(conn_)) {
        const ExecStatusType t = PQresultStatus(r);
        PQclear(r);
        if (t == PGRES_PIPELINE_SYNC) break;
      }
      PQexitPipelineMode(conn_);
    }
    piped_ = false;
    return first;
  }
  absl::StatusOr<std::unique_ptr<Result>> Query(
      const std::string& sql, const std::vector<Param>& params,
      const std::string& what) {
    if (absl::Status s = Flush(); !s.ok()) return s;
    const Params a(params);
    auto r = std::make_unique<Result>(PQexecParams(
        conn_, sql.c_str(), a.count(), a.types.data(), a.values.data(),
        a.lengths.data(), a.formats.data(), /*resultFormat=*/1));
    if (r->status() != PGRES_COMMAND_OK && r->status() != PGRES_TUPLES_OK) {
      return Error(what, *r);
    }
    return r;
  }
  absl::StatusOr<EngineHead> ReadHead(const char* suffix) {
    absl::StatusOr<std::unique_ptr<Result>> r = Query(
        absl::StrCat("SELECT generation, cluster_id FROM sharemgr_cluster",
                     suffix),
        {}, "reading the cluster's generation");
    if (!r.ok()) return r.status();
    if (PQntuples((*r)->r) != 1) {
      return absl::DataLossError(
          absl::StrCat(where(), ": sharemgr_cluster has no row"));
    }
    EngineHead h;
    h.generation = BigEndian64((*r)->Bytes(0, 0));
    h.cluster_id = std::string((*r)->Bytes(0, 1));
    return h;
  }
  absl::StatusOr<EngineTable> ReadTable() {
    EngineTable t;
    absl::StatusOr<EngineHead> h = ReadHead("");
    if (!h.ok()) return h.status();
    t.head = *h;
    absl::StatusOr<std::unique_ptr<Result>> g = Query(
        "SELECT name, enabled, options, managed_by FROM sharemgr_groups "
        "ORDER BY name",
        {}, "reading the groups");
    if (!g.ok()) return g.status();
    for (int i = 0, n = PQntuples((*g)->r); i < n; ++i) {
      GroupRow row;
      row.name = std::string((*g)->Bytes(i, 0));
      std::string_view en = (*g)->Bytes(i, 1);
      row.enabled = !en.empty() && en[0] != 0;
      row.options = std::string((*g)->Bytes(i, 2));
      row.managed_by = std::string((*g)->Bytes(i, 3));
      t.groups.push_back(std::move(row));
    }
    absl::StatusOr<std::unique_ptr<Result>> s = Query(
        "SELECT path, grp, resource, description, options, fs_identity FROM "
        "sharemgr_shares",
        {}, "reading the shares");
    if (!s.ok()) return s.status();
    const int n = PQntuples((*s)->r);
    t.shares.reserve(n);
    for (int i = 0; i < n; ++i) {
      EngineShareRow row;
      row.path = std::string((*s)->Bytes(i, 0));
      row.group = std::string((*s)->Bytes(i, 1));
      row.resource = std::string((*s)->Bytes(i, 2));
      row.description = std::string((*s)->Bytes(i, 3));
      row.options = std::string((*s)->Bytes(i, 4));
      row.fs_identity = std::string((*s)->Bytes(i, 5));
      t.shares.push_back(std::move(row));
    }
    return t;
  }
  // Takes the notifications that came; true if any.
  bool Drain() {
    bool any = false;
    while (PGnotify* n = PQnotifies(conn_)) {
      any = true;
      PQfreemem(n);
    }
    return any;
  }

  PGconn* conn_;
  bool locked_ = false;  // Lock() began the batch's transaction
  bool piped_ = false;   // in pipeline mode, sent_ not yet read
  std::vector<Sent> sent_;
};

}  // namespace

bool IsPostgresUrl(std::string_view url) {
  return absl::StartsWith(A(url), "postgresql://") ||
         absl::StartsWith(A(url), "postgres://") ||
         url.find('=') != std::string_view::npos;
}

absl::Status CheckPostgresUrl(const std::string& url) {
  ConnInfo info(url);
  if (info.opts == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--store: not a PostgreSQL connection string or URI: ",
                     info.error.empty() ? "cannot parse it" : info.error));
  }
  if (!info.Get("password").empty()) {
    return absl::InvalidArgumentError(
        "--store: the connection string carries a password, which every "
        "user of this machine can read in ps: put it in ~/.pgpass, a file "
        "named by PGPASSFILE, or a service file (PGSERVICEFILE), and leave "
        "it out of the URL");
  }
  return absl::OkStatus();
}

std::string DescribePostgresUrl(const std::string& url) {
  ConnInfo info(url);
  std::string host = info.Get("host");
  if (host.empty()) host = info.Get("hostaddr");
  std::string port = info.Get("port");
  std::string db = info.Get("dbname");
  return absl::StrCat("PostgreSQL at ", host.empty() ? "local socket" : host,
                      port.empty() ? "" : ":", port,
                      db.empty() ? "" : ", database ", db);
}

absl::StatusOr<std::unique_ptr<ClusterEngine>> ConnectPostgres(
    const std::string& url, const std::string& application_name) {
  if (absl::Status s = CheckPostgresUrl(url); !s.ok()) return s;
  // Defaults first: what the URL says (expanded from dbname) wins.
  const char* keys[] = {"connect_timeout",   "keepalives_idle",
                        "keepalives_interval", "keepalives_count",
                        "tcp_user_timeout",  "application_name",
                        "dbname",            nullptr};
  const char* values[] = {"5", "5", "2", "3", "10000",
                          application_name.c_str(), url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keys, values, /*expand_dbname=*/1);
  if (conn == nullptr) {
    return absl::ResourceExhaustedError("PostgreSQL: out of memory connecting");
  }
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = OneLine(PQerrorMessage(conn));
    PQfinish(conn);
    return absl::UnavailableError(absl::StrCat(
        DescribePostgresUrl(url), ": cannot connect: ", why));
  }
  auto engine = std::make_unique<PgEngine>(conn);
  if (absl::Status s = engine->Prepare(); !s.ok()) return s;
  return engine;
}

}  // namespace libshare
