#!/usr/bin/env python3
"""Writes targets/armnn-cpuacc.json and targets/armnn-gpuacc.json from the Arm NN documents
transcribed below (the delegate operator list and the per-backend data types of the
operator list, each at a named commit)."""
import pathlib
REPO = pathlib.Path(__file__).resolve().parents[2]
import json
DELEGATE_DOC = "https://github.com/ARM-software/armnn/blob/077cddbe9e956c6740557a9add499385f235c384/docs/05_03_delegate.dox"
OPLIST_DOC = "https://github.com/ARM-software/armnn/blob/0ec008761ab26110dcb108d544be4040a14fd403/docs/02_operator_list.dox"
ops = """ABS ADD ARG_MAX ARG_MIN AVERAGE_POOL_2D BATCH_MATMUL BATCH_TO_SPACE_ND BROADCAST_TO CAST CEIL
CONCATENATION CONV_2D CONV_3D DEPTH_TO_SPACE DEPTHWISE_CONV_2D DEQUANTIZE DIV EQUAL ELU EXP EXPAND_DIMS FILL FLOOR FLOOR_DIV
FULLY_CONNECTED GATHER GATHER_ND GELU GREATER GREATER_EQUAL HARD_SWISH L2_NORMALIZATION L2_POOL_2D LESS LESS_EQUAL
LOCAL_RESPONSE_NORMALIZATION LOG LOGICAL_AND LOGICAL_NOT LOGICAL_OR LOGISTIC LOG_SOFTMAX LSTM MAXIMUM MAX_POOL_2D
MEAN MINIMUM MIRROR_PAD MUL NEG NOT_EQUAL PACK PAD PADV2 POW PRELU QUANTIZE RANK REDUCE_MAX REDUCE_MIN REDUCE_PROD RELU RELU6
RELU_N1_TO_1 RESHAPE RESIZE_BILINEAR RESIZE_NEAREST_NEIGHBOR REVERSE_V2 RSQRT SHAPE SIN SOFTMAX SPACE_TO_BATCH_ND SPACE_TO_DEPTH
SPLIT SPLIT_V SQRT SQUARED_DIFFERENCE SQUEEZE SLICE STRIDED_SLICE SUB SUM TANH TILE TRANSPOSE TRANSPOSE_CONV
UNIDIRECTIONAL_SEQUENCE_LSTM UNPACK""".split()
FUSED = ["AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MAX_POOL_2D"]

def delegate_layer():
    entries = []
    for op in ops:
        e = {"op": op, "source": {"url": DELEGATE_DOC, "says": f"the delegate's 'Fully supported' list names {op if op not in ('SQUARED_DIFFERENCE','REVERSE_V2') else {'SQUARED_DIFFERENCE':'SQUARE_DIFFERENCE','REVERSE_V2':'REVERSEV2'}[op]}"}}
        if op in FUSED:
            e["rules"] = [{"id": f"armnn-{op.lower().replace('_','-')}-fused-activation",
                           "require": {"check": "param", "name": "activation", "in": ["none", "relu", "relu6", "relu_n1_to_1", "tanh"]},
                           "reason": "unsupported_operand_value",
                           "message": f"the Arm NN delegate takes {op} only with a fused RELU, RELU6, RELU_N1_TO_1, SIGMOID, TANH or no activation",
                           "fix": "move the activation into its own op",
                           "source": {"url": DELEGATE_DOC, "says": f"{op}, Supported Fused Activation: RELU, RELU6, RELU_N1_TO_1, SIGMOID, TANH, NONE"}}]
        entries.append(e)
    return {"name": "delegate", "description": "the Arm NN TfLite delegate's operator list (armnnDelegate asks the backend per node; ops not listed stay with TFLite)",
            "ops_not_listed": "reject",
            "unsupported_op": {"message": "Operation not supported by the Arm NN delegate", "fix": "replace the op with one the Arm NN delegate supports, or accept CPU execution by TFLite",
                               "source": {"url": DELEGATE_DOC, "says": "TfLite only delegates operations to the armnnDelegate if it does support them and otherwise executes them itself"}},
            "ops": entries}

