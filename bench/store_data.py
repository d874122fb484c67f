"""Synthetic chunks for bench/store.py: real-looking text and 384-dim vectors, deterministic.

Text: sentences of English words drawn with Zipf frequencies (a common word far more often
than a rare one, as in notes), each chunk leaning on its topic's own words; about 3% of chunks
are Chinese (CJK words, no spaces), so the keyword leg's CJK expansion is exercised.
Vectors: unit vectors around topic centroids (centroid + noise, normalised), so neighbours
exist the way they do among real embeddings; uniform random vectors have no neighbourhood
structure and make every ANN index look worse than it is on real data.
Queries: fresh points of the same distribution (not in the index), with text from the same
topic's words, so the keyword and vector legs both find something.

Everything is a function of (seed, index), so a chunk is the same in every run and the exact
top-10 for recall can be recomputed from the vectors alone.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

DIMS = 384
MODEL = "e5-small-multilingual"
SEED = 7
TOPICS = 2000
CHUNKS_PER_FILE = 10
BLOCK = 10_000  # chunks generated together (the unit of determinism)
INTRINSIC = 32  # directions a topic's chunks vary along
SPREAD = 0.15  # along them (norm ~0.85: cosine to the centroid ~0.75)
NOISE = 0.01  # in every direction (norm ~0.2)
CJK_SHARE = 0.03

WORDS = """
the of and to a in is it you that he was for on are with as his they be at one have this
from or had by not word but what some we can out other were all there when up use your how
said an each she which do their time if will way about many then them write would like so
these her long make thing see him two has look more day could go come did number sound no
most people my over know water than call first who may down side been now find any new work
part take get place made live where after back little only round man year came show every
good me give our under name very through just form sentence great think say help low line
differ turn cause much mean before move right boy old too same tell does set three want air
well also play small end put home read hand port large spell add even land here must big
high such follow act why ask men change went light kind off need house picture try us again
animal point mother world near build self earth father head stand own page should country
found answer school grow study still learn plant cover food sun four between state keep eye
never last let thought city tree cross farm hard start might story saw far sea draw left
late run while press close night real life few north open seem together next white children
begin got walk example ease paper group always music those both mark often letter until mile
river car feet care second book carry took science eat room friend began idea fish mountain
stop once base hear horse cut sure watch color face wood main enough plain girl usual young
ready above ever red list though feel talk bird soon body dog family direct pose leave song
measure door product black short numeral class wind question happen complete ship area half
rock order fire south problem piece told knew pass since top whole king space heard best
hour better true during hundred five remember step early hold west ground interest reach
fast verb sing listen six table travel less morning ten simple several vowel toward war lay
against pattern slow center love person money serve appear road map rain rule govern pull
cold notice voice unit power town fine certain fly fall lead cry dark machine note wait plan
figure star box noun field rest correct able pound done beauty drive stood contain front
teach week final gave green quick develop ocean warm free minute strong special mind behind
clear tail produce fact street inch multiply nothing course stay wheel full force blue object
decide surface deep moon island foot system busy test record boat common gold possible plane
stead dry wonder laugh thousand ago ran check game shape equate miss brought heat snow tire
bring yes distant fill east paint language among deploy server client release branch merge
commit review meeting deadline budget invoice customer ticket incident outage rollback cache
index query latency schema migration backup replica cluster config token prompt agent model
embedding vector search memory note daily summary decision owner sprint roadmap bug fix patch
""".split()  # noqa: SIM905 (a word list reads better as text)

CJK_WORDS = """
会议 决定 项目 客户 服务器 数据库 备份 部署 版本 测试 问题 修复 发布 计划 预算 团队 记忆 搜索
索引 模型 向量 查询 延迟 缓存 迁移 配置 代理 日志 周报 需求 设计 文档 合同 发票 截止 负责人
""".split()  # noqa: SIM905


@dataclass(frozen=True)
class SyntheticChunk:
    id: str
    path: str
    start_line: int
    end_line: int
    text: str


def _zipf_ranks(rng: np.random.Generator, n_vocab: int, size: int) -> np.ndarray:
    # Zipf's law truncated to the vocabulary: P(rank k) ~ 1/k (numpy's zipf() is unbounded)
    cdf = _ZIPF_CDF.get(n_vocab)
    if cdf is None:
        cdf = _ZIPF_CDF[n_vocab] = np.cumsum(1.0 / np.arange(1, n_vocab + 1))
    return np.minimum(np.searchsorted(cdf, rng.random(size) * cdf[-1]), n_vocab - 1)


_ZIPF_CDF: dict[int, np.ndarray] = {}


class Corpus:
    """The synthetic index of `n` chunks: vectors and text, generated in aligned blocks of
    `BLOCK` chunks (each block from its own seed, so any slice is the same in every run)."""

    def __init__(self, n: int, *, chars: int = 700, seed: int = SEED,
                 texts: list[str] | None = None) -> None:
        """`texts`: chunk texts to use, in turn, instead of generated ones (vectors and
        queries stay synthetic)."""
        self.n, self.chars, self.seed, self.texts = n, chars, seed, texts
        rng = np.random.default_rng(seed)
        c = rng.standard_normal((TOPICS, DIMS)).astype(np.float32)
        self.centroids = c / np.linalg.norm(c, axis=1, keepdims=True)
        # Real embeddings vary along few directions (low intrinsic dimension); the spread
        # around a centroid lives in a 32-dim subspace, plus a little full-dimensional noise.
        basis, _ = np.linalg.qr(rng.standard_normal((DIMS, INTRINSIC)))
        self.basis = basis.astype(np.float32).T  # (INTRINSIC, DIMS), orthonormal rows
        # each topic's own words: 25 word positions
        self.topic_words = rng.integers(0, len(WORDS), size=(TOPICS, 25))

    def topic_of(self, i: np.ndarray) -> np.ndarray:
        # a fixed pseudo-random topic per chunk (Knuth multiplicative hash)
        return ((i.astype(np.uint64) * np.uint64(2654435761)) % np.uint64(TOPICS)).astype(int)

    def _block_vectors(self, b: int, salt: int) -> np.ndarray:
        start, stop = b * BLOCK, min(self.n, (b + 1) * BLOCK) if salt == 0 else (b + 1) * BLOCK
        rng = np.random.default_rng((self.seed, salt, b))
        m = stop - start
        spread = rng.standard_normal((m, INTRINSIC)).astype(np.float32) @ self.basis
        v = (self.centroids[self.topic_of(np.arange(start, stop))] + SPREAD * spread
             + NOISE * rng.standard_normal((m, DIMS)).astype(np.float32))
        return (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)

    def vectors(self, start: int, stop: int, *, salt: int = 0) -> np.ndarray:
        """Unit float32 vectors of chunks [start, stop) (salt 1: the query distribution)."""
        blocks = [self._block_vectors(b, salt)
                  for b in range(start // BLOCK, (stop - 1) // BLOCK + 1)]
        first = (start // BLOCK) * BLOCK
        return np.vstack(blocks)[start - first:stop - first]

    def all_vectors(self) -> np.ndarray:
        return self.vectors(0, self.n)

    def text(self, i: int, rng: np.random.Generator) -> str:
        if self.texts:
            return self.texts[i % len(self.texts)]
        topic = int(self.topic_of(np.array([i]))[0])
        if rng.random() < CJK_SHARE:
            k = max(8, self.chars // 4)
            idx = _zipf_ranks(rng, len(CJK_WORDS), k)
            words = [CJK_WORDS[j] for j in idx]
            return "。".join("".join(words[s:s + 6]) for s in range(0, k, 6)) + "。"
        n_words = max(8, self.chars * 2 // 11)  # ~5.5 characters a word
        common = _zipf_ranks(rng, len(WORDS), n_words)
        own = self.topic_words[topic][rng.integers(0, 25, size=n_words)]
        picks = np.where(rng.random(n_words) < 0.3, own, common)
        words = [WORDS[j] for j in picks]
        sentences, s = [], 0
        while s < n_words:
            k = int(rng.integers(6, 16))
            part = words[s:s + k]
            sentences.append(part[0].capitalize() + " " + " ".join(part[1:]) + ".")
            s += k
        return " ".join(sentences)

    def chunks(self, b: int) -> Iterator[SyntheticChunk]:
        """The chunks of block `b` (whole files: BLOCK is a multiple of CHUNKS_PER_FILE)."""
        rng = np.random.default_rng((self.seed, 2, b))
        for i in range(b * BLOCK, min(self.n, (b + 1) * BLOCK)):
            f, j = divmod(i, CHUNKS_PER_FILE)
            day = f % 3650
            path = (f"memory/{2016 + day // 365}-{1 + day % 365 // 31:02d}-"
                    f"{1 + day % 31:02d}-{f // 3650:04d}.md")
            yield SyntheticChunk(id=f"c{i:08d}", path=path, start_line=1 + 20 * j,
                                 end_line=20 + 20 * j, text=self.text(i, rng))

    def queries(self, count: int) -> tuple[list[str], np.ndarray]:
        """`count` query texts and vectors (unit float32), drawn like the chunks."""
        rng = np.random.default_rng((self.seed, 3))
        picks = rng.integers(0, self.n, size=count)
        vecs = np.empty((count, DIMS), dtype=np.float32)
        texts = []
        fillers = ["what", "did", "we", "decide", "about", "the", "when", "how"]
        for q, i in enumerate(picks):
            vecs[q] = self._block_vectors(int(i) // BLOCK, 1)[int(i) % BLOCK]
            topic = int(self.topic_of(np.array([i]))[0])
            own = [WORDS[j] for j in self.topic_words[topic][rng.integers(0, 25, size=3)]]
            texts.append(" ".join([*rng.choice(fillers, size=3), *own]) + "?")
        return texts, vecs


def exact_top(matrix: np.ndarray, queries: np.ndarray, k: int = 10) -> list[set[int]]:
    """Row numbers of each query's exact top-k by cosine (unit vectors: dot product)."""
    out = []
    for q in queries:
        sims = matrix @ q
        top = np.argpartition(-sims, k)[:k]
        out.append({int(i) for i in top})
    return out
