"""The numpy all-MiniLM-L6-v2 encoder against the published sentence-transformers vectors."""
import zipfile

import numpy as np
import pytest

from edge.models.embed import DIM, EmbedError, Encoder
from edge.models.manifest import resolve

# Reference: sentence-transformers' all-MiniLM-L6-v2 (float32, mean pooling, Normalize), the first six
# dimensions, as published in the test fixture of an independent ONNX port (an R 'sbert' package's
# integration test, which checks them against SentenceTransformer to 1e-6); the first row is also the
# model card's example sentence.
SENTENCES = ["This is an example sentence", "Each sentence is converted.", "", "Café déjà vu — 東京"]
IDS = [
    [101, 2023, 2003, 2019, 2742, 6251, 102],
    [101, 2169, 6251, 2003, 4991, 1012, 102],
    [101, 102],
    [101, 7668, 2139, 3900, 24728, 1517, 1879, 1755, 102],
]
PREFIX = np.array([
    [0.06765693, 0.06349593, 0.04871314, 0.07930495, 0.03744806, 0.00265273],
    [0.07853645, 0.08856265, -0.00209270, -0.00717247, -0.01252624, 0.01881747],
    [-0.11883835, 0.04829856, -0.00254805, -0.01101118, 0.05195070, 0.01029179],
    [0.05083271, 0.00967685, 0.09635572, -0.00997369, -0.01987603, 0.01692343],
])


@pytest.fixture(scope="module")
def enc():
    return Encoder.load()


def test_tokens_and_values_match_sentence_transformers(enc):
    assert [e.ids for e in enc.tokenizer.encode_batch(SENTENCES)] == IDS
    v = enc.encode(SENTENCES)
    assert v.shape == (4, DIM) and v.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    assert np.abs(v[:, :6] - PREFIX).max() < 1e-5


def test_batching_does_not_change_a_vector(enc):
    texts = SENTENCES + ["how many m8 bolts are in bin twelve", "we used three drill bits from drawer four"] * 3
    together = enc.encode(texts, batch_size=3)
    alone = np.stack([enc.encode([t])[0] for t in texts])
    assert np.abs(together - alone).max() < 1e-5
    assert enc.encode([]).shape == (0, DIM)


def test_paraphrases_are_closer_than_unrelated_sentences(enc):
    pairs = [
        ("how many m8 bolts do we have", "what is the stock of m8 bolts"),
        ("we used three drill bits", "I took 3 drill bits"),
        ("delete the record I just made", "remove the last entry"),
        ("never mind", "forget it, cancel"),
        ("what is in drawer four", "which items are stored in drawer 4"),
    ]
    flat = [s for p in pairs for s in p]
    v = enc.encode(flat)
    sim = v @ v.T
    for i in range(len(pairs)):
        a, b = 2 * i, 2 * i + 1
        mate = sim[a, b]
        others = [sim[a, j] for j in range(len(flat)) if j not in (a, b)]
        assert mate > max(others), (pairs[i], mate, max(others))


def test_a_long_text_is_cut_not_refused(enc):
    v = enc.encode(["bolt " * 600])
    assert v.shape == (1, DIM) and np.isfinite(v).all()


def test_missing_or_broken_files_name_the_path_and_fix(tmp_path):
    with pytest.raises(EmbedError) as e:
        Encoder.load(tmp_path / "nothing.zip")
    assert "nothing.zip" in str(e.value) and "pip install" in str(e.value)
    broken = tmp_path / "broken.zip"
    with zipfile.ZipFile(resolve("all-minilm-l6-v2")) as src, zipfile.ZipFile(broken, "w") as dst:
        dst.writestr("config.json", src.read("config.json"))
        dst.writestr("tokenizer.json", src.read("tokenizer.json"))
    with pytest.raises(EmbedError, match="model.safetensors"):
        Encoder.load(broken)
