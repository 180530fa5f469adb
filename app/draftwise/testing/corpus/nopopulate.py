"""A preload library that keeps the engine from faulting in a sparse file's hole.

The pinned engine maps a model with `MAP_POPULATE` and advises `POSIX_MADV_WILLNEED` over it
(`src/llama-mmap.cpp` llama_mmap::impl, prefetch on by default: `llama-model.cpp` calls
`ml.init_mappings(true, ...)`). On a sparse file that reads every page of the hole: the
kernel fills the page cache with zeroed pages, at about 270-370 MB/s on the 2-core test
machine (a 4 GiB hole took 15.4 s, an 8 GiB one 22 s), so a 40 GiB Llama 70B would spend
two minutes and evict the page cache of everything else, a 380 GiB DeepSeek-V3 half an hour.

The server then reads every weight once more before it is ready: `load_model` asks
`common_context_can_seq_rm` (common/common.cpp) whether the context can drop part of a
sequence, and that check decodes two tokens (a full forward pass: for Llama 70B 40 GiB of
hole read, about 50 s here). For a plain KV cache the answer is always "partial" (it only
decodes when the context has no recurrent rollback rows, and a KV cache removes any range).

Neither decides what is allocated: the buffers are sized and printed before both (`load_tensors`,
`llama_kv_cache`, `sched_reserve`), so the lines the judge compares are the same with and
without this library (tests/test_real_geometry_engine.py checks one model both ways). This
library, given to the engine as `LD_PRELOAD`, clears `MAP_POPULATE` from `mmap`, skips
`POSIX_MADV_WILLNEED`, and answers the removal check for a model without recurrent state the
way the check itself would (after clearing the memory, as it does), without the decode;
recurrent and hybrid models still run the real check. Nothing else changes. It is built with
the system C compiler (which building the engine needs anyway) into the corpus cache. Linux
only.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path

SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/types.h>

typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*madvise_fn)(void *, size_t, int);

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    static mmap_fn real;
    if (!real) real = (mmap_fn) dlsym(RTLD_NEXT, "mmap");
    return real(addr, len, prot, flags & ~MAP_POPULATE, fd, off);
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
    return mmap(addr, len, prot, flags, fd, off);
}

int posix_madvise(void *addr, size_t len, int advice) {
    static madvise_fn real;
    if (advice == POSIX_MADV_WILLNEED) return 0;
    if (!real) real = (madvise_fn) dlsym(RTLD_NEXT, "posix_madvise");
    return real(addr, len, advice);
}

/* common_context_can_seq_rm(llama_context *) -> enum common_context_seq_rm_type
   (NO 0, PART 1, FULL 2, RS 3), common/common.cpp. */
typedef int (*can_seq_rm_fn)(void *);
int _Z25common_context_can_seq_rmP13llama_context(void *ctx) {
    unsigned (*n_rs_seq)(void *) = (unsigned (*)(void *)) dlsym(RTLD_DEFAULT, "llama_n_rs_seq");
    void *(*get_memory)(void *) = (void *(*)(void *)) dlsym(RTLD_DEFAULT, "llama_get_memory");
    void *(*get_model)(void *) = (void *(*)(void *)) dlsym(RTLD_DEFAULT, "llama_get_model");
    int (*is_recurrent)(void *) = (int (*)(void *)) dlsym(RTLD_DEFAULT, "llama_model_is_recurrent");
    int (*is_hybrid)(void *) = (int (*)(void *)) dlsym(RTLD_DEFAULT, "llama_model_is_hybrid");
    void (*clear)(void *, int) = (void (*)(void *, int)) dlsym(RTLD_DEFAULT, "llama_memory_clear");
    can_seq_rm_fn real = (can_seq_rm_fn) dlsym(RTLD_NEXT, "_Z25common_context_can_seq_rmP13llama_context");
    if (!n_rs_seq || !get_memory || !get_model || !is_recurrent || !is_hybrid || !clear) return real(ctx);
    if (n_rs_seq(ctx) > 0) return 3;
    void *mem = get_memory(ctx);
    if (!mem) return 0;
    void *model = get_model(ctx);
    /* Recurrent state may refuse a partial removal: ask the engine (it decodes two tokens). */
    if (is_recurrent(model) || is_hybrid(model)) return real(ctx);
    /* A KV cache removes partial sequences; the check would decode two tokens, reading
       every weight. */
    clear(mem, 1);
    return 1;
}
"""


def library(folder: Path) -> Path | None:
    """The compiled library (built once per source), or None where it cannot be had
    (not Linux, no C compiler): the judge then lets the engine read the hole."""
    if not sys.platform.startswith("linux"):
        return None
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    tag = hashlib.sha256(SOURCE.encode()).hexdigest()[:12]
    lib = folder / f"libnopopulate-{tag}.so"
    if lib.is_file():
        return lib
    folder.mkdir(parents=True, exist_ok=True)
    src = folder / f"nopopulate-{tag}.c"
    src.write_text(SOURCE, encoding="utf-8")
    tmp = lib.with_suffix(".partial")
    done = subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", str(tmp), str(src), "-ldl"],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    if done.returncode != 0:
        tmp.unlink(missing_ok=True)
        return None
    tmp.replace(lib)
    for old in folder.glob("libnopopulate-*.so"):
        if old != lib:
            old.unlink(missing_ok=True)
    for old in folder.glob("nopopulate-*.c"):
        if old != src:
            old.unlink(missing_ok=True)
    return lib
