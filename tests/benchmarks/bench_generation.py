"""Throughput of the transformers generation backend and the scorers, against their peers.

Builds a random-weight model of a real architecture (Qwen2 or Llama; ``--size 3b`` gives the
Qwen2.5-3B / Llama-3.2-3B shapes, the default ``tiny`` runs on a CPU in seconds) with a
hand-built word-level tokenizer, saves it with ``save_pretrained`` and measures:

* ``generate_shard``: prompts/s and generated tokens/s at several batch sizes, against a
  plain ``model.generate`` loop over the same batches (the peer), printed as a ratio;
* decode roofline: bytes of weights read per decode step x decode steps/s, as a fraction of
  the device's peak memory bandwidth (``--peak-gbps``, default from a table keyed by GPU name);
* scorers: texts/s of ``score_shard`` (detoxify, profanity, token_nll) against the direct
  library calls (Detoxify.predict, profanity_check.predict_prob, a plain forward pass).

Run: ``python tests/benchmarks/bench_generation.py [--size tiny|3b] [--arch qwen2|llama]``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch
from tailgate.files.atomic import write_json, write_parquet
from tailgate.generate.transformers_backend import generate_shard
from tailgate.models import length_sorted_batches
from tailgate.score import score_shard

# peak HBM bandwidth in GB/s, matched as substrings of torch.cuda.get_device_name()
PEAK_GBPS = {
    "H200": 4800.0,
    "H100 PCIe": 2000.0,
    "H100": 3350.0,
    "A100-SXM4-80GB": 2039.0,
    "A100 80GB PCIe": 1935.0,
    "A100": 1555.0,
    "L40S": 864.0,
    "L4": 300.0,
    "A10": 600.0,
    "V100": 900.0,
    "RTX 4090": 1008.0,
}

# the CPU smoke-test size: the same small shape for both architectures
TINY_SHAPE = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    intermediate_size=128,
    vocab_size=2000,
    tie_word_embeddings=True,
)

SHAPES = {
    ("qwen2", "3b"): dict(
        hidden_size=2048,
        num_hidden_layers=36,
        num_attention_heads=16,
        num_key_value_heads=2,
        intermediate_size=11008,
        vocab_size=151936,
        tie_word_embeddings=True,
    ),
    ("llama", "3b"): dict(
        hidden_size=3072,
        num_hidden_layers=28,
        num_attention_heads=24,
        num_key_value_heads=8,
        intermediate_size=8192,
        vocab_size=128256,
        tie_word_embeddings=True,
    ),
    ("qwen2", "tiny"): TINY_SHAPE,
    ("llama", "tiny"): TINY_SHAPE,
}


def word_tokenizer(vocab_size: int, model_max_length: int = 4096):
    """A word-level tokenizer over the words ``w0 .. w{n}`` plus pad/eos/unk (built by hand)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<eos>", "<unk>"]
    vocab = {t: i for i, t in enumerate(specials)}
    vocab.update({f"w{i}": i + len(specials) for i in range(vocab_size - len(specials))})
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token="<pad>",
        eos_token="<eos>",
        unk_token="<unk>",
        model_max_length=model_max_length,
    )


def bpe_tokenizer(words: list[str], vocab_size: int = 1000):
    """A byte-level BPE tokenizer trained on ``words`` (the kind Qwen2/Llama 3 tokenizers are)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(
        [" ".join(words[i : i + 20]) for i in range(0, len(words), 20)], trainer
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
        model_max_length=4096,
    )


def made_up_words(n: int, rng: np.random.Generator) -> list[str]:
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    return ["".join(rng.choice(letters, size=rng.integers(2, 9))) for _ in range(n)]


def save_tokenizer(tok, path: Path) -> None:
    """Save ``tok`` so that AutoTokenizer loads it as is, not as the architecture's class."""
    tok.save_pretrained(path)
    config_file = path / "tokenizer_config.json"
    config = json.loads(config_file.read_text())
    config["tokenizer_class"] = "TokenizersBackend"
    config_file.write_text(json.dumps(config))


