#!/usr/bin/env python3
# Checks what a test trainer wrote (test/runtime/*.test). Prints "OK ..."
# lines for FileCheck, or "FAIL: ..." and exits 1.
#   check_run.py log LOG.jsonl --epochs E --steps S,S,.. [--val|--val-loss]
#       exact keys in the documented order, steps counted from 1 without gaps,
#       step i of epoch e where expected, epoch train_loss = mean of its
#       step losses, val_loss and val_acc present exactly when --val
#       (val_loss alone with --val-loss: models without classes).
#   check_run.py export MODEL.onnx X.npy Y.npy LOG.jsonl [--original ORIG]
#       onnx.checker passes; BatchNormalization nodes in inference form;
#       a numpy forward pass with the exported initializers on the
#       validation data X/Y gives the val_loss and val_acc of the log's last
#       epoch (so the export holds the final trained weights); every
#       initializer differs from ORIG's.
#   check_run.py predict MODEL.onnx X.npy PRED.npy
#       the trainer's predictions are the numpy forward pass of MODEL.
#   check_run.py same-weights A.onnx B.onnx RTOL
#       the initializers of A and B agree to RTOL (relative to max |value|).
#   check_run.py same-losses A.jsonl B.jsonl RTOL
#       the step losses of two logs agree to RTOL.
import json
import sys

import numpy as np


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


STEP_KEYS = ["event", "step", "epoch", "loss", "lr", "loss_scale", "skipped",
             "grad_norm"]
# The monitors after the standard fields of an epoch line.
EPOCH_MONITOR_KEYS = ["param_change", "bn_stats"]


def check_log(path, epochs, steps, val, val_loss_only=False):
    with open(path) as f:
        lines = [json.loads(l, object_pairs_hook=list) for l in f]
    step = 0
    index = 0
    for epoch in range(1, epochs + 1):
        losses = []
        for _ in range(steps[epoch - 1]):
            step += 1
            if index >= len(lines):
                fail("log ends before step %d" % step)
            pairs = lines[index]
            index += 1
            keys = [k for k, _ in pairs]
            d = dict(pairs)
            if keys != STEP_KEYS:
                fail("step line %d keys %s" % (step, keys))
            if d["step"] != step or d["epoch"] != epoch:
                fail("line %d: step %s epoch %s, expected %d %d" %
                     (index, d["step"], d["epoch"], step, epoch))
            if d["skipped"] is not False or d["loss_scale"] != 1:
                fail("step %d: skipped/loss_scale %s" % (step, pairs))
            if type(d["loss"]) not in (int, float) or not d["loss"] >= 0:
                fail("step %d: loss %r" % (step, d["loss"]))
            if type(d["grad_norm"]) not in (int, float) or \
                    not d["grad_norm"] >= 0:
                fail("step %d: grad_norm %r" % (step, d["grad_norm"]))
            losses.append(d["loss"])
        if index >= len(lines):
            fail("log ends before epoch %d" % epoch)
        pairs = lines[index]
        index += 1
        keys = [k for k, _ in pairs]
        want = ["event", "epoch", "train_loss"] + (
            ["val_loss", "val_acc"] if val else []) + (
            ["val_loss"] if val_loss_only else []) + ["lr", "seconds"] + \
            EPOCH_MONITOR_KEYS
        if keys != want:
            fail("epoch %d keys %s, expected %s" % (epoch, keys, want))
        d = dict(pairs)
        if d["event"] != "epoch" or d["epoch"] != epoch:
            fail("epoch line %r" % pairs)
        if abs(d["train_loss"] - np.mean(losses)) > 1e-12 * max(
                1, abs(d["train_loss"])):
            fail("epoch %d train_loss %r is not the mean %r of its steps" %
                 (epoch, d["train_loss"], np.mean(losses)))
        if val and not 0 <= d["val_acc"] <= 1:
            fail("val_acc %r" % d["val_acc"])
    if index != len(lines):
        fail("%d extra log lines" % (len(lines) - index))
    print("OK log: %d steps in %d epochs" % (step, epochs))


def initializers(model):
    from onnx import numpy_helper
    return {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}


def forward(model, x_path):
    """Logits of the test model (optional BN, then softmax regression)."""
    inits = initializers(model)
    x = np.load(x_path).reshape(-1, 784).astype(np.float64)
    if "bn.weight" in inits:
        mean = inits["bn.running_mean"][0]
        var = inits["bn.running_var"][0]
        x = (x - mean) / np.sqrt(var + 1e-5) * inits["bn.weight"][0] + \
            inits["bn.bias"][0]
    return x @ inits["fc.weight"].astype(np.float64).T + inits["fc.bias"]


