"""Rewrite the Kokoro-82M ONNX graph at set-up time (never at run time).

    kokoro_graph.py edge-cap IN OUT [LEAD TAIL]  the model Umwelt runs (scripts/setup-models.sh)
    kokoro_graph.py fp32 IN OUT                experiment: int8 weights dequantised to fp32
    kokoro_graph.py conv2d IN OUT              experiment: 1-D convolutions as 2-D (NCHWc kernels)

edge-cap: Kokoro's duration predictor gives the two padding tokens that frame every input
(tokens = [0, ids..., 0]) 10-19 frames of 25 ms each: up to half a second of silence that the
decoder synthesises at full cost. Umwelt caps the leading one at LEAD frames (default 10) and the
trailing one at TAIL (default 3) inside the graph, right after the predicted durations are
rounded, and puts the pauses between phrases back itself (src/voice/). A shorter lead costs the
first word (whisper heard "Hello there" as "Oh, there" with 4 and 6 frames; 8 and 10 kept it), so
10 it is. Measured effect: docs/PERFORMANCE.md, "Voice".

fp32 and conv2d are kept so the numbers in docs/PERFORMANCE.md can be reproduced; neither is
used: on this machine both ran slower than the int8 graph.
"""
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def edge_cap(model, lead, tail):
    g = model.graph
    clip = [n for n in g.node if n.op_type == "Clip" and n.name == "/encoder/Clip"]
    if len(clip) != 1:
        sys.exit("kokoro_graph: this is not the Kokoro v1.0 graph (no /encoder/Clip after the durations)")
    clip = clip[0]
    durations = clip.output[0]
    raw = durations + "_uncapped"
    clip.output[0] = raw
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.int64), name)
    g.initializer.extend([
        i64("umwelt_edge_0", [0]), i64("umwelt_edge_1", [1]), i64("umwelt_edge_m1", [-1]),
        i64("umwelt_edge_end", [2**62]), i64("umwelt_edge_axis", [1]),
        numpy_helper.from_array(np.array(float(lead), dtype=np.float32), "umwelt_lead_cap"),
        numpy_helper.from_array(np.array(float(tail), dtype=np.float32), "umwelt_tail_cap"),
    ])
    new = [
        helper.make_node("Slice", [raw, "umwelt_edge_0", "umwelt_edge_1", "umwelt_edge_axis"], ["umwelt_first"]),
        helper.make_node("Slice", [raw, "umwelt_edge_1", "umwelt_edge_m1", "umwelt_edge_axis"], ["umwelt_inner"]),
        helper.make_node("Slice", [raw, "umwelt_edge_m1", "umwelt_edge_end", "umwelt_edge_axis"], ["umwelt_last"]),
        helper.make_node("Min", ["umwelt_first", "umwelt_lead_cap"], ["umwelt_first_capped"]),
        helper.make_node("Min", ["umwelt_last", "umwelt_tail_cap"], ["umwelt_last_capped"]),
        helper.make_node("Concat", ["umwelt_first_capped", "umwelt_inner", "umwelt_last_capped"], [durations], axis=1),
    ]
    at = list(g.node).index(clip)
    for j, n in enumerate(new):
        g.node.insert(at + 1 + j, n)


def _graph_maps(g):
    inits = {i.name: i for i in g.initializer}
    prod = {o: n for n in g.node for o in n.output}
    cons = {}
    for n in g.node:
        for i in n.input:
            cons.setdefault(i, []).append(n)
    return inits, prod, cons


def _prune(g, extra_inits):
    nodes = list(g.node)
    outs = {o.name for o in g.output}
    while True:
        used = {i for n in nodes for i in n.input} | outs
        keep = [n for n in nodes if any(o in used for o in n.output if o)]
        if len(keep) == len(nodes):
            break
        nodes = keep
    del g.node[:]
    g.node.extend(nodes)
    used = {i for n in nodes for i in n.input}
    kept = [i for i in g.initializer if i.name in used] + [i for i in extra_inits if i.name in used]
    del g.initializer[:]
    g.initializer.extend(kept)


