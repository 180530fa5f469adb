"""Reading the engine's memory lines. The CPU logs are recorded from the pinned engine at
`-lv 4` (tiny models of tinyarchs); the CUDA one follows the same formats with the buffer
names a CUDA build prints."""

from __future__ import annotations

from draftwise.core.planning import logparse
from draftwise.core.planning.logparse import DRAFT, TARGET

MiB = 1 << 20

LLAMA = """\
0.00.002.129 I cmn  common_param:   - CPU     : AMD EPYC (24105 MiB, 24105 MiB free)
0.00.004.044 I cmn  common_init_: fitting params to device memory ...
0.00.006.720 I common_memory_breakdown_print: |   - Host               |                   28 =    11 +       8 +       9                |
0.00.006.882 I common_params_fit_impl: projected to use 28 MiB of host memory vs. 24105 MiB of total host memory
0.00.006.883 I common_params_fit_impl: will leave 24076 >= 1024 MiB of system memory, no changes needed
0.00.006.884 I common_fit_params: successfully fit params to free device memory
0.00.006.885 I common_fit_params: fitting params to free memory took 0.00 seconds
0.00.009.766 I load_tensors:   CPU_Mapped model buffer size =    11.08 MiB
0.00.010.203 I llama_context:        CPU  output buffer size =     0.02 MiB
0.00.010.255 I llama_kv_cache:        CPU KV buffer size =     8.00 MiB
0.00.013.680 I llama_kv_cache: size =    8.00 MiB (  4096 cells,   4 layers,  4/1 seqs), K (f16):    4.00 MiB, V (f16):    4.00 MiB
0.00.014.765 I sched_reserve:        CPU compute buffer size =     9.52 MiB
0.00.023.516 I srv  llama_server: listening on http://127.0.0.1:18181
"""

GEMMA3_ISWA = """\
0.00.010.117 I load_tensors:   CPU_Mapped model buffer size =    14.56 MiB
0.00.010.395 I llama_context:        CPU  output buffer size =     0.00 MiB
0.00.010.396 I llama_kv_cache_iswa: creating non-SWA KV cache, size = 4096 cells
0.00.010.432 I llama_kv_cache:        CPU KV buffer size =     2.00 MiB
0.00.011.103 I llama_kv_cache: size =    2.00 MiB (  4096 cells,   1 layers,  1/1 seqs), K (f16):    1.00 MiB, V (f16):    1.00 MiB
0.00.011.115 I llama_kv_cache_iswa: creating     SWA KV cache, size = 768 cells
0.00.011.138 I llama_kv_cache:        CPU KV buffer size =     1.88 MiB
0.00.011.908 I llama_kv_cache: size =    1.88 MiB (   768 cells,   5 layers,  1/1 seqs), K (f16):    0.94 MiB, V (f16):    0.94 MiB
0.00.013.085 I sched_reserve:        CPU compute buffer size =    10.28 MiB
"""

HYBRID = """\
0.00.010.806 I load_tensors:   CPU_Mapped model buffer size =    19.17 MiB
0.00.011.043 I llama_context:        CPU  output buffer size =     0.00 MiB
0.00.011.073 I llama_kv_cache:        CPU KV buffer size =     4.00 MiB
0.00.012.716 I llama_kv_cache: size =    4.00 MiB (  4096 cells,   2 layers,  1/1 seqs), K (f16):    2.00 MiB, V (f16):    2.00 MiB
0.00.012.952 I llama_memory_recurrent:        CPU RS buffer size =     0.53 MiB
0.00.012.964 I llama_memory_recurrent: size =    0.53 MiB (     1 cells,   6 layers,  1 seqs  0 rs_seq), R (f32):    0.03 MiB, S (f32):    0.50 MiB, P (f32):    0.00 MiB
0.00.014.095 I sched_reserve:        CPU compute buffer size =    12.42 MiB
"""

