"""Tiny models, tokenizers and prompt datasets built locally (no downloads).

* :func:`build_tiny_lm`: a random-init GPT-2-style causal LM with a byte-level BPE tokenizer
  trained on a few sentences, saved with ``save_pretrained``. Its ``generation_config`` carries
  hostile defaults (top_k=3, min_p=0.3, repetition_penalty=1.5) that a registered sampling spec
  must override; ``chat=True`` adds a chat template.
* :func:`build_tiny_bert` / :func:`build_detoxify_checkpoint`: a random-init BERT classifier with
  six labels and a WordPiece tokenizer, and a Detoxify-format checkpoint dict around it
  (``{"config": {"arch": {"args": ...}, "dataset": {"args": {"classes": ...}}},
  "state_dict": ...}``, as ``detoxify.detoxify.load_checkpoint`` reads it).
* :func:`build_tiny_encoder`: the random-init BERT encoder the perturbation example registers
  for its energy test (``preregistrations/models/tiny-encoder``), with a WordPiece tokenizer
  over a fixed vocabulary (no training): ``python tests/support/tiny_models.py encoder
  preregistrations/models/tiny-encoder`` re-makes it.
* :func:`rtp_rows` / :func:`write_rtp_jsonl`: RealToxicityPrompts-schema rows.

Shared by the pytest fixtures (tests/conftest.py), the workflow-level tests and the SLURM
check (tests/slurm/run_slurm_check.sh).
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

SENTENCES = [
    "the quick brown fox jumps over the lazy dog",
    "hello world this is a small test of the tokenizer",
    "you are a terrible person and I hate you",
    "what a nice day it is today in the park",
    "she said that the movie was boring and far too long",
    "they walked home together after the game last night",
    "shut up you stupid idiot",
    "the weather forecast says it will rain tomorrow",
]

CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|> {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|> {% endif %}"
)

DETOXIFY_CLASSES = ["toxic", "severe_toxic", "obscene", "threat", "insult", "identity_hate"]


def _bpe_tokenizer(extra_special: list[str] | None = None):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=320,
        special_tokens=["<|endoftext|>", "<unk>", *(extra_special or [])],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(SENTENCES, trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|endoftext|>",
        eos_token="<|endoftext|>",
        unk_token="<unk>",
        model_max_length=256,
    )


def build_tiny_lm(
    path: Path, *, chat: bool = False, seed: int = 0, early_stop: bool = True
) -> Path:
    """Save a random-init GPT-2-style LM and its tokenizer under ``path``.

    ``early_stop`` registers the model's most frequent next token as a second end-of-sequence
    id, so that sampled completions sometimes stop early (and some are empty); without it the
    end-of-sequence token is made improbable, so completions are (almost always) non-empty.
    """
    from transformers import GPT2Config, GPT2LMHeadModel

    tok = _bpe_tokenizer(["<|user|>", "<|assistant|>"] if chat else None)
    if chat:
        tok.chat_template = CHAT_TEMPLATE
    tok.save_pretrained(path)
    torch.manual_seed(seed)
    config = GPT2Config(
        vocab_size=len(tok),
        n_positions=256,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        initializer_range=0.2,  # peaky logits: varied completions that sometimes stop early
    )
    model = GPT2LMHeadModel(config)
    model.generation_config.do_sample = True
    model.generation_config.top_k = 3
    model.generation_config.min_p = 0.3
    model.generation_config.repetition_penalty = 1.5
    # A second end-of-sequence id (as Llama 3 and Qwen chat models have): the token this
    # random model predicts most often, so that sampled completions sometimes stop early.
    with torch.no_grad():
        ids = tok(SENTENCES)["input_ids"]
        guesses = [int(model(torch.tensor([x])).logits[0, -1].argmax()) for x in ids]
    frequent = max(set(guesses), key=lambda t: (guesses.count(t), -t))
    if early_stop:
        model.generation_config.eos_token_id = [tok.eos_token_id, frequent]
    else:  # a zero output embedding: end-of-sequence has logit 0, about 1/600 of the mass
        with torch.no_grad():
            model.get_output_embeddings().weight[tok.eos_token_id] = 0.0
    model.save_pretrained(path)
    return path


def _wordpiece(vocab: dict[str, int] | None = None):
    """A lower-casing WordPiece tokenizer with BERT's pre-tokenizer: over ``vocab``, or trained on
    :data:`SENTENCES` (vocabulary 200) when it is None."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    wp = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    wp.normalizer = normalizers.BertNormalizer(lowercase=True)
    wp.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    if vocab is None:
        wp.train_from_iterator(
            SENTENCES,
            trainers.WordPieceTrainer(
                vocab_size=200,
                special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"],
                show_progress=False,
            ),
        )
    return wp