def fp32(model):
    g = model.graph
    inits, prod, cons = _graph_maps(g)
    arr = lambda n: numpy_helper.to_array(inits[n])
    only = lambda name: cons[name][0] if len(cons[name]) == 1 else sys.exit("kokoro_graph: unexpected fan-out at " + name)

    def float_ancestor(name, shape):
        stack, seen = [name], set()
        while stack:
            t = stack.pop()
            if t in seen:
                continue
            seen.add(t)
            if t in inits and inits[t].data_type == onnx.TensorProto.FLOAT and list(inits[t].dims) == shape:
                return t
            if t in prod:
                stack.extend(prod[t].input)
        sys.exit("kokoro_graph: no float bias above " + name)

    made, extra, replace, drop = set(), [], {}, set()
    for n in list(g.node):
        if n.op_type in ("MatMulInteger", "ConvInteger"):
            x = prod[n.input[0]].input[0]  # the input of DynamicQuantizeLinear
            wq = arr(n.input[1]).astype(np.float32)
            wzp = arr(n.input[3]).astype(np.float32) if len(n.input) > 3 and n.input[3] else np.float32(0)
            nxt, bias, chain = only(n.output[0]), None, [n]
            if nxt.op_type == "Add":
                bias = float_ancestor([i for i in nxt.input if i != n.output[0]][0], [wq.shape[0]])
                chain.append(nxt)
                nxt = only(nxt.output[0])
            chain.append(nxt)  # Cast
            mul = only(nxt.output[0])
            scale_mul = prod[[i for i in mul.input if i != nxt.output[0]][0]]
            wscale = arr([i for i in scale_mul.input if i in inits][0]).astype(np.float32)
            if n.op_type == "ConvInteger":
                shape = (-1,) + (1,) * (wq.ndim - 1)
                wzp = wzp.reshape(shape) if np.ndim(wzp) == 1 else wzp
                wscale = wscale.reshape(shape) if wscale.ndim == 1 else wscale
            wname = n.input[1].replace("_quantized", "") + "_f32"
            if wname not in made:
                made.add(wname)
                extra.append(numpy_helper.from_array(((wq - wzp) * wscale).astype(np.float32), wname))
            if n.op_type == "MatMulInteger":
                new = helper.make_node("MatMul", [x, wname], [mul.output[0]], name=n.name + "_f32")
            else:
                new = helper.make_node("Conv", [x, wname] + ([bias] if bias else []), [mul.output[0]], name=n.name + "_f32")
                new.attribute.extend(n.attribute)
            replace[id(mul)] = new
            drop.update(id(c) for c in chain)
        elif n.op_type == "DynamicQuantizeLSTM":
            X, W, R, B, sl, h0, c0, P, Ws, Wz, Rs, Rz = (list(n.input) + [""] * 12)[:12]

            def deq(q, s, z):
                a = arr(q).astype(np.float32)
                s = arr(s).astype(np.float32).reshape(-1, 1, 1)
                z = arr(z).astype(np.float32).reshape(-1, 1, 1)
                return np.ascontiguousarray(((a - z) * s).transpose(0, 2, 1)).astype(np.float32)

            wn, rn = W.replace("_quantized", "") + "_f32", R.replace("_quantized", "") + "_f32"
            extra += [numpy_helper.from_array(deq(W, Ws, Wz), wn), numpy_helper.from_array(deq(R, Rs, Rz), rn)]
            ins = [X, wn, rn, B, sl, h0, c0] + ([P] if P else [])
            while ins[-1] == "":
                ins.pop()
            new = helper.make_node("LSTM", ins, list(n.output), name=n.name + "_f32")
            new.attribute.extend(n.attribute)
            replace[id(n)] = new
    nodes = [replace.get(id(n), n) for n in g.node if id(n) not in drop or id(n) in replace]
    del g.node[:]
    g.node.extend(nodes)
    _prune(g, extra)


def conv2d(model):
    g = model.graph
    inits, _, _ = _graph_maps(g)
    extra = [numpy_helper.from_array(np.array([2], dtype=np.int64), "umwelt_axis2")]
    nodes, made = [], set()
    for n in g.node:
        if n.op_type == "Conv" and n.input[1] in inits and len(inits[n.input[1]].dims) == 3:
            wn = n.input[1] + "_2d"
            if wn not in made:
                made.add(wn)
                extra.append(numpy_helper.from_array(numpy_helper.to_array(inits[n.input[1]])[:, :, None, :].copy(), wn))
            att = {a.name: helper.get_attribute_value(a) for a in n.attribute}
            kw = {"group": att.get("group", 1)}
            if "kernel_shape" in att:
                kw["kernel_shape"] = [1] + list(att["kernel_shape"])
            if "pads" in att:
                kw["pads"] = [0, att["pads"][0], 0, att["pads"][1]]
            for k in ("dilations", "strides"):
                if k in att:
                    kw[k] = [1] + list(att[k])
            x2, y2 = n.output[0] + "_x2d", n.output[0] + "_y2d"
            nodes += [
                helper.make_node("Unsqueeze", [n.input[0], "umwelt_axis2"], [x2]),
                helper.make_node("Conv", [x2, wn] + list(n.input[2:]), [y2], name=n.name + "_2d", **kw),
                helper.make_node("Squeeze", [y2, "umwelt_axis2"], [n.output[0]]),
            ]
        else:
            nodes.append(n)
    del g.node[:]
    g.node.extend(nodes)
    _prune(g, extra)


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("edge-cap", "fp32", "conv2d"):
        sys.exit(__doc__)
    cmd, src, dst = sys.argv[1:4]
    model = onnx.load(src)
    if cmd == "edge-cap":
        edge_cap(model, int(sys.argv[4]) if len(sys.argv) > 4 else 10, int(sys.argv[5]) if len(sys.argv) > 5 else 3)
    elif cmd == "fp32":
        fp32(model)
    else:
        conv2d(model)
    onnx.checker.check_model(model)
    onnx.save(model, dst)


if __name__ == "__main__":
    main()
