/*===- ModelABI.h - the contract between generated code and the runtime ---===*
 *
 * A trainer is the runtime library linked with one object that traincc
 * generates for a model. That object defines `traincc_get_model()`, which
 * describes the model (inputs, outputs, every persistent tensor and where it
 * lives in the state arena, the compile-time training options) and points at
 * the generated step functions. The runtime owns the loop, data, logs,
 * checkpoints and export; the generated functions own all arithmetic.
 *
 * Memory: every persistent tensor (parameters, BatchNorm statistics, gradient
 * accumulators, optimizer and loss-scaler state) lives at a fixed offset in
 * one state arena of `state_bytes` bytes, so a checkpoint is the arena plus
 * the runtime's own counters, and the device backend mirrors it in one
 * allocation. Step functions also receive a scratch workspace of
 * `workspace_bytes` bytes (the static memory plan of one step's
 * temporaries). Both are 64-byte aligned.
 *
 * Plain C so that generated code (LLVM, no C++ ABI) can define it. No
 * exceptions or errors cross it: the step functions cannot fail; bad data is
 * rejected by the runtime before a step runs.
 *
 *===----------------------------------------------------------------------===*/

#ifndef TRAINCC_RUNTIME_MODELABI_H
#define TRAINCC_RUNTIME_MODELABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TRAINCC_ABI_VERSION 10

typedef enum {
  TRAINCC_DTYPE_F32 = 0,
  TRAINCC_DTYPE_F16 = 1,
  TRAINCC_DTYPE_BF16 = 2,
  TRAINCC_DTYPE_F64 = 3,
  TRAINCC_DTYPE_I64 = 4,
} traincc_dtype;

/* What a state tensor holds; decides checkpointing and export. */
typedef enum {
  TRAINCC_STATE_TRAINABLE = 0,   /* parameter with a gradient */
  TRAINCC_STATE_FROZEN = 1,      /* parameter kept fixed (--freeze) */
  TRAINCC_STATE_RUNNING_MEAN = 2,
  TRAINCC_STATE_RUNNING_VAR = 3,
  TRAINCC_STATE_GRADIENT = 4,    /* gradient accumulator of `owner` */
  TRAINCC_STATE_OPTIMIZER = 5,   /* momentum / Adam moments of `owner` */
  TRAINCC_STATE_LOSS_SCALER = 6, /* scale, growth counter, found_inf */
  TRAINCC_STATE_BN_ACCUMULATOR = 7, /* --bn-stats step: pooled statistics
                                       of the micro-batches of one step */
  TRAINCC_STATE_WEIGHT_COPY = 8, /* mixed precision: `source` in the
                                    compute type, which the steps read and
                                    the optimizer rewrites */
  TRAINCC_STATE_STEP_BACKUP = 9, /* loss scaling: `source` as it was at the
                                    start of the optimizer step, restored
                                    when the step is skipped */
} traincc_state_kind;

/* traincc --precision: the type of the step's compute (master weights,
   BatchNorm and the loss stay float32). */
typedef enum {
  TRAINCC_PRECISION_FP32 = 0,
  TRAINCC_PRECISION_FP16 = 1,
  TRAINCC_PRECISION_BF16 = 2,
} traincc_precision;

/* traincc --loss-scale. With either kind of scaling, micro_step adds the
   gradients times the scale (state `loss_scale_state`) into the
   accumulators and still reports the unscaled loss; apply_step unscales
   them, sets `found_inf_state` to 1 when one is inf or NaN and then skips
   the update (parameters, optimizer state and BatchNorm statistics keep
   their values), and, when dynamic, updates the scale the way PyTorch's
   GradScaler does (halved on inf/NaN, doubled after a number of finite
   steps). */
typedef enum {
  TRAINCC_LOSS_SCALING_NONE = 0,
  TRAINCC_LOSS_SCALING_DYNAMIC = 1,
  TRAINCC_LOSS_SCALING_STATIC = 2,
} traincc_loss_scaling;

typedef enum {
  TRAINCC_LOSS_CROSS_ENTROPY = 0, /* targets: int64 class indices [N] */
  TRAINCC_LOSS_MSE = 1,           /* targets: float, shape of the output */
  TRAINCC_LOSS_OUTPUT = 2,        /* the model's own scalar output; no target */
} traincc_loss_kind;

