//===- TcpCommunicator.cpp - Collectives over a ring of TCP sockets -------===//
//
// For a torchrun-style launch (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT)
// the replicas need no library: they meet at MASTER_ADDR:MASTER_PORT, where
// rank 0 listens, and then form a ring, each rank connected to the next.
//
// Rendezvous: every rank opens a listening socket on a free port; ranks
// 1..N-1 connect to rank 0 (retrying until it listens) and send
// {magic, rank, size, port}; rank 0 answers each with the table of every
// rank's address and port. Each rank then connects to rank+1's listener
// and accepts rank-1's connection.
//
// All-reduce is the bandwidth-optimal ring (reduce-scatter, then
// all-gather, each N-1 steps of one chunk sent and one received at the
// same time): every chunk is summed in one fixed order, starting at its
// own rank, and then copied, so every replica gets the same bits. Broadcast
// passes the buffer along the ring from the root. Sockets are non-blocking
// and every transfer polls against the deadline; a peer that closes its
// socket (it died) is an error at once.
//
//===----------------------------------------------------------------------===//

#include "traincc/runtime/distributed/Communicator.h"

#include <arpa/inet.h>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace traincc::rt {

namespace {

using Clock = std::chrono::steady_clock;
constexpr uint32_t kHelloMagic = 0x54434352; // "TCCR"

/// A socket closed when it goes out of scope.
class Socket {
public:
  Socket() = default;
  explicit Socket(int fd) : fd_(fd) {}
  Socket(Socket &&other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  Socket &operator=(Socket &&other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  ~Socket() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  int fd() const { return fd_; }
  bool valid() const { return fd_ >= 0; }

private:
  int fd_ = -1;
};

Error systemError(const std::string &what) {
  return makeError(what, ": ", std::strerror(errno));
}

int millisecondsLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - Clock::now());
  return left.count() <= 0 ? 0 : int(std::min<int64_t>(left.count(), 1000));
}

void makeNonBlocking(int fd) {
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/// One transfer in progress on a socket, in either direction.
struct Transfer {
  int fd = -1;
  char *data = nullptr;
  size_t bytes = 0, done = 0;
  bool sending = false;
  bool finished() const { return done >= bytes; }
};

/// Runs `transfers` (at most one send and one receive) to completion.
/// `peers` names the other end of each for errors.
Error runTransfers(Transfer *transfers, int count, const std::string *peers,
                   Clock::time_point deadline, const char *what,
                   double timeout) {
  while (true) {
    pollfd fds[2];
    int map[2], n = 0;
    for (int i = 0; i < count; ++i)
      if (!transfers[i].finished()) {
        fds[n] = {transfers[i].fd,
                  short(transfers[i].sending ? POLLOUT : POLLIN), 0};
        map[n++] = i;
      }
    if (n == 0)
      return Error::success();
    int left = millisecondsLeft(deadline);
    if (left == 0)
      return makeError(what, ": no answer from ", peers[map[0]], " within ",
                       timeout, " s (--dist-timeout); a replica died or hangs");
    int ready = ::poll(fds, nfds_t(n), left);
    if (ready < 0 && errno != EINTR)
      return systemError(strCat(what, ": poll"));
    for (int j = 0; ready > 0 && j < n; ++j) {
      if (!fds[j].revents)
        continue;
      Transfer &t = transfers[map[j]];
      ssize_t moved =
          t.sending
              ? ::send(t.fd, t.data + t.done, t.bytes - t.done, MSG_NOSIGNAL)
              : ::recv(t.fd, t.data + t.done, t.bytes - t.done, 0);
      if (moved > 0) {
        t.done += size_t(moved);
        continue;
      }
      if (moved < 0 && (errno == EAGAIN || errno == EINTR))
        continue;
      if (moved == 0 || errno == ECONNRESET || errno == EPIPE)
        return makeError(what, ": ", peers[map[j]],
                         " closed the connection (it stopped or died)");
      return systemError(strCat(what, ": ", peers[map[j]]));
    }
  }
}

Error transferAll(int fd, void *data, size_t bytes, bool sending,
                  const std::string &peer, Clock::time_point deadline,
                  const char *what, double timeout) {
  Transfer t{fd, static_cast<char *>(data), bytes, 0, sending};
  return runTransfers(&t, 1, &peer, deadline, what, timeout);
}

/// A listening socket on `port` (0: any free port) of every interface.
Expected<Socket> listenOn(int port, int &boundPort) {
  Socket s(::socket(AF_INET, SOCK_STREAM, 0));
  if (!s.valid())
    return systemError("socket");
  int one = 1;
  ::setsockopt(s.fd(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(uint16_t(port));
  if (::bind(s.fd(), reinterpret_cast<sockaddr *>(&address), sizeof(address)) !=
      0)
    return systemError(strCat("cannot listen on port ", port));
  if (::listen(s.fd(), 64) != 0)
    return systemError("listen");
  socklen_t length = sizeof(address);
  ::getsockname(s.fd(), reinterpret_cast<sockaddr *>(&address), &length);
  boundPort = ntohs(address.sin_port);
  makeNonBlocking(s.fd());
  return s;
}

Expected<Socket> acceptBefore(int listener, Clock::time_point deadline,
                              const std::string &waitingFor, double timeout,
                              sockaddr_in *peer = nullptr) {
  while (true) {
    int left = millisecondsLeft(deadline);
    if (left == 0)
      return makeError("rendezvous: ", waitingFor, " did not connect within ",
                       timeout, " s (--dist-timeout)");
    pollfd fd{listener, POLLIN, 0};
    if (::poll(&fd, 1, left) <= 0)
      continue;
    sockaddr_in address{};
    socklen_t length = sizeof(address);
    int accepted =
        ::accept(listener, reinterpret_cast<sockaddr *>(&address), &length);
    if (accepted < 0)
      continue;
    makeNonBlocking(accepted);
    if (peer)
      *peer = address;
    return Socket(accepted);
  }
}

/// Connects to host:port, retrying while nobody listens there yet.
Expected<Socket> connectBefore(const sockaddr_in &address,
                               Clock::time_point deadline,
                               const std::string &target, double timeout) {
  while (true) {
    Socket s(::socket(AF_INET, SOCK_STREAM, 0));
    if (!s.valid())
      return systemError("socket");
    if (::connect(s.fd(), reinterpret_cast<const sockaddr *>(&address),
                  sizeof(address)) == 0) {
      makeNonBlocking(s.fd());
      return s;
    }
    if (errno != ECONNREFUSED && errno != ETIMEDOUT && errno != EHOSTUNREACH &&
        errno != ENETUNREACH)
      return systemError(strCat("rendezvous: cannot connect to ", target));
    if (millisecondsLeft(deadline) == 0)
      return makeError("rendezvous: ", target, " did not answer within ",
                       timeout, " s (--dist-timeout)");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

struct Hello {
  uint32_t magic, rank, size, port;
};
struct PeerAddress {
  uint32_t ip; // network order
  uint32_t port;
};

class TcpRingCommunicator final : public Communicator {
public:
  TcpRingCommunicator(int rank, int size, std::string rendezvous,
                      double timeout, Socket next, Socket previous)
      : Communicator(rank, size), rendezvous_(std::move(rendezvous)),
        timeout_(timeout), next_(std::move(next)),
        previous_(std::move(previous)),
        peerNames_{strCat("rank ", (rank + 1) % size),
                   strCat("rank ", (rank + size - 1) % size)} {}

  std::string description() const override {
    return strCat("TCP ring via ", rendezvous_);
  }

  Error allReduceSum(float *data, size_t count, const char *what) override {
    const int n = size(), r = rank();
    auto begin = [&](int chunk) { return count * size_t(chunk) / size_t(n); };
    auto length = [&](int chunk) { return begin(chunk + 1) - begin(chunk); };
    received_.resize(count / size_t(n) + 1);
    const Clock::time_point deadline = deadlineFromNow();
    // Reduce-scatter: after step s, chunk (r - s - 1) mod n holds the sum
    // of s + 2 replicas, ending with the full sum of chunk (r + 1) mod n.
    for (int s = 0; s < n - 1; ++s) {
      int sendChunk = ((r - s) % n + n) % n;
      int receiveChunk = ((r - s - 1) % n + n) % n;
      Transfer t[2] = {
          {next_.fd(), reinterpret_cast<char *>(data + begin(sendChunk)),
           length(sendChunk) * sizeof(float), 0, true},
          {previous_.fd(), reinterpret_cast<char *>(received_.data()),
           length(receiveChunk) * sizeof(float), 0, false}};
      if (Error err = runTransfers(t, 2, peerNames_, deadline, what, timeout_))
        return err;
      float *into = data + begin(receiveChunk);
      for (size_t i = 0; i < length(receiveChunk); ++i)
        into[i] = received_[i] + into[i];
    }
    // All-gather the finished chunks.
    for (int s = 0; s < n - 1; ++s) {
      int sendChunk = ((r + 1 - s) % n + n) % n;
      int receiveChunk = ((r - s) % n + n) % n;
      Transfer t[2] = {
          {next_.fd(), reinterpret_cast<char *>(data + begin(sendChunk)),
           length(sendChunk) * sizeof(float), 0, true},
          {previous_.fd(), reinterpret_cast<char *>(data + begin(receiveChunk)),
           length(receiveChunk) * sizeof(float), 0, false}};
      if (Error err = runTransfers(t, 2, peerNames_, deadline, what, timeout_))
        return err;
    }
    return Error::success();
  }

  Error broadcast(void *data, size_t bytes, int root,
                  const char *what) override {
    const Clock::time_point deadline = deadlineFromNow();
    if (rank() != root)
      if (Error err = transferAll(previous_.fd(), data, bytes, false,
                                  peerNames_[1], deadline, what, timeout_))
        return err;
    if ((rank() + 1) % size() != root)
      if (Error err = transferAll(next_.fd(), data, bytes, true, peerNames_[0],
                                  deadline, what, timeout_))
        return err;
    return Error::success();
  }

  [[noreturn]] void abort(int exitCode) override {
    // Closing the sockets tells the neighbours at once; they fail their
    // next transfer and abort in turn.
    std::fflush(nullptr);
    std::_Exit(exitCode);
  }

  Error finish() override {
    float token = 1;
    if (Error err = allReduceSum(&token, 1, "end of the run"))
      return err;
    next_ = Socket();
    previous_ = Socket();
    return Error::success();
  }

private:
  Clock::time_point deadlineFromNow() const {
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(timeout_));
  }

  std::string rendezvous_;
  double timeout_;
  Socket next_, previous_;
  std::string peerNames_[2]; // next, previous
  std::vector<float> received_;
};

} // namespace

Expected<std::unique_ptr<Communicator>> connectTcpRing(int rank, int size,
                                                       const std::string &host,
                                                       int port,
                                                       double timeout) {
  const std::string rendezvous = strCat(host, ":", port);
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(timeout));
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *found = nullptr;
  if (int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found))
    return makeError("MASTER_ADDR=", host, ": ", gai_strerror(rc));
  sockaddr_in master = *reinterpret_cast<sockaddr_in *>(found->ai_addr);
  ::freeaddrinfo(found);
  master.sin_port = htons(uint16_t(port));

  int ringPort = 0;
  Expected<Socket> ringListener = listenOn(0, ringPort);
  if (!ringListener)
    return ringListener.takeError().withContext("rendezvous");
  std::vector<PeerAddress> table(size_t(size), PeerAddress{0, 0});
  if (rank == 0) {
    int bound = 0;
    Expected<Socket> listener = listenOn(port, bound);
    if (!listener)
      return listener.takeError().withContext(
          strCat("rendezvous (MASTER_PORT=", port, ")"));
    table[0] = {master.sin_addr.s_addr, uint32_t(ringPort)};
    std::vector<Socket> peers(static_cast<size_t>(size));
    for (int joined = 1; joined < size; ++joined) {
      sockaddr_in from{};
      Expected<Socket> peer = acceptBefore(
          listener->fd(), deadline,
          strCat(size - joined, " of the ", size - 1, " other ranks"), timeout,
          &from);
      if (!peer)
        return peer.takeError();
      Hello hello{};
      if (Error err =
              transferAll(peer->fd(), &hello, sizeof(hello), false,
                          "a joining rank", deadline, "rendezvous", timeout))
        return err;
      if (hello.magic != kHelloMagic || hello.size != uint32_t(size) ||
          hello.rank == 0 || hello.rank >= uint32_t(size) ||
          peers[hello.rank].valid())
        return makeError("rendezvous: a process that is not rank 1..", size - 1,
                         " of WORLD_SIZE=", size, " connected to ", rendezvous,
                         " (another run on the same MASTER_PORT?)");
      table[hello.rank] = {from.sin_addr.s_addr, hello.port};
      peers[hello.rank] = peer.take();
    }
    for (int r = 1; r < size; ++r)
      if (Error err =
              transferAll(peers[size_t(r)].fd(), table.data(),
                          table.size() * sizeof(PeerAddress), true,
                          strCat("rank ", r), deadline, "rendezvous", timeout))
        return err;
  } else {
    Expected<Socket> toMaster = connectBefore(
        master, deadline, strCat("rank 0 at ", rendezvous), timeout);
    if (!toMaster)
      return toMaster.takeError();
    Hello hello{kHelloMagic, uint32_t(rank), uint32_t(size),
                uint32_t(ringPort)};
    if (Error err = transferAll(toMaster->fd(), &hello, sizeof(hello), true,
                                "rank 0", deadline, "rendezvous", timeout))
      return err;
    if (Error err = transferAll(toMaster->fd(), table.data(),
                                table.size() * sizeof(PeerAddress), false,
                                "rank 0", deadline, "rendezvous", timeout))
      return err;
  }
  // The ring: connect to the next rank, accept the previous one.
  const int nextRank = (rank + 1) % size;
  sockaddr_in nextAddress{};
  nextAddress.sin_family = AF_INET;
  nextAddress.sin_addr.s_addr = table[size_t(nextRank)].ip;
  nextAddress.sin_port = htons(uint16_t(table[size_t(nextRank)].port));
  Expected<Socket> next =
      connectBefore(nextAddress, deadline, strCat("rank ", nextRank), timeout);
  if (!next)
    return next.takeError();
  uint32_t me = uint32_t(rank);
  if (Error err = transferAll(next->fd(), &me, sizeof(me), true,
                              strCat("rank ", nextRank), deadline, "rendezvous",
                              timeout))
    return err;
  const int previousRank = (rank + size - 1) % size;
  Expected<Socket> previous = acceptBefore(
      ringListener->fd(), deadline, strCat("rank ", previousRank), timeout);
  if (!previous)
    return previous.takeError();
  uint32_t from = 0;
  if (Error err = transferAll(previous->fd(), &from, sizeof(from), false,
                              strCat("rank ", previousRank), deadline,
                              "rendezvous", timeout))
    return err;
  if (from != uint32_t(previousRank))
    return makeError("rendezvous: rank ", from, " connected where rank ",
                     previousRank, " was expected");
  return std::unique_ptr<Communicator>(new TcpRingCommunicator(
      rank, size, rendezvous, timeout, next.take(), previous.take()));
}

} // namespace traincc::rt