def check_export(path, x_path, y_path, log_path, original):
    import onnx
    model = onnx.load(path)
    onnx.checker.check_model(model)
    print("OK checker")
    for bn in [n for n in model.graph.node if n.op_type == "BatchNormalization"]:
        attrs = {a.name: a for a in bn.attribute}
        if "training_mode" in attrs and attrs["training_mode"].i != 0:
            fail("BatchNormalization still in training mode")
        if len(bn.output) != 1:
            fail("BatchNormalization has outputs %s" % list(bn.output))
        names = [o.name for o in model.graph.output] + \
            [v.name for v in model.graph.value_info]
        if [n for n in names if n.startswith("bn_")]:
            fail("graph outputs/value_info still name %s" % names)
        print("OK BatchNormalization in inference mode, outputs %s" %
              list(bn.output))
    logits = forward(model, x_path)
    y = np.load(y_path)
    shifted = logits - logits.max(axis=1, keepdims=True)
    logp = shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
    loss = -np.mean(logp[np.arange(len(y)), y])
    acc = np.mean(np.argmax(logits, axis=1) == y)
    with open(log_path) as f:
        last = [json.loads(l) for l in f][-1]
    if abs(loss - last["val_loss"]) > 1e-5 * max(1.0, loss):
        fail("exported weights give val_loss %r, the log says %r" %
             (loss, last["val_loss"]))
    if abs(acc - last["val_acc"]) > 1e-12:
        fail("exported weights give val_acc %r, the log says %r" %
             (acc, last["val_acc"]))
    print("OK exported weights reproduce the last val_loss and val_acc")
    if original:
        before = initializers(onnx.load(original))
        after = initializers(model)
        for name, value in before.items():
            if np.array_equal(value, after[name]):
                fail("initializer %s was not updated" % name)
        print("OK %d initializers updated" % len(before))


def check_predict(model_path, x_path, pred_path):
    import onnx
    logits = forward(onnx.load(model_path), x_path)
    pred = np.load(pred_path)
    if pred.dtype != np.float32 or pred.shape != logits.shape:
        fail("predictions are %s %s, expected float32 %s" %
             (pred.dtype, pred.shape, logits.shape))
    err = np.max(np.abs(pred - logits)) / max(1.0, np.max(np.abs(logits)))
    if err > 1e-5:
        fail("predictions differ from the model by %g" % err)
    print("OK %d predictions match the model" % len(pred))


def same_weights(a_path, b_path, rtol):
    import onnx
    a = initializers(onnx.load(a_path))
    b = initializers(onnx.load(b_path))
    if sorted(a) != sorted(b):
        fail("initializer names differ")
    worst = 0.0
    for name in a:
        scale = max(np.max(np.abs(a[name])), 1e-30)
        worst = max(worst, np.max(np.abs(a[name] - b[name])) / scale)
    if worst > rtol:
        fail("weights differ by %g (relative), more than %g" % (worst, rtol))
    print("OK same weights (worst relative difference below %g)" % rtol)


def same_losses(a_path, b_path, rtol):
    def losses(path):
        with open(path) as f:
            return [d["loss"] for d in map(json.loads, f)
                    if d["event"] == "step"]
    a, b = losses(a_path), losses(b_path)
    if len(a) != len(b):
        fail("%d step losses against %d" % (len(a), len(b)))
    for i, (x, y) in enumerate(zip(a, b), 1):
        if abs(x - y) > rtol * max(abs(x), abs(y)):
            fail("step %d: loss %r against %r" % (i, x, y))
    print("OK %d step losses agree" % len(a))


def main():
    args = sys.argv[1:]
    if args[0] == "log":
        epochs = int(args[args.index("--epochs") + 1])
        steps = [int(s) for s in args[args.index("--steps") + 1].split(",")]
        if len(steps) == 1:
            steps *= epochs
        check_log(args[1], epochs, steps, "--val" in args,
                  "--val-loss" in args)
    elif args[0] == "export":
        original = args[args.index("--original") + 1] \
            if "--original" in args else None
        check_export(args[1], args[2], args[3], args[4], original)
    elif args[0] == "predict":
        check_predict(args[1], args[2], args[3])
    elif args[0] == "same-weights":
        same_weights(args[1], args[2], float(args[3]))
    elif args[0] == "same-losses":
        same_losses(args[1], args[2], float(args[3]))
    else:
        fail("unknown check " + args[0])


if __name__ == "__main__":
    main()