typedef enum {
  TRAINCC_OPTIMIZER_SGD = 0,
  TRAINCC_OPTIMIZER_ADAM = 1,
  TRAINCC_OPTIMIZER_ADAMW = 2,
} traincc_optimizer_kind;

typedef struct {
  const char *name; /* ONNX name */
  int32_t dtype;    /* traincc_dtype */
  int32_t rank;
  const int64_t *shape; /* shape[0] is the micro-batch for data tensors */
  /* int64 inputs (token ids): every value must lie in [0, id_limit), the
     rows of the smallest table the input indexes (an embedding); 0 when
     no table bounds them. 0 for float tensors. */
  int64_t id_limit;
} traincc_io_tensor;

typedef struct {
  const char *name; /* ONNX initializer name, or derived ("w.grad") */
  int32_t kind;     /* traincc_state_kind */
  int32_t dtype;    /* traincc_dtype */
  int32_t rank;
  const int64_t *shape;
  uint64_t offset; /* in the state arena */
  uint64_t bytes;
  int32_t owner; /* index of the parameter a gradient/optimizer tensor
                    belongs to; -1 otherwise */
  int32_t source; /* weight copies and step backups: index of the state
                     tensor this one copies, converted to this one's dtype
                     (the runtime refreshes copies after loading weights);
                     -1 otherwise */
} traincc_state_tensor;

/* What one step's kernels cost, as `traincc --report` counts them: the
   kernels (CPU loop nests or GPU launches), the bytes they read and write
   (each buffer once per direction, at its full size) and their
   floating-point operations. All zero when traincc did not count them. */
typedef struct {
  int32_t kernels;
  uint64_t bytes;
  uint64_t flops;
} traincc_step_cost;

typedef struct {
  traincc_step_cost micro_step, apply_step, eval_step;
} traincc_step_costs;

/* The static memory plan of the steps' temporaries (`traincc --report`):
   the workspace each step needs (the runtime allocates the largest, once;
   steps allocate nothing) and, of micro_step's, the bytes that hold
   forward values saved for the backward pass. */
typedef struct {
  uint64_t micro_step, apply_step, eval_step;
  uint64_t saved_activations;
} traincc_memory_plan;

/* ---- GPU program (traincc --target cuda) --------------------------------
 *
 * The GPU versions of the three step functions are not host code: each is
 * a fixed sequence of kernel launches (a launch plan) that the runtime
 * replays, captured once into a CUDA graph. Every pointer a kernel takes is
 * an offset into one of a few device buffers the runtime allocates once:
 * the state arena (same layout as on the CPU), the workspace (the static
 * memory plan of the step's temporaries), the step's data (input, target,
 * outputs) and a small parameter block holding the step's scalars (lr,
 * step, grad_scale, rng_seed, the replica count), which kernels read from
 * device memory so that the captured graph stays valid when they change.
 * With --sync-bn a plan is cut into segments by collectives, which the
 * host runs between them (traincc_gpu_collective). Each of those
 * buffers is a device allocation and every offset a multiple of 16: the
 * kernels are compiled to assume 16-byte aligned pointers. */

/* The device buffer a kernel pointer argument points into, or a value. */
typedef enum {
  TRAINCC_GPU_ARG_STATE = 0,     /* state arena + offset */
  TRAINCC_GPU_ARG_WORKSPACE = 1, /* workspace + offset */
  TRAINCC_GPU_ARG_INPUT = 2,     /* this micro-batch's input + offset */
  TRAINCC_GPU_ARG_TARGET = 3,    /* this micro-batch's target + offset */
  TRAINCC_GPU_ARG_OUTPUT = 4,    /* eval_step: the model output + offset */
  TRAINCC_GPU_ARG_LOSS = 5,      /* micro_step: the loss (1 float);
                                    eval_step: per-sample losses */
  TRAINCC_GPU_ARG_PARAMS = 6,    /* the parameter block + offset */
  TRAINCC_GPU_ARG_I64 = 7,       /* an immediate 64-bit integer (`value`) */
  TRAINCC_GPU_ARG_F32 = 8,       /* an immediate float (`value` holds its
                                    bits in the low 32 bits) */
} traincc_gpu_arg_kind;

