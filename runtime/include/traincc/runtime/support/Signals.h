//===- Signals.h - SIGINT/SIGTERM during training ---------------*- C++ -*-===//
//
// While an InterruptGuard lives, SIGINT and SIGTERM only set a flag (the
// handler does nothing else: async-signal-safe); the training loop polls it
// after every optimizer step and epoch, writes a checkpoint and returns. A
// second signal restores the default action and re-raises it, so a stuck
// run can still be ended at once. The previous handlers come back when the
// guard is destroyed.
//
// A trainer interrupted this way exits with 128 + the signal number (130
// for SIGINT, 143 for SIGTERM), as shells report a process killed by it.
//
//===----------------------------------------------------------------------===//

#ifndef TRAINCC_RUNTIME_SUPPORT_SIGNALS_H
#define TRAINCC_RUNTIME_SUPPORT_SIGNALS_H

#include <csignal>

namespace traincc::rt {

class InterruptGuard {
public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard &) = delete;
  InterruptGuard &operator=(const InterruptGuard &) = delete;

  /// The signal received since the guard was made, 0 if none.
  static int pendingSignal();

private:
  struct sigaction previousInt_, previousTerm_;
};

/// "SIGINT", "SIGTERM" or "signal N".
const char *signalName(int signal);

/// The exit status the trainer must end with: 128 + the signal that
/// interrupted training, recorded by recordInterruptedExit; 0 otherwise.
int interruptedExitStatus();
void recordInterruptedExit(int signal);

} // namespace traincc::rt

#endif // TRAINCC_RUNTIME_SUPPORT_SIGNALS_H