def build_lm(path: Path, arch: str, size: str, device: torch.device, dtype: torch.dtype) -> int:
    """Save a random-weight causal LM of ``arch``/``size`` under ``path``; return its bytes."""
    from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config

    shape = SHAPES[(arch, size)]
    # embedding rows beyond the tokenizer's vocabulary, as in Qwen2.5 (151936 rows, 151665 ids)
    tok = bpe_tokenizer(made_up_words(5000, np.random.default_rng(1)))
    tok.save_pretrained(path)
    cls = Qwen2Config if arch == "qwen2" else LlamaConfig
    config = cls(
        **shape,
        max_position_embeddings=4096,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.eos_token_id,
    )
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=dtype)
    model.save_pretrained(path)
    return sum(p.numel() * p.element_size() for p in model.parameters())


def build_detoxify(path: Path, size: str) -> Path:
    """A random-weight Detoxify-format checkpoint (BERT-base shape with ``--size 3b``)."""
    from transformers import BertConfig, BertForSequenceClassification

    tok = word_tokenizer(30522 if size == "3b" else 2000, model_max_length=512)
    save_tokenizer(tok, path)
    big = size == "3b"
    config = BertConfig(
        vocab_size=len(tok),
        hidden_size=768 if big else 64,
        num_hidden_layers=12 if big else 2,
        num_attention_heads=12 if big else 4,
        intermediate_size=3072 if big else 128,
        num_labels=6,
        pad_token_id=tok.pad_token_id,
    )
    model = BertForSequenceClassification(config)
    model.save_pretrained(path)
    classes = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]
    ckpt = {
        "config": {
            "arch": {
                "args": {
                    "model_type": str(path),
                    "model_name": "BertForSequenceClassification",
                    "tokenizer_name": "PreTrainedTokenizerFast",
                    "num_classes": 6,
                }
            },
            "dataset": {"args": {"classes": classes}},
        },
        "state_dict": model.state_dict(),
    }
    torch.save(ckpt, path / "detoxify.ckpt")
    return path / "detoxify.ckpt"


def random_prompts(n: int, rng: np.random.Generator) -> list[str]:
    """Prompts of 8-24 made-up words (about 16-60 tokens)."""
    words = made_up_words(5000, np.random.default_rng(1))
    return [" ".join(rng.choice(words, size=rng.integers(8, 25))) for _ in range(n)]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bench_generate_shard(study, work: Path, bs: int, device: torch.device) -> dict:
    """Time ``generate_shard``: batches 2..n (the first warms up), via the after_batch hook."""
    stamps: list[float] = []

    def stamp(_batch: int) -> None:
        _sync(device)
        stamps.append(time.perf_counter())

    out = work / f"gen-bs{bs}.parquet"
    options = {
        "prompts_path": str(work / "prompts.parquet"),
        "batch_size": bs,
        "device": str(device),
        "progress": False,
        "after_batch": stamp,
    }
    generate_shard(study, "bench", 0, out, options=options)
    table = pq.read_table(out).to_pandas()
    # rows of the measured batches, in batch order (the backend's own batching)
    lengths = table.prompt_tokens.tolist()
    batches = length_sorted_batches(lengths, bs)
    seconds = stamps[-1] - stamps[0]
    measured = np.concatenate(batches[1:])
    tokens = int(table.completion_tokens.to_numpy()[measured].sum())
    return {"prompts_per_s": len(measured) / seconds, "tokens_per_s": tokens / seconds}


def bench_peer_generate(model, tok, texts, bs, max_new_tokens, device) -> dict:
    """The peer: a plain ``model.generate`` loop over length-sorted batches of ``texts``."""
    lengths = [len(x) for x in tok(texts)["input_ids"]]
    batches = length_sorted_batches(lengths, bs)
    stamps, tokens = [], 0
    for b, idx in enumerate(batches):
        enc = tok([texts[i] for i in idx], return_tensors="pt", padding=True).to(device)
        with torch.inference_mode():
            out = model.generate(
                **enc,
                do_sample=True,
                top_p=0.9,
                top_k=0,
                temperature=1.0,
                max_new_tokens=max_new_tokens,
                pad_token_id=tok.pad_token_id,
            )
        _sync(device)
        stamps.append(time.perf_counter())
        if b > 0:
            new = out[:, enc["input_ids"].shape[1] :]
            tokens += int((new != tok.pad_token_id).sum())
    seconds = stamps[-1] - stamps[0]
    n = sum(len(x) for x in batches[1:])
    return {"prompts_per_s": n / seconds, "tokens_per_s": tokens / seconds}