/* Byte offsets of the step's scalars in the parameter block. */
#define TRAINCC_GPU_PARAM_LR 0         /* float: apply_step's lr */
#define TRAINCC_GPU_PARAM_GRAD_SCALE 4 /* float: micro_step's grad_scale */
#define TRAINCC_GPU_PARAM_STEP 8       /* int64: apply_step's step */
#define TRAINCC_GPU_PARAM_SEED 16      /* int64: micro_step's rng_seed */
#define TRAINCC_GPU_PARAM_REPLICAS 24  /* float: traincc_replica_count() */
#define TRAINCC_GPU_PARAM_BYTES 64

typedef struct {
  int32_t kind;   /* traincc_gpu_arg_kind */
  int32_t size;   /* bytes the kernel parameter takes: 8 for pointers and
                     i64, 4 for f32 */
  uint64_t value; /* pointer kinds: byte offset; immediates: the value */
} traincc_gpu_arg;

typedef struct {
  const char *kernel; /* entry point name in the module */
  int32_t module;     /* index into traincc_gpu_program.modules */
  uint32_t grid[3];
  uint32_t block[3];
  uint32_t shared_bytes; /* dynamic shared memory */
  int32_t num_args;
  const traincc_gpu_arg *args;
} traincc_gpu_launch;

/* traincc --sync-bn: a step of a plan that is not a kernel. The host
   runs the launches before it, then replaces `count` float32 values at
   workspace `offset` by their mean over the replicas (what
   traincc_replica_mean does for the CPU steps; alone, or without the
   trainer's --sync-bn, nothing), then the launches after it. */
typedef enum {
  TRAINCC_GPU_COLLECTIVE_REPLICA_MEAN = 0,
} traincc_gpu_collective_kind;

typedef struct {
  int32_t kind;     /* traincc_gpu_collective_kind */
  int32_t position; /* runs after launches [0, position) */
  uint64_t offset;  /* in the workspace; a multiple of 16 */
  uint64_t count;   /* float32 values */
} traincc_gpu_collective;

typedef struct {
  int32_t num_launches;
  const traincc_gpu_launch *launches;
  int32_t num_collectives;
  const traincc_gpu_collective *collectives; /* ascending position */
} traincc_gpu_plan;

/* One CUDA module: the kernels are compiled in parts, in parallel, and
   loaded one module per part. */
typedef struct {
  const char *ptx;       /* NUL-terminated PTX, always present (the driver
                            JIT-compiles it for newer GPUs) */
  const uint8_t *cubin;  /* ptxas output for the program's arch, or null */
  uint64_t cubin_bytes;
} traincc_gpu_module;

typedef struct {
  const char *arch;      /* e.g. "sm_90": what the cubins were built for */
  int32_t num_modules;
  const traincc_gpu_module *modules;
  uint64_t workspace_bytes;
  traincc_gpu_plan micro_step, apply_step, eval_step;
  traincc_step_costs costs; /* of the launch plans */
  traincc_memory_plan memory; /* of the workspace */
} traincc_gpu_program;

/* Initialised bytes of the state arena: `bytes` bytes at arena `offset`. */
typedef struct {
  uint64_t offset;
  uint64_t bytes;
} traincc_initial_run;