def _bert_tokenizer(wp, max_length: int):
    """``wp`` with BERT's [CLS] … [SEP] template, as a transformers tokenizer."""
    from tokenizers import processors
    from transformers import BertTokenizerFast

    cls, sep = wp.token_to_id("[CLS]"), wp.token_to_id("[SEP]")
    wp.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", cls), ("[SEP]", sep)],
    )
    return BertTokenizerFast(
        tokenizer_object=wp,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=max_length,
    )


def build_tiny_bert(path: Path, *, seed: int = 0):
    """Save a random-init six-label BERT classifier with a WordPiece tokenizer under ``path``."""
    from transformers import BertConfig, BertForSequenceClassification

    tok = _bert_tokenizer(_wordpiece(), 64)
    tok.save_pretrained(path)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(tok),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=len(DETOXIFY_CLASSES),
        initializer_range=0.5,  # spread the sigmoid outputs away from 0.5
    )
    model = BertForSequenceClassification(config)
    model.save_pretrained(path)
    return model, tok


#: the tiny encoder's vocabulary: BERT's special tokens, then the words of the simulate backend's
#: binary responses ("Yes." / "No.") and a few more, so other short answers do not all map to
#: [UNK]
ENCODER_VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", "?", "!", "yes", "no", "maybe",
    "i", "do", "not", "know", "the", "answer", "is", "a", "it",
]  # fmt: skip


def build_tiny_encoder(path: Path, *, seed: int = 0) -> Path:
    """Save a random-init BERT encoder (hidden size 16, one layer, no head) and its tokenizer
    under ``path``; the same versions of torch, transformers and tokenizers write the same bytes.

    It is no semantic model: its only use is a fixed, offline map of response texts to vectors
    in which distinct texts lie apart (the energy test of embedded responses, methods note A8),
    so that a registration can name it and pin its files.
    """
    from transformers import BertConfig, BertModel

    vocab = {t: i for i, t in enumerate(ENCODER_VOCAB)}
    tok = _bert_tokenizer(_wordpiece(vocab), 32)
    path.mkdir(parents=True, exist_ok=True)
    tok.save_pretrained(path)
    torch.manual_seed(seed)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=32,
        type_vocab_size=1,
        pad_token_id=vocab["[PAD]"],
    )
    BertModel(config).eval().save_pretrained(path)
    return path


def build_detoxify_checkpoint(tiny_bert: Path, path: Path) -> Path:
    """Write a Detoxify-format checkpoint around the BERT classifier saved at ``tiny_bert``."""
    from transformers import BertForSequenceClassification

    model = BertForSequenceClassification.from_pretrained(tiny_bert)
    ckpt = {
        "config": {
            "arch": {
                "args": {
                    "model_type": str(tiny_bert),
                    "model_name": "BertForSequenceClassification",
                    "tokenizer_name": "BertTokenizer",
                    "num_classes": len(DETOXIFY_CLASSES),
                }
            },
            "dataset": {"args": {"classes": DETOXIFY_CLASSES}},
        },
        "state_dict": model.state_dict(),
    }
    torch.save(ckpt, path)
    return path


def rtp_rows(n: int) -> list[dict]:
    """``n`` RealToxicityPrompts-schema rows with varied toxicity and ``challenging`` flags."""
    rows = []
    for i in range(n):
        words = SENTENCES[i % len(SENTENCES)].split()
        text = " ".join(words[: 3 + i % 4])
        rows.append(
            {
                "filename": f"{i:04d}.txt",
                "begin": i,
                "end": i + 10,
                "challenging": i % 3 == 0,
                "prompt": {
                    "text": text,
                    "toxicity": None if i % 7 == 6 else round((i * 37 % 100) / 100, 2),
                    "profanity": 0.1,
                },
                "continuation": {"text": "tail", "toxicity": 0.2},
            }
        )
    return rows


def write_rtp_jsonl(path: Path, n: int) -> Path:
    """A RealToxicityPrompts-schema JSONL file of ``n`` rows."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rtp_rows(n)))
    return path


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3 or sys.argv[1] != "encoder":
        sys.exit("usage: python tests/support/tiny_models.py encoder FOLDER")
    print(build_tiny_encoder(Path(sys.argv[2])))
