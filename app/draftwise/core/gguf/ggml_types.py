"""ggml tensor types and llama file types, as numbers the GGUF format stores.

Copied from gguf-py's `GGML_QUANT_SIZES` (gguf 0.19) and checked against the pinned
llama.cpp (`ggml/include/ggml.h`, `ggml/src/ggml-common.h`, `include/llama.h`): the app
must not import gguf-py (numpy) at runtime, and the engine is the authority on ids.
"""

from __future__ import annotations

# ggml type id -> (name, elements per block, bytes per block).
# Gaps (4, 5, 31-33, 36-38) are types removed from the format: a file using them is damaged
# or written by a tool llama.cpp no longer loads.
GGML_TYPES: dict[int, tuple[str, int, int]] = {
    0: ("F32", 1, 4),
    1: ("F16", 1, 2),
    2: ("Q4_0", 32, 2 + 16),
    3: ("Q4_1", 32, 2 + 2 + 16),
    6: ("Q5_0", 32, 2 + 4 + 16),
    7: ("Q5_1", 32, 2 + 2 + 4 + 16),
    8: ("Q8_0", 32, 2 + 32),
    9: ("Q8_1", 32, 4 + 4 + 32),
    10: ("Q2_K", 256, 2 + 2 + 256 // 16 + 256 // 4),
    11: ("Q3_K", 256, 2 + 256 // 4 + 256 // 8 + 12),
    12: ("Q4_K", 256, 2 + 2 + 256 // 2 + 12),
    13: ("Q5_K", 256, 2 + 2 + 256 // 2 + 256 // 8 + 12),
    14: ("Q6_K", 256, 2 + 256 // 2 + 256 // 4 + 256 // 16),
    15: ("Q8_K", 256, 4 + 256 + 256 // 8),
    16: ("IQ2_XXS", 256, 2 + 256 // 4),
    17: ("IQ2_XS", 256, 2 + 256 // 4 + 256 // 32),
    18: ("IQ3_XXS", 256, 2 + 256 // 4 + 256 // 8),
    19: ("IQ1_S", 256, 2 + 256 // 8 + 256 // 16),
    20: ("IQ4_NL", 32, 2 + 16),
    21: ("IQ3_S", 256, 2 + 256 // 4 + 256 // 8 + 256 // 32 + 4),
    22: ("IQ2_S", 256, 2 + 256 // 4 + 256 // 16),
    23: ("IQ4_XS", 256, 2 + 2 + 256 // 2 + 256 // 64),
    24: ("I8", 1, 1),
    25: ("I16", 1, 2),
    26: ("I32", 1, 4),
    27: ("I64", 1, 8),
    28: ("F64", 1, 8),
    29: ("IQ1_M", 256, 256 // 8 + 256 // 16 + 256 // 32),
    30: ("BF16", 1, 2),
    34: ("TQ1_0", 256, 2 + 4 * 13),
    35: ("TQ2_0", 256, 2 + 64),
    39: ("MXFP4", 32, 1 + 16),
    40: ("NVFP4", 64, 4 + 32),
    41: ("Q1_0", 128, 2 + 16),
    42: ("Q2_0", 64, 2 + 16),  # in the pinned ggml, not yet in gguf-py
}

# llama_ftype (include/llama.h) -> the quantization name users know from file names.
LLAMA_FTYPES: dict[int, str] = {
    0: "F32",
    1: "F16",
    2: "Q4_0",
    3: "Q4_1",
    4: "Q4_1_SOME_F16",
    7: "Q8_0",
    8: "Q5_0",
    9: "Q5_1",
    10: "Q2_K",
    11: "Q3_K_S",
    12: "Q3_K_M",
    13: "Q3_K_L",
    14: "Q4_K_S",
    15: "Q4_K_M",
    16: "Q5_K_S",
    17: "Q5_K_M",
    18: "Q6_K",
    19: "IQ2_XXS",
    20: "IQ2_XS",
    21: "Q2_K_S",
    22: "IQ3_XS",
    23: "IQ3_XXS",
    24: "IQ1_S",
    25: "IQ4_NL",
    26: "IQ3_S",
    27: "IQ3_M",
    28: "IQ2_S",
    29: "IQ2_M",
    30: "IQ4_XS",
    31: "IQ1_M",
    32: "BF16",
    36: "TQ1_0",
    37: "TQ2_0",
    38: "MXFP4_MOE",
    39: "NVFP4",
    40: "Q1_0",
    41: "Q2_0",
}

# llama.h ORs this flag into a file type it guessed rather than read.
LLAMA_FTYPE_GUESSED = 1024


def ftype_name(ftype: int) -> str | None:
    return LLAMA_FTYPES.get(ftype & ~LLAMA_FTYPE_GUESSED)
