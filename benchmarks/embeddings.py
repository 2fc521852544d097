"""Raw embedding rate of the offline MiniLM model on fact cards: the earlier way of batching
(32 texts sorted by characters, each batch tokenised and padded on its own) next to the tuned
one (tokenised once, sorted by token count, batches padded to their own longest text) for batch
sizes and thread counts, interleaved in ONE run so a busy machine hits every variant alike.

    uv run python benchmarks/embeddings.py [--texts 512] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Sequence

import numpy as np
from retrieval import card_text

from erp_agent.retrieval.embeddings import MiniLMEmbedder, Vectors, normalise


class Before(MiniLMEmbedder):
    """The batching this product used before tuning, kept here to measure against."""

    def embed(self, texts: Sequence[str]) -> Vectors:
        session, tokenizer = self._load()
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            encodings = tokenizer.encode_batch([texts[i] for i in chunk])
            ids = np.array([e.ids for e in encodings], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
            out[chunk] = self._run(session, ids, mask)
        tokenizer.no_padding()
        return normalise(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(5)
    texts = [card_text(i, rng)[0] for i in range(args.texts)]
    variants: dict[str, MiniLMEmbedder] = {
        "before: batch 32, default threads": Before(batch_size=32),
        "tuned: batch 32": MiniLMEmbedder(batch_size=32),
        "tuned: batch 64": MiniLMEmbedder(batch_size=64),
        "tuned: batch 128": MiniLMEmbedder(batch_size=128),
        "tuned: batch 256": MiniLMEmbedder(batch_size=256),
        "tuned: batch 64, 1 thread": MiniLMEmbedder(batch_size=64, threads=1),
        "tuned: batch 64, 2 threads": MiniLMEmbedder(batch_size=64, threads=2),
        "tuned: batch 64, no bucketing": MiniLMEmbedder(batch_size=64, bucket=False),
    }
    reference = None
    for embedder in variants.values():
        got = embedder.embed(texts[:64])  # load and warm up
        reference = got if reference is None else reference
        assert float(np.min(np.sum(got * reference, axis=1))) > 0.9999, "variants must agree"
    best: dict[str, float] = dict.fromkeys(variants, 0.0)
    for _ in range(args.rounds):
        for name, embedder in variants.items():
            started = time.perf_counter()
            embedder.embed(texts)
            best[name] = max(best[name], len(texts) / (time.perf_counter() - started))
    base = best["before: batch 32, default threads"]
    print(f"\n## Raw embedding rate, MiniLM int8 ONNX, {len(texts)} fact cards, best of "
          f"{args.rounds} interleaved rounds")  # fmt: skip
    for name, rate in best.items():
        print(f"  {name:36s} {rate:8.1f} cards/s   x{rate / base:4.2f}")


if __name__ == "__main__":
    main()
