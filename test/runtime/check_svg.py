#!/usr/bin/env python3
# Checks the SVG `trainer plot` wrote against the log it was drawn from
# (test/runtime/plot.test). Prints "OK ..." lines for FileCheck, or
# "FAIL: ..." and exits 1.
#   check_svg.py CURVES.svg RUN.jsonl
# The file must parse as XML, reference nothing outside itself, hold one
# polyline per series with one point per log value (in step order, inside
# its panel's frame, higher values drawn higher), ticks with labels on both
# axes of every panel, the axis titles and a legend entry per series. Then
# the axes and the legend: the accuracy axis ends at exactly 1 (its top
# tick is 1, on the frame); a constant series lies inside its axis, away
# from the frame, with no negative tick for a positive value; a series of
# one point has a marker of radius >= 4 inside the frame and its value in
# the legend; no legend element lies inside a frame (it covers no curve).
import json
import re
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def main():
    svg_path, log_path = sys.argv[1], sys.argv[2]
    try:
        root = ET.parse(svg_path).getroot()
    except ET.ParseError as e:
        fail("not XML: %s" % e)
    if root.tag != NS + "svg":
        fail("root element %s" % root.tag)
    print("OK XML svg")

    raw = open(svg_path).read()
    for bad in ("<script", "<image", "<foreignObject", "@import", "href"):
        if bad in raw:
            fail("external or active content: %s" % bad)
    if re.findall(r"https?://", raw) != ["http://"]:  # the xmlns only
        fail("links to other resources")
    print("OK self-contained")

    steps, epochs, last = [], [], 0
    for line in open(log_path):
        d = json.loads(line)
        if d["event"] == "step":
            steps.append(d)
            last = d["step"]
        elif d["event"] == "epoch":
            epochs.append(dict(d, at=last))
    expected = {
        "step-loss": [(s["step"], s["loss"]) for s in steps],
        "lr": [(s["step"], s["lr"]) for s in steps],
        "epoch-train-loss": [(e["at"], e["train_loss"]) for e in epochs],
    }
    if "val_loss" in epochs[0]:
        expected["epoch-val-loss"] = [(e["at"], e["val_loss"]) for e in epochs]
        expected["val-acc"] = [(e["at"], e["val_acc"]) for e in epochs]

    panels = {g.get("id"): g for g in root.iter(NS + "g")
              if (g.get("id") or "").startswith("panel-")}
    found = {}
    for panel_id, panel in panels.items():
        frame = panel.find(NS + "rect")
        x0, y0 = float(frame.get("x")), float(frame.get("y"))
        x1, y1 = x0 + float(frame.get("width")), y0 + float(frame.get("height"))
        texts = {t.get("class"): [] for t in panel.iter(NS + "text")}
        for t in panel.iter(NS + "text"):
            texts[t.get("class")].append(t.text)
        if len(texts.get("x-tick", [])) < 2 or len(texts.get("y-tick", [])) < 2:
            fail("%s: fewer than two ticks on an axis" % panel_id)
        if texts.get("x-title") != ["optimizer step"]:
            fail("%s: x title %s" % (panel_id, texts.get("x-title")))
        for line in panel.iter(NS + "polyline"):
            name = line.get("id")
            pts = [tuple(map(float, p.split(",")))
                   for p in line.get("points").split()]
            for x, y in pts:
                inside = (x0 - 1e-6 <= x <= x1 + 1e-6 and
                          y0 - 1e-6 <= y <= y1 + 1e-6)
                if not inside:
                    fail("%s: point %s outside the frame" % (name, (x, y)))
            found[name] = (panel_id, pts, texts)
    for name, values in expected.items():
        if name not in found:
            fail("no polyline %s" % name)
        panel_id, pts, texts = found[name]
        if len(pts) != len(values):
            fail("%s: %d points for %d values" % (name, len(pts), len(values)))
        for (xa, ya), (xb, yb), (sa, va), (sb, vb) in zip(
                pts, pts[1:], values, values[1:]):
            if (xb > xa) != (sb > sa) or (va != vb and (yb < ya) != (vb > va)):
                fail("%s: points do not follow the values" % name)
        print("OK %s: %d points in %s, y title %r, legend %s" % (
            name, len(pts), panel_id, texts["y-title"][0], texts["legend"]))
    extra = sorted(set(found) - set(expected))
    if extra:
        fail("unexpected series %s" % extra)

    frames = {}
    for panel_id, panel in panels.items():
        frame = panel.find(NS + "rect")
        x0, y0 = float(frame.get("x")), float(frame.get("y"))
        frames[panel_id] = (x0, y0, x0 + float(frame.get("width")),
                            y0 + float(frame.get("height")))

    def y_ticks(panel_id):
        ticks = []
        for t in panels[panel_id].iter(NS + "text"):
            if t.get("class") == "y-tick":
                ticks.append((float(t.text), float(t.get("y")) - 4))
        return ticks

    if "panel-accuracy" in panels:
        x0, y0, x1, y1 = frames["panel-accuracy"]
        top_value, top_y = max(y_ticks("panel-accuracy"))
        if top_value != 1 or abs(top_y - y0) > 0.5:
            fail("accuracy axis: top tick %s at y %s, the frame top is %s" %
                 (top_value, top_y, y0))
        print("OK accuracy axis ends at 1")

    for name, values in expected.items():
        panel_id, pts, texts = found[name]
        x0, y0, x1, y1 = frames[panel_id]
        if len(set(v for _, v in values)) == 1 and len(values) > 1:
            ys = [y for _, y in pts]
            margin = (y1 - y0) * 0.1
            if not all(y0 + margin < y < y1 - margin for y in ys):
                fail("%s: a constant series drawn at the frame's edge" % name)
            if values[0][1] > 0 and min(v for v, _ in y_ticks(panel_id)) < 0:
                fail("%s: negative ticks for a positive constant" % name)
            print("OK %s: constant, inside its axis" % name)
        if len(values) == 1:
            circles = [c for c in panels[panel_id].iter(NS + "circle")
                       if c.get("class") == name]
            if len(circles) != 1 or float(circles[0].get("r")) < 4:
                fail("%s: one point without a visible marker" % name)
            cx, cy = float(circles[0].get("cx")), float(circles[0].get("cy"))
            if not (x0 < cx < x1 and y0 <= cy <= y1):
                fail("%s: the marker lies outside the frame" % name)
            value = "%.4g" % values[0][1]
            if not any(t.endswith(": " + value) for t in texts["legend"]):
                fail("%s: no legend entry with the value %s in %s" %
                     (name, value, texts["legend"]))
            print("OK %s: one point, marker and value %s" % (name, value))

    for panel_id, panel in panels.items():
        x0, y0, x1, y1 = frames[panel_id]
        for e in panel.iter():
            if e.get("class") != "legend":
                continue
            ys = ([float(e.get("y"))] if e.tag == NS + "text" else
                  [float(e.get("y1")), float(e.get("y2"))])
            if any(y0 <= y <= y1 for y in ys):
                fail("%s: legend inside the frame, over the curves" % panel_id)
    print("OK legends outside the frames")


if __name__ == "__main__":
    main()
