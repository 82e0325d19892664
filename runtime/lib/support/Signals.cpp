//===- Signals.cpp - SIGINT/SIGTERM during training -----------------------===//
//
// Process-wide by nature: a signal handler can only reach global state, and
// it may only touch a volatile sig_atomic_t.
//
//===----------------------------------------------------------------------===//

#include "traincc/runtime/support/Signals.h"

#include <atomic>
#include <cstring>

namespace traincc::rt {

namespace {

volatile std::sig_atomic_t gPendingSignal = 0;
std::atomic<int> gExitStatus{0};

extern "C" void onInterrupt(int signal) {
  if (gPendingSignal != 0) {
    // Second signal: give up on the orderly stop.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  gPendingSignal = signal;
}

} // namespace

InterruptGuard::InterruptGuard() {
  gPendingSignal = 0;
  struct sigaction action;
  std::memset(&action, 0, sizeof(action));
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  // Restart interrupted reads and writes: the loop polls the flag itself.
  action.sa_flags = SA_RESTART;
  sigaction(SIGINT, &action, &previousInt_);
  sigaction(SIGTERM, &action, &previousTerm_);
}

InterruptGuard::~InterruptGuard() {
  sigaction(SIGINT, &previousInt_, nullptr);
  sigaction(SIGTERM, &previousTerm_, nullptr);
}

int InterruptGuard::pendingSignal() { return gPendingSignal; }

const char *signalName(int signal) {
  switch (signal) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  default:
    return "a signal";
  }
}

int interruptedExitStatus() { return gExitStatus.load(); }

void recordInterruptedExit(int signal) { gExitStatus.store(128 + signal); }

} // namespace traincc::rt