# -lv 5: the fit step's dry runs print buffer lines of their own (0.00 MiB model and KV
# buffers, real compute sizes) between its first and last line; they allocate nothing.
MTP_LV5 = """\
0.00.003.877 I cmn  common_init_: fitting params to device memory ...
0.00.006.097 I load_tensors:          CPU model buffer size =     0.00 MiB
0.00.006.164 I llama_context:        CPU  output buffer size =     0.00 MiB
0.00.006.283 I llama_kv_cache:        CPU KV buffer size =     0.00 MiB
0.00.007.358 I sched_reserve:        CPU compute buffer size =     9.52 MiB
0.00.009.866 I sched_reserve:        CPU compute buffer size =     6.01 MiB
0.00.009.931 I common_params_fit_impl: projected to use 49 MiB of host memory vs. 24105 MiB of total host memory
0.00.009.942 I common_fit_params: successfully fit params to free device memory
0.00.009.943 I common_fit_params: fitting params to free memory took 0.01 seconds
0.00.025.573 I load_tensors:   CPU_Mapped model buffer size =    23.88 MiB
0.00.025.921 I llama_context:        CPU  output buffer size =     0.00 MiB
0.00.025.971 I llama_kv_cache:        CPU KV buffer size =     8.00 MiB
0.00.028.968 I llama_kv_cache: size =    8.00 MiB (  4096 cells,   4 layers,  1/1 seqs), K (f16):    4.00 MiB, V (f16):    4.00 MiB
0.00.030.319 I sched_reserve:        CPU compute buffer size =     9.52 MiB
0.00.032.347 I common_speculative_init_result: creating MTP draft context against the target model 'm.gguf'
0.00.032.403 I llama_context:        CPU  output buffer size =     0.00 MiB
0.00.032.533 I llama_kv_cache:        CPU KV buffer size =     2.00 MiB
0.00.033.396 I llama_kv_cache: size =    2.00 MiB (  4096 cells,   1 layers,  1/1 seqs), K (f16):    1.00 MiB, V (f16):    1.00 MiB
0.00.034.245 I sched_reserve:        CPU compute buffer size =     6.01 MiB
0.00.035.405 I spec common_specu: adding speculative implementation 'draft-mtp'
0.00.036.331 I sched_reserve:        CPU compute buffer size =     6.01 MiB
0.00.099.620 D ~llama_context:        CPU compute buffer size is   6.0117 MiB, matches expectation of   6.0117 MiB
"""

DRAFT_SIMPLE = """\
0.00.011.764 I load_tensors:   CPU_Mapped model buffer size =    11.08 MiB
0.00.012.185 I llama_context:        CPU  output buffer size =     0.01 MiB
0.00.012.226 I llama_kv_cache:        CPU KV buffer size =     4.00 MiB
0.00.013.512 I llama_kv_cache: size =    4.00 MiB (  1024 cells,   4 layers,  2/2 seqs), K (f16):    2.00 MiB, V (f16):    2.00 MiB
0.00.014.796 I sched_reserve:        CPU compute buffer size =     6.52 MiB
0.00.302.167 I common_speculative_init_result: loading draft model 'draft.gguf'
0.00.303.503 I load_tensors:   CPU_Mapped model buffer size =     0.29 MiB
0.00.303.594 I llama_context:        CPU  output buffer size =     0.01 MiB
0.00.303.656 I llama_kv_cache:        CPU KV buffer size =     0.12 MiB
0.00.303.714 I llama_kv_cache: size =    0.12 MiB (  1024 cells,   1 layers,  2/2 seqs), K (f16):    0.06 MiB, V (f16):    0.06 MiB
0.00.304.493 I sched_reserve:        CPU compute buffer size =     1.39 MiB
0.00.305.220 I spec common_specu: adding speculative implementation 'draft-simple'
"""

