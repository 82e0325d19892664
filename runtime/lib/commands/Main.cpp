//===- Main.cpp - main() of every trainer ---------------------------------===//
//
// Linked (as TrainccRuntimeMain) with the object traincc generates, which
// defines traincc_get_model().
//
//===----------------------------------------------------------------------===//

#include "traincc/runtime/ModelABI.h"
#include "traincc/runtime/commands/TrainerMain.h"

#include <csignal>
#include <malloc.h>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace {

char illegalInstructionMessage[512];

extern "C" void onIllegalInstruction(int) {
  // Only async-signal-safe calls here.
  ssize_t ignored = write(STDERR_FILENO, illegalInstructionMessage,
                          std::strlen(illegalInstructionMessage));
  (void)ignored;
  _exit(1);
}

/// Kernels compiled with `--cpu native` (traincc's default) use the vector
/// instructions of the machine that compiled them; on an older CPU the
/// trainer would die of SIGILL. Say why instead, and what to do.
void explainIllegalInstructions(const traincc_model *model) {
  const char *cpu =
      model && model->target_cpu && *model->target_cpu ? model->target_cpu
                                                       : "unknown";
  std::snprintf(illegalInstructionMessage, sizeof(illegalInstructionMessage),
                "trainer: error: this CPU lacks an instruction the kernels "
                "use: they were compiled for CPU '%s'; recompile the model "
                "with `traincc --cpu x86-64` (any x86-64) or `--cpu native` "
                "on this machine\n",
                cpu);
  struct sigaction action {};
  action.sa_handler = onIllegalInstruction;
  sigemptyset(&action.sa_mask);
  sigaction(SIGILL, &action, nullptr);
}

/// A training step allocates and frees the same large temporaries every
/// time. glibc serves blocks over 128 KiB with mmap and returns them with
/// munmap, so every step would fault in fresh zeroed pages; keeping them in
/// the heap lets the next step reuse them. M_MMAP_THRESHOLD cannot go above
/// 32 MiB (glibc refuses larger values), and a ResNet's temporaries are
/// larger: no mmap at all (M_MMAP_MAX 0) keeps every block in the heap, and
/// no trimming (-1) keeps the heap's top, which can exceed any fixed
/// threshold at the end of a large step, for the next one.
void keepLargeBlocksInHeap() {
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
}

} // namespace

int main(int argc, char **argv) {
  keepLargeBlocksInHeap();
  const traincc_model *model = traincc_get_model();
  explainIllegalInstructions(model);
  return traincc::rt::runTrainerMain(argc, argv, model);
}