typedef struct {
  uint32_t abi_version; /* TRAINCC_ABI_VERSION */
  const char *model_name;

  /* Compile-time training options (the trainer's defaults). */
  int64_t micro_batch;
  int32_t accum_steps;
  int32_t loss;      /* traincc_loss_kind */
  int32_t optimizer; /* traincc_optimizer_kind */
  int32_t nesterov;
  float momentum, dampening, weight_decay, beta1, beta2, eps;
  int32_t bn_stats_per_step; /* 0: per micro-batch (PyTorch); 1: per step */
  int32_t num_classes;       /* cross-entropy: size of the class axis */
  int32_t precision;         /* traincc_precision */
  int32_t loss_scaling;      /* traincc_loss_scaling */
  /* With loss scaling, the state indices of the scale (float32 scalar: the
     scale the next micro-steps multiply the gradients by) and of found_inf
     (float32 scalar: non-zero when the last apply_step was skipped); -1
     without. */
  int32_t loss_scale_state;
  int32_t found_inf_state;

  traincc_io_tensor input;
  traincc_io_tensor target; /* dtype/shape of one micro-batch of targets */
  traincc_io_tensor output;

  int32_t num_state;
  const traincc_state_tensor *state;
  uint64_t state_bytes;
  /* Without initial runs: state_bytes bytes, trained tensors holding the
     ONNX initializers and the rest zeros. With them: only the runs' bytes,
     back to back, and the arena is zero outside the runs. Gradients and
     optimizer state (2-3x the weights) would otherwise fill the trainer
     with zeros, and a large model's image past what 32-bit relocations
     reach. */
  const uint8_t *initial_state;
  int32_t num_initial_runs;
  const traincc_initial_run *initial_runs; /* ascending, disjoint */
  uint64_t workspace_bytes;

  const uint8_t *onnx_model; /* the model as compiled, for --export */
  uint64_t onnx_model_bytes;

  /* Forward + backward of one micro-batch: adds `grad_scale` times the
     gradient of the mean loss into the gradient accumulators, updates BN
     running statistics (per micro-batch mode), writes the mean loss.
     `rng_seed` keys the dropout masks of this micro-batch (counter-based,
     so a run is reproducible from the seed alone). */
  void (*micro_step)(uint8_t *state, uint8_t *workspace, const void *input,
                     const void *target, float grad_scale, uint64_t rng_seed,
                     float *loss);
  /* One optimizer update from the accumulated gradients with learning rate
     `lr` at optimizer step `step` (counted from 1, for Adam's bias
     correction); clears the accumulators. */
  void (*apply_step)(uint8_t *state, uint8_t *workspace, float lr,
                     int64_t step);
  /* Evaluation-mode forward (BN uses running statistics, no dropout): the
     model output and, when `target` is not null, the per-sample losses
     (`losses` has micro_batch entries). */
  void (*eval_step)(uint8_t *state, uint8_t *workspace, const void *input,
                    const void *target, void *output, float *losses);

  /* The LLVM CPU the kernels were compiled for (traincc --cpu, "native"
     resolved), named when this machine lacks one of its instructions. */
  const char *target_cpu;

  /* The CUDA version of the steps, or null when the trainer has none. */
  const traincc_gpu_program *gpu;

  /* What the CPU step functions' loop nests cost. */
  traincc_step_costs cpu_costs;

  /* The CPU steps' workspace plan (workspace_bytes is its largest). */
  traincc_memory_plan cpu_memory;

  /* traincc --sync-bn: 1 when the steps compute BatchNorm statistics
     through replica collectives (the CPU micro_step calls
     traincc_replica_mean below, the GPU plans have collective entries),
     so that the trainer's --sync-bn can pool them over the replicas. */
  int32_t sync_bn;
} traincc_model;

/* Defined by the generated object. */
const traincc_model *traincc_get_model(void);

/* Provided by the runtime to generated code: runs body(context, begin, end)
   over [0, count) split across the trainer's threads (--threads), and
   returns when all chunks are done. */
void traincc_parallel_for(int64_t count, void *context,
                          void (*body)(void *context, int64_t begin,
                                       int64_t end));

/* Provided by the runtime to generated code (traincc --sync-bn): replaces
   `count` floats by their mean over the data-parallel replicas that
   synchronise BatchNorm, and returns how many replicas that is; alone, or
   without the trainer's --sync-bn, leaves them as they are and returns 1.
   A collective that fails ends the run (step functions cannot fail). */
void traincc_replica_mean(float *data, int64_t count);
float traincc_replica_count(void);

/* What a CPU kernel is for, in the timers of traincc --profile-kernels. */
typedef enum traincc_kernel_class {
  TRAINCC_KERNEL_CONV_FORWARD = 0,
  TRAINCC_KERNEL_CONV_DATA_GRADIENT = 1,
  TRAINCC_KERNEL_CONV_FILTER_GRADIENT = 2,
  TRAINCC_KERNEL_MATMUL = 3,
  TRAINCC_KERNEL_POOLING = 4,
  TRAINCC_KERNEL_REDUCTION = 5,
  TRAINCC_KERNEL_ELEMENTWISE = 6,
  TRAINCC_KERNEL_COPY_FILL = 7,
  TRAINCC_KERNEL_CLASS_COUNT = 8
} traincc_kernel_class;

/* Provided by the runtime to generated code compiled with traincc
   --profile-kernels: called around kernel `index` (as `traincc --report`
   numbers them) of step function `step` (0 micro_step, 1 apply_step,
   2 eval_step); the trainer prints the times when it exits. */
void traincc_kernel_timer_start(void);
void traincc_kernel_timer_stop(int32_t step, int32_t index,
                               int32_t kernel_class, int64_t flops,
                               int64_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* TRAINCC_RUNTIME_MODELABI_H */
