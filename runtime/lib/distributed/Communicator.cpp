//===- Communicator.cpp - Which launcher started this replica -------------===//

#include "traincc/runtime/distributed/Communicator.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>

namespace traincc::rt {

namespace {

/// The integer in environment variable `name`; nullopt when unset.
Expected<std::optional<int64_t>> integerVariable(const char *name) {
  const char *text = std::getenv(name);
  if (!text)
    return std::optional<int64_t>();
  int64_t value = 0;
  const char *end = text + std::strlen(text);
  std::from_chars_result r = std::from_chars(text, end, value);
  if (!*text || r.ec != std::errc() || r.ptr != end || value < 0)
    return makeError("environment variable ", name, "='", text,
                     "' is not a non-negative integer");
  return std::optional<int64_t>(value);
}

} // namespace

namespace {

Expected<std::unique_ptr<Communicator>>
connectFromEnvironment(double timeoutSeconds);

} // namespace

Expected<std::unique_ptr<Communicator>> connectReplicas(double timeoutSeconds) {
  Expected<std::unique_ptr<Communicator>> replicas =
      connectFromEnvironment(timeoutSeconds);
  if (!replicas || !*replicas)
    return replicas;
  // Open MPI's names, then torchrun's.
  const char *names[2][2] = {
      {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
      {"LOCAL_RANK", "LOCAL_WORLD_SIZE"}};
  for (auto &pair : names) {
    Expected<std::optional<int64_t>> rank = integerVariable(pair[0]);
    Expected<std::optional<int64_t>> size = integerVariable(pair[1]);
    if (rank && size && *rank && *size && **size >= 1 &&
        **size <= (*replicas)->size() && **rank < **size) {
      (*replicas)->setLocal(int(**rank), int(**size));
      break;
    }
  }
  return replicas;
}

namespace {

Expected<std::unique_ptr<Communicator>>
connectFromEnvironment(double timeoutSeconds) {
  // mpirun (Open MPI) first: it also sets nothing torchrun-like.
  Expected<std::optional<int64_t>> mpiSize =
      integerVariable("OMPI_COMM_WORLD_SIZE");
  if (!mpiSize)
    return mpiSize.takeError();
  if (*mpiSize) {
    if (**mpiSize <= 1)
      return std::unique_ptr<Communicator>();
    return connectMpi(timeoutSeconds);
  }
  Expected<std::optional<int64_t>> worldSize = integerVariable("WORLD_SIZE");
  if (!worldSize)
    return worldSize.takeError();
  if (!*worldSize || **worldSize <= 1)
    return std::unique_ptr<Communicator>();
  Expected<std::optional<int64_t>> rank = integerVariable("RANK");
  if (!rank)
    return rank.takeError();
  Expected<std::optional<int64_t>> port = integerVariable("MASTER_PORT");
  if (!port)
    return port.takeError();
  const char *host = std::getenv("MASTER_ADDR");
  if (!*rank || !*port || !host || !*host)
    return makeError("WORLD_SIZE=", **worldSize,
                     " asks for a data-parallel run, which also needs RANK, "
                     "MASTER_ADDR and MASTER_PORT (as torchrun sets them)");
  if (**rank >= **worldSize)
    return makeError("RANK=", **rank, " is not below WORLD_SIZE=", **worldSize);
  if (**port < 1 || **port > 65535)
    return makeError("MASTER_PORT=", **port, " is not a TCP port");
  if (**worldSize > 4096)
    return makeError("WORLD_SIZE=", **worldSize, ": at most 4096 replicas");
  return connectTcpRing(int(**rank), int(**worldSize), host, int(**port),
                        timeoutSeconds);
}

} // namespace

} // namespace traincc::rt
