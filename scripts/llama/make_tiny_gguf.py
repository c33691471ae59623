#!/usr/bin/env python3
"""Write a tiny random-weight llama-architecture GGUF that real llama-server loads.

    python3 scripts/llama/make_tiny_gguf.py OUT.gguf [--layers 2] [--embd 128] ...

Nothing is downloaded: the vocabulary is made here (SentencePiece-style
"llama" tokenizer: <unk>, <s>, </s>, then the 256 byte tokens <0x00>..<0xFF>,
so any text tokenizes byte by byte), and the weights come from a seeded RNG,
so the same arguments give the same file.

The model never ends a reply on its own: one channel of the residual stream
is held at a large constant, and the output rows of <unk>/<s>/</s> are strongly
negative on it, so EOS is effectively never sampled and a completion runs
until max_tokens / n_predict. Only printable ASCII bytes are ever sampled, so
replies are valid UTF-8 gibberish.

Size and speed: the defaults (4 layers, width 512, FFN 1536, F32) make a
~51 MB file (written in well under a second) that decodes at roughly 270
tokens/s on one core of the 2-core dev machine with `--threads 1`, so a
streamed completion with max_tokens=1000 keeps its slot busy for ~3-4 s. The
length of a completion (max_tokens) is the client's knob for how long a slot
stays busy; `--embd 128 --ff 384 --layers 2` gives a 1.8 MB model at ~2000
tokens/s.

Needs the `gguf` package (pinned in requirements.txt next to this file) and
numpy (a dependency of gguf).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

try:
    import gguf
except ImportError:  # pragma: no cover - exercised by hand
    sys.exit("make_tiny_gguf: the 'gguf' package is missing: "
             "pip install -r scripts/llama/requirements.txt")

# ChatML, so the server needs no --chat-template (it is also llama.cpp's own
# fallback). The special markers are not in the vocabulary: they tokenize as
# bytes, which is fine for a random model.
CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

N_SPECIAL = 3  # <unk>, <s>, </s>
UNK_ID, BOS_ID, EOS_ID = 0, 1, 2


def build_vocab() -> tuple[list[bytes], list[float], list[int]]:
    tokens: list[bytes] = [b"<unk>", b"<s>", b"</s>"]
    types = [
        gguf.TokenType.UNKNOWN,
        gguf.TokenType.CONTROL,
        gguf.TokenType.CONTROL,
    ]
    for b in range(256):
        tokens.append(f"<0x{b:02X}>".encode())
        types.append(gguf.TokenType.BYTE)
    scores = [0.0] * len(tokens)
    return tokens, scores, [int(t) for t in types]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", help="path of the .gguf to write")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--embd", type=int, default=512, help="embedding width (multiple of --heads)")
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--kv-heads", type=int, default=4)
    ap.add_argument("--ff", type=int, default=1536, help="feed-forward width")
    ap.add_argument("--ctx", type=int, default=4096, help="trained context length (metadata)")
    ap.add_argument("--name", default="lull-tiny", help="general.name")
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--logit-scale", type=float, default=0.15,
                    help="spread of the output weights; smaller = more varied gibberish")
    ap.add_argument("--f16", action="store_true", help="store matrices as F16 (default F32)")
    args = ap.parse_args(argv)

    if args.embd % args.heads or args.heads % args.kv_heads:
        ap.error("--embd must be a multiple of --heads, and --heads of --kv-heads")
    head_dim = args.embd // args.heads
    if head_dim % 2:
        ap.error("head size (embd/heads) must be even for RoPE")

    rng = np.random.default_rng(args.seed)
    tokens, scores, types = build_vocab()
    n_vocab = len(tokens)
    n_embd, n_ff = args.embd, args.ff
    n_kv = head_dim * args.kv_heads
    mat_dtype = np.float16 if args.f16 else np.float32

    def rand(rows: int, cols: int, scale: float) -> np.ndarray:
        # numpy (rows, cols) is ggml ne = [cols, rows]
        return (rng.standard_normal((rows, cols)) * scale).astype(mat_dtype)

    w = gguf.GGUFWriter(args.out, "llama")
    w.add_name(args.name)
    w.add_context_length(args.ctx)
    w.add_embedding_length(n_embd)
    w.add_block_count(args.layers)
    w.add_feed_forward_length(n_ff)
    w.add_head_count(args.heads)
    w.add_head_count_kv(args.kv_heads)
    w.add_rope_dimension_count(head_dim)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(n_vocab)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_F16 if args.f16 else gguf.LlamaFileType.ALL_F32)

    w.add_tokenizer_model("llama")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(UNK_ID)
    w.add_bos_token_id(BOS_ID)
    w.add_eos_token_id(EOS_ID)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)
    w.add_chat_template(CHATML)

    # Channel 0 of the residual stream is a constant "bias" channel: every
    # token embedding has a large value there, and no layer writes to it.
    # After the final RMS norm it stays large and positive, and the output
    # rows of the special tokens are very negative on it, so their logits sit
    # tens of units below every byte token's.
    emb = rand(n_vocab, n_embd, 0.5)
    emb[:, 0] = 8.0
    w.add_tensor("token_embd.weight", emb)
    w.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    out = rand(n_vocab, n_embd, args.logit_scale)
    out[:, 0] = 0.0
    out[:N_SPECIAL, 0] = -50.0
    # Only printable ASCII (and space) is ever sampled, so replies are
    # valid UTF-8 and readable in logs; other bytes get the same penalty.
    for b in range(256):
        if not (0x20 <= b < 0x7F):
            out[N_SPECIAL + b, 0] = -50.0
    w.add_tensor("output.weight", out)

    s_in = 1.0 / np.sqrt(n_embd)
    for i in range(args.layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(p + "attn_q.weight", rand(n_embd, n_embd, s_in))
        w.add_tensor(p + "attn_k.weight", rand(n_kv, n_embd, s_in))
        w.add_tensor(p + "attn_v.weight", rand(n_kv, n_embd, s_in))
        wo = rand(n_embd, n_embd, s_in)
        wo[0, :] = 0.0  # never write the bias channel
        w.add_tensor(p + "attn_output.weight", wo)
        w.add_tensor(p + "ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        w.add_tensor(p + "ffn_gate.weight", rand(n_ff, n_embd, s_in))
        w.add_tensor(p + "ffn_up.weight", rand(n_ff, n_embd, s_in))
        down = rand(n_embd, n_ff, 1.0 / np.sqrt(n_ff))
        down[0, :] = 0.0
        w.add_tensor(p + "ffn_down.weight", down)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
