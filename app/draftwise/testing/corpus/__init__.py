"""A corpus of real model geometries: published models as sparse GGUF files, judged by the
real engine (issue 18). Tests and benchmarks only.

Each corpus model is a `spec.ModelSpec`: the `{arch}.*` and tokenizer keys and the tensor
table the pinned `convert_hf_to_gguf.py` writes for the model's published config.json, and
the quantization `llama-quantize` applies. `build.generate(spec)` writes the file into the
cache (`realmodels.cache_dir()/corpus/`, keyed by a content hash) with the tensor data left
as a file hole, the tensor types taken from the pinned `llama-quantize --dry-run`
(`quantize.py`). `judge.judge_run(spec, path, mode, ...)` plans a launch, starts the real
engine on the file (mapped, never read: `nopopulate.py`), and compares the plan with the
engine's buffer lines. `tests/test_real_geometry_engine.py` runs ten of them;
`bench/real_models.py` all of them. docs/corpus.md has the method and the measured table.

Adding a family (one module per family, nothing else to touch):

1. create `families/<family>.py` with a `models() -> list[ModelSpec]` function; each spec's
   `family` is the module's name (the registry checks it);
2. read the family's converter class (`conversion/<family>.py`: `set_gguf_parameters`,
   `modify_tensors`, `set_vocab`) for the keys and the tensor names, and
   `src/models/<arch>.cpp` `load_arch_tensors` for the shapes; write the config.json values
   as a dataclass or literal with a comment naming the repository they come from
   (`# Qwen/Qwen2.5-7B-Instruct config.json`);
3. use `blocks.py` for the usual attention / FFN / MoE pieces and `spec.Table` for the rest,
   `spec.kv_list` for the keys (`spec.u32/f32/...` for their GGUF types as the converter
   writes them);
4. the tokenizer: a `spec.Vocab` naming a real list (`vocab:<name>` for the pinned
   `models/ggml-vocab-<name>.gguf`, `gemma3-270m`), the family's special tokens, and the
   converted size; `synth:<base>` only where no real list is at hand (say so in `notes`);
5. check it: `bench/real_models.py --only <name>` generates the file, and the engine
   refuses a missing tensor or a wrong shape (`done_getting_tensors` counts the extras).
"""