# Backend data types per layer (02_operator_list.dox), as transcribed. dtype names: QASYMMU8=uint8,
# QASYMMS8=int8, QSYMMS16=int16, SIGNED32=int32.
ACTIVATION = ["uint8", "int8", "int16", "float16", "float32"]
TABLE = {
    # op: (Arm NN layer, {backend: dtypes})
    "ABS": ("AbsLayer", {"CpuAcc": ["float16", "float32", "int32"], "GpuAcc": ["float16", "float32"]}),
    "ADD": ("AdditionLayer", {"CpuAcc": ["uint8", "int8", "int16", "int32", "float16", "float32"], "GpuAcc": ["uint8", "int8", "int16", "int32", "float16", "float32"]}),
    "ARG_MAX": ("ArgMinMaxLayer", {"CpuAcc": ["uint8", "int8", "int32", "float16", "float32"], "GpuAcc": ["uint8", "int8", "int32", "float16", "float32"]}),
    "ARG_MIN": ("ArgMinMaxLayer", {"CpuAcc": ["uint8", "int8", "int32", "float16", "float32"], "GpuAcc": ["uint8", "int8", "int32", "float16", "float32"]}),
    "BATCH_MATMUL": ("BatchMatMulLayer", {"CpuAcc": ["float32", "int8"], "GpuAcc": ["float32", "int8"]}),
    "CAST": ("CastLayer", {"CpuAcc": ["int8", "uint8", "float16", "int32", "float32"], "GpuAcc": ["int8", "uint8", "int32", "float16", "float32"]}),
    "CONCATENATION": ("ConcatLayer", {"CpuAcc": ["uint8", "int8", "float16", "float32"], "GpuAcc": ["uint8", "int8", "float16", "float32"]}),
    "CONV_2D": ("Convolution2dLayer", {"CpuAcc": ["int32", "float16", "float32", "uint8", "int8"], "GpuAcc": ["int32", "float16", "float32", "uint8", "int8"]}),
}
for op in ["LOGISTIC", "RELU", "RELU6", "RELU_N1_TO_1", "TANH", "HARD_SWISH", "ELU"]:
    TABLE[op] = ("ActivationLayer", {"CpuAcc": ACTIVATION, "GpuAcc": ACTIVATION})
NOT_ON = {"CONV_3D": "Convolution3dLayer"}  # CpuAcc and GpuAcc: N/A

def backend_layer(backend):
    entries = []
    for op, (layer, by_backend) in TABLE.items():
        dt = by_backend[backend]
        entries.append({"op": op, "source": {"url": OPLIST_DOC, "says": f"{layer} lists {backend}"},
                        "rules": [{"id": f"{backend.lower()}-{op.lower().replace('_','-')}-types",
                                   "require": {"check": "dtype", "tensor": "activations", "in": dt},
                                   "reason": "unsupported_input_type",
                                   "message": f"Arm NN's {backend} backend runs {layer} ({op}) only on {', '.join(dt)} tensors",
                                   "fix": "use a data type the backend supports (e.g. quantize the model), or accept CPU execution by TFLite",
                                   "source": {"url": OPLIST_DOC, "says": f"{layer}, {backend} data types: {', '.join(dt)} (QASYMMU8 = uint8, QASYMMS8 = int8, QSYMMS16 = int16, SIGNED32 = int32)"}}]})
    for op, layer in NOT_ON.items():
        entries.append({"op": op, "source": {"url": OPLIST_DOC, "says": f"{layer}: {backend} N/A"},
                        "rules": [{"id": f"{backend.lower()}-{op.lower().replace('_','-')}-absent",
                                   "require": {"check": "op_version", "lt": 0},
                                   "reason": "driver_rejected",
                                   "message": f"Arm NN's {backend} backend has no {layer}",
                                   "fix": f"use another backend (CpuRef has it) or accept CPU execution by TFLite",
                                   "source": {"url": OPLIST_DOC, "says": f"{layer}: {backend} data layouts N/A, data types N/A"}}]})
    return {"name": "backend", "description": f"Arm NN's {backend} backend (IsLayerSupported per node): the data types of its operator list for the ops transcribed here; ops not transcribed are accepted as the delegate accepts them (their per-backend data types are not modelled)",
            "ops_not_listed": "accept", "ops": entries}

for backend, tid in (("CpuAcc", "armnn-cpuacc"), ("GpuAcc", "armnn-gpuacc")):
    what = "Arm Compute Library NEON kernels on the Cortex-A CPU" if backend == "CpuAcc" else "Arm Compute Library OpenCL kernels on the Mali GPU"
    t = {"id": tid,
         "description": f"Arm NN TfLite delegate with backends={backend} ({what}), e.g. the google-armnn stack and i.MX boards' Arm NN (seed 002). Two layers: the delegate's operator list, then the backend's data types per layer from Arm NN's operator list. Per-backend data types are transcribed for ABS, ADD, ARG_MAX/MIN, BATCH_MATMUL, CAST, CONCATENATION, CONV_2D, CONV_3D and the activation layer; other ops follow the delegate list only. Shape limits and the backend's own IsLayerSupported checks beyond data types are not modelled.",
         "version": "Arm NN docs at commits 077cddbe (delegate operator list) and 0ec00876 (operator list per backend)",
         "partitioning": {"max_delegated_partitions": 0, "min_nodes_per_partition": 0, "single_cut": False,
                          "source": {"url": DELEGATE_DOC, "says": "TfLite delegates every operation the armnnDelegate supports; the rest runs in TfLite"}},
         "layers": [delegate_layer(), backend_layer(backend)]}
    open(REPO / "targets" / f"{tid}.json", "w").write(json.dumps(t, indent=1) + "\n")