def decode_step_seconds(model, tok, texts, bs, steps, device) -> float:
    """Seconds per decode step at batch ``bs``: (t(steps) - t(1)) / (steps - 1), min of 3."""
    enc = tok(texts[:bs], return_tensors="pt", padding=True).to(device)

    def run(n: int) -> float:
        best = float("inf")
        for _ in range(3):
            _sync(device)
            t0 = time.perf_counter()
            with torch.inference_mode():
                model.generate(
                    **enc,
                    do_sample=False,
                    max_new_tokens=n,
                    min_new_tokens=n,
                    pad_token_id=tok.pad_token_id,
                )
            _sync(device)
            best = min(best, time.perf_counter() - t0)
        return best

    run(2)  # warm-up
    return (run(steps) - run(1)) / (steps - 1)


def peak_bandwidth(device: torch.device, given: float | None) -> tuple[float | None, str]:
    if given is not None:
        return given, "given"
    if device.type != "cuda":
        return None, "cpu (pass --peak-gbps)"
    name = torch.cuda.get_device_name(device)
    for key, gbps in PEAK_GBPS.items():
        if key in name:
            return gbps, name
    return None, f"{name} (unknown: pass --peak-gbps)"


def bench_scorers(work: Path, size: str, texts: list[str], lm_path: Path, device, bs) -> dict:
    from detoxify import Detoxify
    from profanity_check import predict_prob
    from transformers import AutoModelForCausalLM, AutoTokenizer

    ckpt = build_detoxify(work / "detoxify", size)
    gens = work / "scored.parquet"
    write_parquet(
        gens,
        pa.table(
            {
                "prompt_id": pa.array(np.arange(len(texts)), pa.int64()),
                "prompt": texts,
                "completion": [" " + " ".join(t.split()[::2]) for t in texts],
            }
        ),
    )
    completions = pq.read_table(gens).column("completion").to_pylist()
    study = SimpleNamespace(
        name="bench",
        canonical_hash="0" * 64,
        data={
            "seed": 0,
            "models": {"judge": {"id": str(lm_path), "dtype": "auto", "prompt_format": "plain"}},
            "scorers": [
                {
                    "name": "tox",
                    "kind": "detoxify",
                    "bounded": True,
                    "checkpoint": str(ckpt),
                    "config_path": str(work / "detoxify"),
                },
                {"name": "prof", "kind": "profanity", "bounded": True},
                {"name": "nll", "kind": "token_nll", "bounded": False, "judge": "judge"},
            ],
        },
    )
    options = {"batch_size": bs, "device": str(device), "progress": False}
    results = {}

    def timed(fn) -> float:
        _sync(device)
        t0 = time.perf_counter()
        fn()
        _sync(device)
        return time.perf_counter() - t0

    for name in ("tox", "prof", "nll"):
        ours = timed(
            lambda name=name: score_shard(
                study, name, "bench", gens, work / f"{name}.parquet", options=options
            )
        )
        if name == "tox":

            def peer():
                d = Detoxify(
                    checkpoint=str(ckpt),
                    device=str(device),
                    huggingface_config_path=str(work / "detoxify"),
                )
                for i in range(0, len(completions), bs):
                    d.predict(completions[i : i + bs])

        elif name == "prof":

            def peer():
                predict_prob(completions)

        else:

            def peer():
                tok = AutoTokenizer.from_pretrained(lm_path)
                tok.padding_side = "right"
                model = AutoModelForCausalLM.from_pretrained(lm_path).to(device).eval()
                full = [p + c for p, c in zip(texts, completions, strict=True)]
                with torch.inference_mode():
                    for i in range(0, len(full), bs):
                        model(**tok(full[i : i + bs], return_tensors="pt", padding=True).to(device))

        theirs = timed(peer)
        results[name] = {
            "texts_per_s": len(texts) / ours,
            "peer_texts_per_s": len(texts) / theirs,
            "ratio_to_peer": theirs / ours,
        }
    return results


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=["tiny", "3b"], default="tiny")
    parser.add_argument("--arch", choices=["qwen2", "llama"], default="qwen2")
    parser.add_argument("--batch-sizes", default="1,4,16")
    parser.add_argument("--prompts", type=int, default=None, help="default: 4 x largest batch")
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default=None, help="default: bfloat16 on GPU, float32 on CPU")
    parser.add_argument("--peak-gbps", type=float, default=None)
    parser.add_argument("--score-batch-size", type=int, default=32)
    parser.add_argument("--out", default=None, help="write the results as JSON here")
    args = parser.parse_args(argv)

    from tailgate.models import resolve_device

    device = resolve_device(args.device)
    dtype_name = args.dtype or ("bfloat16" if device.type == "cuda" else "float32")
    dtype = getattr(torch, dtype_name)
    sizes = [int(x) for x in args.batch_sizes.split(",")]
    n_prompts = args.prompts or 4 * max(sizes)
    results: dict = {
        "size": args.size,
        "arch": args.arch,
        "device": str(device),
        "dtype": dtype_name,
    }

    with tempfile.TemporaryDirectory(prefix="tailgate-bench-") as tmp:
        work = Path(tmp)
        lm_path = work / "lm"
        t0 = time.perf_counter()
        weight_bytes = build_lm(lm_path, args.arch, args.size, device, dtype)
        results["build_s"] = time.perf_counter() - t0
        texts = random_prompts(n_prompts, np.random.default_rng(0))
        write_parquet(
            work / "prompts.parquet",
            pa.table(
                {
                    "prompt_id": pa.array(np.arange(n_prompts), pa.int64()),
                    "position": pa.array(np.arange(n_prompts), pa.int64()),
                    "prompt": texts,
                }
            ),
        )
        study = SimpleNamespace(
            name="bench",
            canonical_hash="0" * 64,
            data={
                "seed": 0,
                "models": {
                    "bench": {"id": str(lm_path), "dtype": dtype_name, "prompt_format": "plain"}
                },
                "generation": {
                    "temperature": 1.0,
                    "top_p": 0.9,
                    "max_new_tokens": args.max_new_tokens,
                    "shards": 1,
                },
                "conditions": [{"name": "bench", "model": "bench", "prompts": n_prompts}],
            },
        )
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(lm_path)
        tok.padding_side = "left"
        model = AutoModelForCausalLM.from_pretrained(lm_path, dtype=dtype).to(device).eval()
        peak, peak_source = peak_bandwidth(device, args.peak_gbps)
        print(
            f"device {device} ({peak_source}), {args.arch} {args.size}, {dtype_name}, "
            f"{weight_bytes / 1e9:.3f} GB of weights, {n_prompts} prompts, "
            f"{args.max_new_tokens} new tokens"
        )
        print(
            f"{'batch':>5} {'prompts/s':>10} {'tokens/s':>10} {'peer tok/s':>10} "
            f"{'ratio':>6} {'step ms':>8} {'GB/s':>8} {'roofline':>8}"
        )
        rows = []
        for bs in sizes:
            ours = bench_generate_shard(study, work, bs, device)
            peer = bench_peer_generate(model, tok, texts, bs, args.max_new_tokens, device)
            step = decode_step_seconds(model, tok, texts, bs, min(args.max_new_tokens, 32), device)
            gbps = weight_bytes / step / 1e9
            row = {
                "batch_size": bs,
                **ours,
                "peer_prompts_per_s": peer["prompts_per_s"],
                "peer_tokens_per_s": peer["tokens_per_s"],
                "ratio_to_peer": ours["tokens_per_s"] / peer["tokens_per_s"],
                "decode_step_ms": step * 1e3,
                "weights_gbps": gbps,
                "roofline_fraction": None if peak is None else gbps / peak,
            }
            rows.append(row)
            roof = "n/a" if peak is None else f"{gbps / peak:.1%}"
            print(
                f"{bs:>5} {ours['prompts_per_s']:>10.2f} {ours['tokens_per_s']:>10.1f} "
                f"{peer['tokens_per_s']:>10.1f} {row['ratio_to_peer']:>6.2f} "
                f"{step * 1e3:>8.2f} {gbps:>8.1f} {roof:>8}"
            )
        results["generation"] = rows
        results["peak_gbps"] = peak
        del model
        scorers = bench_scorers(work, args.size, texts, lm_path, device, args.score_batch_size)
        results["scorers"] = scorers
        for name, r in scorers.items():
            print(
                f"scorer {name:>5}: {r['texts_per_s']:10.1f} texts/s, peer "
                f"{r['peer_texts_per_s']:10.1f} texts/s, ratio {r['ratio_to_peer']:.2f}"
            )
    if args.out:
        write_json(args.out, results)
    return results


if __name__ == "__main__":
    main()
