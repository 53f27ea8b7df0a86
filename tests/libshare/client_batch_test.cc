// Client::Apply's BATCH call against a one-call server on a Unix socket:
// the arguments it sends are the bytes rpcgen's xdr_mgmt_batch_args makes
// of the same batch (the client encodes them itself, without mgmt_ops).
#include <rpc/rpc.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "libshare/batch.h"
#include "libshare/client.h"
#include "libshare/mgmt_prot.h"

namespace {

using libshare::Batch;
using libshare::Operation;

bool ReadFull(int fd, char* p, size_t n) {
  while (n > 0) {
    ssize_t r = ::read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool WriteFull(int fd, const char* p, size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

// What rpcgen's encoder makes of `batch`: the mgmt_ops the client built
// before it encoded batches itself (origin cut as the client cuts it).
std::string RpcgenBatchArgs(const Batch& batch, const std::string& origin) {
  std::vector<mgmt_op> ops(batch.ops.size());
  for (size_t i = 0; i < batch.ops.size(); ++i) {
    const Operation& o = batch.ops[i];
    mgmt_op& m = ops[i];
    m.type = static_cast<mgmt_op_type>(o.type);
    m.group = const_cast<char*>(o.group.c_str());
    m.path = const_cast<char*>(o.path.c_str());
    m.options = const_cast<char*>(o.options.c_str());
    m.description = const_cast<char*>(o.description.c_str());
    m.resource = const_cast<char*>(o.resource.c_str());
    m.force = o.force ? TRUE : FALSE;
    m.fields = (o.set_options ? MGMT_FIELD_OPTIONS : 0) |
               (o.set_description ? MGMT_FIELD_DESCRIPTION : 0) |
               (o.set_resource ? MGMT_FIELD_RESOURCE : 0);
    m.fs_identity = const_cast<char*>(o.fs_identity.c_str());
  }
  mgmt_batch_args args{};
  args.ops.ops_len = static_cast<u_int>(ops.size());
  args.ops.ops_val = ops.data();
  args.dry_run = batch.dry_run ? TRUE : FALSE;
  args.origin = const_cast<char*>(origin.c_str());
  const xdrproc_t fn = reinterpret_cast<xdrproc_t>(xdr_mgmt_batch_args);
  std::string out(::xdr_sizeof(fn, &args), '\0');
  XDR x;
  ::xdrmem_create(&x, out.data(), static_cast<u_int>(out.size()), XDR_ENCODE);
  EXPECT_TRUE(xdr_mgmt_batch_args(&x, &args));
  xdr_destroy(&x);
  return out;
}

// Serves `calls` calls on one connection: reads them all before it answers
// any (a client that waited for an answer between them would never send
// the next), keeps each one's procedure and argument bytes, and answers
// each as a BATCH, success with generation 7.
class OneCallServer {
 public:
  explicit OneCallServer(int calls = 1) : calls_(calls) {
    char tmpl[] = "/tmp/client_batch_test.XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    path_ = dir_ + "/sock";
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
    EXPECT_EQ(
        ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    EXPECT_EQ(::listen(listen_fd_, 1), 0);
    thread_ = std::thread([this] { Serve(); });
  }
  ~OneCallServer() {
    ::shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    ::close(listen_fd_);
    ::unlink(path_.c_str());
    ::rmdir(dir_.c_str());
  }

  const std::string& path() const { return path_; }
  // Valid once the client's call returned: the last call's.
  const std::string& args() const { return args_; }
  // Every call's procedure, in order.
  const std::vector<uint32_t>& procs() const { return procs_; }

 private:
  void Serve() {
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) return;
    std::vector<std::string> bodies;
    for (int i = 0; i < calls_; ++i) {
      uint32_t mark = 0;
      if (!ReadFull(fd, reinterpret_cast<char*>(&mark), 4)) break;
      std::string body(ntohl(mark) & 0x7fffffffu, '\0');
      if (!ReadFull(fd, body.data(), body.size())) break;
      bodies.push_back(std::move(body));
    }
    for (std::string& body : bodies) Answer(fd, body);
    ::close(fd);
  }

  void Answer(int fd, std::string& body) {
    rpc_msg call{};
    XDR x;
    ::xdrmem_create(&x, body.data(), static_cast<u_int>(body.size()),
                    XDR_DECODE);
    const bool ok = ::xdr_callmsg(&x, &call);
    const u_int header = xdr_getpos(&x);
    xdr_destroy(&x);
    if (!ok) return;
    args_ = body.substr(header);
    procs_.push_back(call.rm_call.cb_proc);

    mgmt_batch_res res{};
    res.status = MGMT_OK;
    char empty[] = "";
    res.mgmt_batch_res_u.result.commit_error = empty;
    res.mgmt_batch_res_u.result.generation = 7;
    rpc_msg reply{};
    reply.rm_xid = call.rm_xid;
    reply.rm_direction = REPLY;
    reply.rm_reply.rp_stat = MSG_ACCEPTED;
    reply.acpted_rply.ar_verf = _null_auth;
    reply.acpted_rply.ar_stat = SUCCESS;
    reply.acpted_rply.ar_results.where = reinterpret_cast<caddr_t>(&res);
    reply.acpted_rply.ar_results.proc =
        reinterpret_cast<xdrproc_t>(xdr_mgmt_batch_res);
    std::string out(4096, '\0');
    ::xdrmem_create(&x, out.data() + 4, static_cast<u_int>(out.size() - 4),
                    XDR_ENCODE);
    EXPECT_TRUE(::xdr_replymsg(&x, &reply));
    const uint32_t len = xdr_getpos(&x);
    xdr_destroy(&x);
    const uint32_t reply_mark = htonl(0x80000000u | len);
    std::memcpy(out.data(), &reply_mark, 4);
    WriteFull(fd, out.data(), 4 + len);
  }

  std::string dir_;
  std::string path_;
  int listen_fd_ = -1;
  const int calls_;
  std::string args_;
  std::vector<uint32_t> procs_;
  std::thread thread_;
};

// Sends `batch` and returns the argument bytes the server received.
std::string Sent(const Batch& batch) {
  OneCallServer server;
  auto client = libshare::Client::Connect(server.path());
  EXPECT_TRUE(client.ok()) << client.status();
  if (!client.ok()) return "";
  absl::StatusOr<libshare::BatchResult> r = (*client)->Apply(batch);
  EXPECT_TRUE(r.ok()) << r.status();
  if (r.ok()) {
    EXPECT_EQ(r->generation, 7u);
  }
  return server.args();
}

Operation Op(Operation::Type type, std::string group, std::string path) {
  Operation o;
  o.type = type;
  o.group = std::move(group);
  o.path = std::move(path);
  return o;
}

TEST(ClientBatchTest, ArgumentsAreTheBytesRpcgenWouldSend) {
  Batch batch;
  batch.origin = "batch /root/b";
  // Every type, texts of every length modulo 4 (the padding), every flag.
  batch.ops.push_back(Op(Operation::Type::kCreateGroup, "g", ""));
  batch.ops.back().options = "rw=@10.0.0.0/8";
  batch.ops.push_back(Op(Operation::Type::kDeleteGroup, "gr", ""));
  batch.ops.back().force = true;
  batch.ops.push_back(Op(Operation::Type::kEnableGroup, "grp", ""));
  batch.ops.push_back(Op(Operation::Type::kDisableGroup, "grou", ""));
  batch.ops.push_back(Op(Operation::Type::kAddShare, "homes", "/a"));
  batch.ops.back().options = "ro";
  batch.ops.back().description = "Alice's \"home\"";
  batch.ops.back().resource = "res";
  batch.ops.back().fs_identity = "uuid:00112233445566778899aabbccddeeff";
  batch.ops.push_back(Op(Operation::Type::kRemoveShare, "", "/ab"));
  batch.ops.push_back(Op(Operation::Type::kMoveShare, "h", "/abc"));
  batch.ops.push_back(Op(Operation::Type::kSetOptions, "g", "/abcd"));
  batch.ops.push_back(Op(Operation::Type::kModifyShare, "", "/abcde"));
  batch.ops.back().set_options = true;
  batch.ops.back().set_resource = true;
  batch.ops.back().resource = "r";
  batch.ops.push_back(Op(Operation::Type::kModifyShare, "g", "/x"));
  batch.ops.back().set_description = true;
  batch.ops.push_back(Op(Operation::Type::kUnsetOption, "g", ""));
  batch.ops.back().options = "nosuid";
  EXPECT_EQ(Sent(batch), RpcgenBatchArgs(batch, batch.origin));

  batch.dry_run = true;
  EXPECT_EQ(Sent(batch), RpcgenBatchArgs(batch, batch.origin));
}

// PrepareBatch sends PREPARE_BATCH with the bytes announced and does not
// wait for its answer; the next call on the client skips that answer and
// returns its own.
TEST(ClientBatchTest, PrepareBatchIsNotWaitedForAndItsAnswerIsSkipped) {
  OneCallServer server(2);
  auto client = libshare::Client::Connect(server.path());
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->PrepareBatch(123456789).ok());
  Batch batch;
  batch.ops.push_back(Op(Operation::Type::kCreateGroup, "g", ""));
  absl::StatusOr<libshare::BatchResult> r = (*client)->Apply(batch);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->generation, 7u);
  EXPECT_EQ(server.procs(),
            (std::vector<uint32_t>{MGMTPROC_PREPARE_BATCH, MGMTPROC_BATCH}));
}

TEST(ClientBatchTest, OriginIsSentCutAtItsLimitAndAtANul) {
  Batch batch;
  batch.ops.push_back(Op(Operation::Type::kCreateGroup, "g", ""));
  batch.origin = std::string(600, 'o');
  EXPECT_EQ(Sent(batch), RpcgenBatchArgs(batch, std::string(512, 'o')));
  batch.origin = std::string("batch a\0b", 9);
  EXPECT_EQ(Sent(batch), RpcgenBatchArgs(batch, "batch a"));
}

TEST(ClientBatchTest, EmptyBatchIsACountOfZero) {
  Batch batch;
  EXPECT_EQ(Sent(batch), RpcgenBatchArgs(batch, ""));
}

}  // namespace