CUDA = """\
0.00.100.000 I ggml_cuda_init: found 1 CUDA devices:
0.00.200.000 I llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4060) (0000:01:00.0) - 7690 MiB free
0.01.000.000 I load_tensors: offloading 32 repeating layers to GPU
0.01.000.000 I load_tensors:        CUDA0 model buffer size =  4403.49 MiB
0.01.000.000 I load_tensors:   CPU_Mapped model buffer size =   281.81 MiB
0.01.200.000 I llama_context:  CUDA_Host  output buffer size =     0.49 MiB
0.01.200.000 I llama_kv_cache:      CUDA0 KV buffer size =  2176.00 MiB
0.01.300.000 I sched_reserve:      CUDA0 compute buffer size =   162.00 MiB
0.01.300.000 I sched_reserve:  CUDA_Host compute buffer size =    72.01 MiB
"""


def test_plain_launch():
    mem = logparse.parse_log(LLAMA)
    assert mem.by_component() == {
        "weights": round(11.08 * MiB), "kv": 8 * MiB, "rs": 0,
        "compute": round(9.52 * MiB), "output": round(0.02 * MiB),
    }  # fmt: skip
    assert mem.projected_host == 28 * MiB and mem.projected_device is None
    assert mem.caches == [logparse.KVCache(4096, 4, 4, 1, "f16", TARGET)]
    assert not mem.has_draft and mem.summary()["drafter"] == 0
    assert mem.total == sum(mem.by_component().values())


def test_sliding_window_caches_add_up():
    mem = logparse.parse_log(GEMMA3_ISWA)
    assert mem.component("kv") == 2 * MiB + round(1.88 * MiB)
    assert [c.cells for c in mem.caches] == [4096, 768]


def test_recurrent_state_is_its_own_component():
    mem = logparse.parse_log(HYBRID)
    assert mem.component("rs") == round(0.53 * MiB)
    assert mem.summary()["kv"] == 4 * MiB + round(0.53 * MiB)


def test_mtp_context_is_the_drafter_and_fit_dry_runs_are_skipped():
    mem = logparse.parse_log(MTP_LV5)
    target, draft = mem.by_component(TARGET), mem.by_component(DRAFT)
    assert target["weights"] == round(23.88 * MiB)  # not the fit's 0.00 MiB dry run
    assert target["kv"] == 8 * MiB and target["compute"] == round(9.52 * MiB)
    # The re-reserve after the speculative setup replaces the draft's compute buffer.
    assert draft == {"weights": 0, "kv": 2 * MiB, "rs": 0, "compute": round(6.01 * MiB), "output": 0}
    assert mem.projected_host == 49 * MiB
    assert mem.summary()["drafter"] == 2 * MiB + round(6.01 * MiB)
    assert [c.context for c in mem.caches] == [TARGET, DRAFT]


def test_draft_model_weights_are_the_drafters():
    mem = logparse.parse_log(DRAFT_SIMPLE)
    assert mem.component("weights", DRAFT) == round(0.29 * MiB)
    assert mem.component("weights", TARGET) == round(11.08 * MiB)
    assert mem.caches[1] == logparse.KVCache(1024, 1, 2, 2, "f16", DRAFT)


def test_gpu_buffers_by_device():
    mem = logparse.parse_log(CUDA)
    by = mem.by_buffer()
    assert by["CUDA0"] == round(4403.49 * MiB) + 2176 * MiB + 162 * MiB
    assert by["CUDA_Host"] == round(0.49 * MiB) + round(72.01 * MiB)
    assert by["CPU_Mapped"] == round(281.81 * MiB)
    assert mem.devices_used == ["CUDA0"] and mem.warnings == []
    data = mem.to_json()
    assert data["bytes"]["total"] == mem.total and data["draft"] is None


def test_gpu_that_failed_to_start_is_said():
    mem = logparse.parse_lines([
        "0.00.001 W ggml_cuda_init: failed to initialize CUDA: no CUDA-capable device is detected",
        "0.00.002 I load_tensors:   CPU_Mapped model buffer size =   100.00 MiB",
    ])  # fmt: skip
    assert mem.warnings and "runs on the CPU" in mem.warnings[0]
    assert logparse.parse_lines(["ggml_vulkan: No devices found."]).warnings


def test_garbage_and_empty_logs():
    assert logparse.parse_log("").total == 0
    mem = logparse.parse_log("buffer size = lots\nKV buffer size = x MiB\n\x00\xff")
    assert mem.lines == []
