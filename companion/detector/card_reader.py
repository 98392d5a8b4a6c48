"""The card-reader design: find each whole face-up card, straighten it, read its corner.

In a pile the card that matters is on top and nearly whole. A small YOLO-OBB
model (one class, "card") finds its outline as an oriented box; the box's four
corners straighten the card, so its corner index always comes out upright, at
a known place and size, whatever the card's angle or distance. A small CNN
then reads that corner crop (52 cards + "no index here"). The rectangle cannot
tell a card from the same card turned half round, but a printed card carries
its index at both ends, so both ends are read; the two sideways readings are
read too and must say "no index" (that is how a squarish box is resolved).

The output is the same `Detections` the index design gives: one box per
corner index read (in image pixels), so `detect --json`, the tracker and the
annotators need not know which design ran.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from ..engine.cards import CLASS_NAMES, COURT_CLASSES, RANKS, SUITS
from .detections import (Detections, ModelError, default_threads, letterbox, onnx_session,
                         shrink, to_blob, warp_quad)
from .middle_reader import (COURT, GROUPS, MiddleReader, agrees, confirms, middle_crop, names,
                            prefers, prefers_court, rescues, rescues_court)

NONE_CLASS = len(CLASS_NAMES)        # 52: "no readable index in this corner"
# The reader's heads, in the order of its one output: "is there an index here" (one
# logit), the rank, the suit, the ink colour (black, red).
HEADS = (1, len(RANKS), len(SUITS), 2)
RED_SUITS = np.float32([s in "hd" for s in SUITS])
# Share of the card's width / height read at a corner. Real decks print indices larger and
# further in than the renderer's first styles (a large ace read as a 4 when its index sat
# beyond a 0.34 x 0.36 window, a suit cut by its lower edge), so the window is generous.
CORNER_W, CORNER_H = 0.38, 0.40
CROP_W, CROP_H = 44, 68              # reader input (pixels)
# How far apart the centres of a card's two read corners lie, in card heights (a 63 x 88
# mm card): what the live loop sizes the pile by.
CORNER_SPAN = float(np.hypot((1 - CORNER_W) * 63 / 88, 1 - CORNER_H))
MIN_EDGE = 8.0                       # mean step (grey levels per Sobel unit) that counts as an edge
DARK_CARD = 30.0                     # a card this much darker (grey levels) than round it is dark
SQUARISH = 1.2                       # long / short side below which a box is also read sideways
# The finder's own threshold is low: the reader decides (a box that shows no index reads
# "no index"). Some clear cards lying near square to the frame score 0.2-0.3: on 10
# rendered games, 0.15 instead of 0.3 found 10 more of 193 flips and no false one.
FINDER_CONF = 0.15
RETRY_TURNS = (-14.0, -7.0, 7.0, 14.0)  # degrees a box that read nothing is turned and read again
# A fallback outline (live: one that named a card on the last look) names a card only at
# this confidence: a hand held over the pile made one read a 6d as 3d at 0.42 (valid-face
# game 201), and the flip tracker asks 0.55 on two looks itself.
FALLBACK_CONF = 0.55
RETRY_MIN = 1.0                      # ...kept if its two ends' probabilities sum to this
GROW_TOP = 2                         # how many of the finder's best boxes are grown (photos)
EVEN_TOP = 2                         # ...and how many it finds with the light evened out
EVEN_SIDE = 640                      # the picture's long side for that look (pixels)
# Two outlines whose centres lie this share of a diagonal apart are two cards, one over
# the other, not two looks at one card (`_beneath`). A look grown, snapped or turned
# keeps its card's centre (within 0.01 on a realdecks/valid ace) but not its size or
# angle, so neither overlap (IoU 0.71-0.8 there) nor angle tells them apart.
DISTINCT_SHIFT = 0.05


def orientations(corners: np.ndarray) -> list[np.ndarray]:
    """The four ways to read a rectangle as a card (top-left, top-right, bottom-right,
    bottom-left), clockwise on screen: two upright-or-half-turned portrait readings
    first (the short edge on top), then the two sideways ones."""
    pts = np.asarray(corners, np.float32).reshape(4, 2)
    # Clockwise on screen (y down) means a positive cross product of the first two edges.
    e1, e2 = pts[1] - pts[0], pts[2] - pts[1]
    if e1[0] * e2[1] - e1[1] * e2[0] < 0:
        pts = pts[::-1].copy()
    if np.linalg.norm(pts[1] - pts[0]) > np.linalg.norm(pts[2] - pts[1]):
        pts = np.roll(pts, -1, axis=0)            # start on a short edge
    return [np.roll(pts, -k, axis=0) for k in (0, 2, 1, 3)]


def corner_quad(card: np.ndarray) -> np.ndarray:
    """Image points of the corner region read from a card given as TL, TR, BR, BL."""
    tl, tr, br, bl = card.astype(np.float64)
    src = np.float32([[0, 0], [1, 0], [1, 1], [0, 1]])
    H = cv2.getPerspectiveTransform(src, np.float32([tl, tr, br, bl]))
    pts = np.float32([[[0, 0], [CORNER_W, 0], [CORNER_W, CORNER_H], [0, CORNER_H]]])
    return cv2.perspectiveTransform(pts, H)[0]


def corner_crop(image: np.ndarray, card: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The upright CROP_H x CROP_W crop of a card's top-left corner, and that region's
    outline in the image."""
    quad = corner_quad(card)
    return warp_quad(image, quad, CROP_W, CROP_H), quad


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def card_probabilities(heads: np.ndarray) -> np.ndarray:
    """(N, 53) probabilities from the reader's heads (N, 20): a card's probability is
    P(index) x P(rank) x P(suit), lowered where the ink-colour head disagrees with the
    suit, and "no index" is 1 - P(index).

    Whether an index is there is decided apart from which card it is, so an index of an
    unfamiliar deck reads as an unsure card ("card unclear"), not as "no index". The ink
    colour is an independent cue: a suit the colour head disagrees with loses its weight,
    so a red 2 read with a spade's shape is unclear, not the 2 of spades."""
    a, b = 1 + HEADS[1], 1 + HEADS[1] + HEADS[2]
    index = 1.0 / (1.0 + np.exp(-heads[:, 0]))
    rank, suit, colour = _softmax(heads[:, 1:a]), _softmax(heads[:, a:b]), _softmax(heads[:, b:])
    # How far the colour head agrees with the suit head: ~1 when both are sure and agree,
    # 0.5 when the colour is unsure, ~0 when they are sure of opposite colours. Only a
    # disagreement (under 0.5) lowers the card's probability.
    agree = (np.where(RED_SUITS > 0, colour[:, 1:2], colour[:, 0:1]) * suit).sum(1, keepdims=True)
    cards = (suit[:, :, None] * rank[:, None, :]).reshape(len(heads), -1)   # suit-major
    out = np.empty((len(heads), NONE_CLASS + 1), np.float32)
    out[:, :NONE_CLASS] = cards * (index[:, None] * np.minimum(1.0, 2 * agree))
    out[:, NONE_CLASS] = 1.0 - index
    return out


class CornerReader:
    """The corner reader through ONNX Runtime: upright corner crops -> (N, 53)
    probabilities (52 cards, then "no index").

    Its first output is the heads' logits; a second, "features" (the pooled last
    convolution, before the heads), is what an enrolled deck is matched on. With a deck
    (`deck`, companion.deck), the card probabilities come from that deck's enrolled
    cards instead of the heads."""

    def __init__(self, path: str | Path, threads: int = 2) -> None:
        self.path = Path(path)
        self.session = onnx_session(self.path, threads)
        self.input = self.session.get_inputs()[0].name
        outputs = self.session.get_outputs()
        shape = outputs[0].shape
        if len(shape) != 2 or (isinstance(shape[1], int) and shape[1] != sum(HEADS)):
            raise ModelError(f"{path}: output {shape} is not a corner reader's "
                             f"{sum(HEADS)} head logits")
        inp = self.session.get_inputs()[0].shape
        if inp[2:] != [CROP_H, CROP_W]:
            raise ModelError(f"{path}: reads {inp[2:]} crops, not {CROP_H}x{CROP_W}")
        self.has_features = len(outputs) > 1 and outputs[1].name == "features"
        self.deck = None

    def heads_layer(self) -> tuple[np.ndarray, np.ndarray]:
        """The heads' weights (20, D) and bias (20,): heads = features @ W.T + b (the last
        Gemm of the file, which produces the "heads" output)."""
        import onnx
        from onnx import numpy_helper
        graph = onnx.load(str(self.path)).graph
        gemm = next((n for n in graph.node if n.op_type == "Gemm" and "heads" in n.output), None)
        if gemm is None or not self.has_features:
            raise ModelError(f"{self.path}: no linear heads layer on 'features' (re-export "
                             "the reader with companion.training.corner_reader --export-only)")
        init = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
        trans_b = next((a.i for a in gemm.attribute if a.name == "transB"), 0)
        W = init[gemm.input[1]]
        return (W if trans_b else W.T).astype(np.float32), init[gemm.input[2]].astype(np.float32)

    def read(self, crops: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray | None]:
        """The heads' logits (N, 20) and the features (N, D), or None from a reader
        exported without them."""
        out = self.session.run(None, {self.input: to_blob(crops)})
        return out[0], (out[1] if self.has_features else None)

    def __call__(self, crops: list[np.ndarray]) -> np.ndarray:
        if not crops:
            return np.zeros((0, NONE_CLASS + 1), np.float32)
        heads, features = self.read(crops)
        if self.deck is not None:
            return self.deck.probabilities(features)
        return card_probabilities(heads)


def _rotated_iou(a: np.ndarray, b: np.ndarray) -> float:
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    union = cv2.contourArea(a) + cv2.contourArea(b) - inter
    return float(inter / union) if union > 0 else 0.0


class CardFinder:
    """The one-class YOLO-OBB model through ONNX Runtime: image -> card outlines."""

    def __init__(self, path: str | Path, imgsz: int | None = None, conf: float = FINDER_CONF,
                 iou: float = 0.5, threads: int | None = None, session=None) -> None:
        self.path = path = Path(path)
        self.session = session or onnx_session(path, threads or default_threads())
        inp = self.session.get_inputs()[0]
        self.input_name = inp.name
        fixed = inp.shape[2] if isinstance(inp.shape[2], int) else None
        trained = self.session.get_modelmeta().custom_metadata_map.get("imgsz", "")
        trained = int(trained.strip("[]").split(",")[0]) if trained.strip("[]") else None
        self.imgsz = imgsz or fixed or trained or 256
        out = self.session.get_outputs()[0].shape
        if len(out) != 3 or (isinstance(out[1], int) and out[1] != 6):
            raise ModelError(f"{path}: output {out} is not a one-class YOLO-OBB head")
        self.conf, self.iou = conf, iou

    def __call__(self, image: np.ndarray, conf: float | None = None,
                 max_cards: int = 6) -> tuple[np.ndarray, np.ndarray]:
        """(N, 4, 2) corner points in image pixels and (N,) confidences, best first."""
        conf = self.conf if conf is None else conf
        img, r, left, top = letterbox(image, self.imgsz)
        blob = cv2.dnn.blobFromImage(img, 1 / 255.0, swapRB=True)
        pred = self.session.run(None, {self.input_name: blob})[0][0]   # (6, anchors)
        score = pred[4]
        m = np.nonzero(score >= conf)[0]
        if not len(m):
            return np.zeros((0, 4, 2), np.float32), np.zeros(0, np.float32)
        m = m[np.argsort(-score[m])][:200]
        quads, scores = [], []
        for i in m:
            cx, cy, w, h, _, ang = pred[:, i]
            q = cv2.boxPoints(((float(cx), float(cy)), (float(w), float(h)), float(np.degrees(ang))))
            q = (q - np.float32([left, top])) / r
            if all(_rotated_iou(q, k) < self.iou for k in quads):
                quads.append(q)
                scores.append(float(score[i]))
                if len(quads) >= max_cards:
                    break
        return np.stack(quads).astype(np.float32), np.float32(scores)


class CardReaderDetector:
    """Card finder + corner reader, giving one detection per corner index read."""

    takes_outlines = True       # __call__ also reads outlines found elsewhere (live: landing)

    def __init__(self, finder: CardFinder, reader: CornerReader, conf: float = 0.25,
                 looks: tuple[str, ...] = ("found",),
                 turns: tuple[float, ...] = (),
                 retry: tuple[float, ...] = RETRY_TURNS, whole_frame: bool = False,
                 on_table: bool = False, pool_looks: bool = True,
                 middle: MiddleReader | None = None, veto: float = 0.0,
                 suit_veto: float = 0.0, ace_veto: float = 1.0, veto_sure: float = 2.0,
                 confirm: float = 1.0,
                 confirm_conf: float = 0.25, alone: float = 1.0,
                 grow: tuple[float, ...] = (), even_light: bool = False,
                 wider: float = 0.0, disagree: float = 0.0,
                 fuse: float = 0.0, fuse_rank: float = 0.0, court: float = 0.0,
                 rescue: tuple[float, ...] | None = None,
                 court_rescue: tuple[float, float] | None = None, by_picture: bool = False,
                 on_top: tuple[float, float] | None = None,
                 doubt: tuple[float, float] | None = None, faint: float = 0.0) -> None:
        """looks: which outlines of each card are read: the finder's own box ("found")
        and/or that box snapped onto the card's edges ("snapped"); pool_looks: their
        readings are averaged (video), else each look is one more outline of the card and
        the one that reads best is kept (photos: snapping seeks a bright card on a darker
        table, so it can pull a dark card's sides onto its inner frame). turns: extra
        angles (degrees) the finder also looks at the picture from. retry: angles a box
        that reads nothing is turned by about its centre and read again. whole_frame: the
        picture's own bounds are read as one more outline (a photo taken so close that the
        card fills it has no edges for the finder to find). on_table: what stands out from
        a plain table is read too (`table_outlines`: a design the finder does not know).
        grow: scales the finder's best boxes of each look are grown by and then snapped
        onto the card's edges, each read as one more outline (a box on a card's inner
        frame, a court's border or a frame of pips, reads no index: its corners lie inside
        the card). even_light: where no outline names a card, the finder looks again at
        the picture with its local contrast evened out (`even_light`), and its EVEN_TOP
        best boxes there are read too (a dark card on a dark table it does not find in
        the picture as it is). wider: where no outline names a card, the finder looks
        again at the picture with a border of this share of its height round it (the
        table's edge drawn out), and its boxes there are read too: at another scale the
        finder boxes a card it boxed badly (no-pad game 2256: a 5c at rest on a pile,
        boxed across its middle in six frames running, read at 0.9 with a border).
        disagree: a card is "unclear" where another outline of it names another card
        with at least this share of the best outline's probability (0: never).
        middle: the middle reader, an independent cue to the rank and suit: a card it
        contradicts (`veto`, `suit_veto`, `ace_veto`: middle_reader.agrees) is
        "unclear", unless an end read it at `veto_sure` or more; a card whose ends read
        it only at `confirm_conf` is named when the middle's pips say the same
        rank and suit with at least `confirm` (middle_reader.confirms; 1: never); a card
        whose ends name nothing even so is named by its middle alone where the middle
        counts its pips and their suit each at `alone` or more (middle_reader.names; 1:
        never); fuse, fuse_rank: a named card whose corner reading, each card weighed by
        the middle's probability of its suit to the power `fuse` and of its rank group to
        the power `fuse_rank`, no longer comes out on top is "unclear"
        (middle_reader.prefers; 0: never); court: a named court whose corner reading of
        the twelve courts, each weighed by the middle's court-letter reading (a middle
        reader with letters) to this power, names another court is "unclear"
        (middle_reader.prefers_court; 0: never); rescue (sure, support[, rank_support]): a
        card that is left unnamed after all that (its corners unsure, or vetoed or turned
        by the middle) is named by the middle where it counts the card's pips and their
        suit each at `sure` or more and the corners' pooled reading gives that very card at
        least `support`, or its rank at least `rank_support` (middle_reader.rescues; None:
        never); court_rescue (sure, support): one still
        unnamed whose middle sees a picture and whose court letter is read, each at
        `sure` or more, is named as that letter's court of the suit its corners' pooled
        reading gives most, where that is at least `support` (middle_reader.rescues_court;
        None: never). by_picture: with an enrolled deck, where no
        outline names a card, one may be named by its picture (`_by_picture`). on_top
        (floor, margin): with such a deck, where outlines of one card name different
        cards, a card whose own picture fits its outline at least `floor` and better than
        the best-read card's fits its own by more than `margin` is the one on top
        (`_on_top`; None: never). doubt (floor, margin): with such a deck, a named card
        whose own picture fits none of its outlines at `floor`, where another card's
        picture fits by `margin` more, is "unclear" (`_doubted`; None: never). faint: where
        no outline names a card, the finder's boxes down to this confidence, under its own
        threshold, are read too: those of its first look, and on the wider look all of
        them (0: never; a card a hand half covers, which the finder boxes only faintly)."""
        self.finder, self.reader = finder, reader
        self.middle, self.veto, self.suit_veto = middle, veto, suit_veto
        self.ace_veto = ace_veto
        self.veto_sure = veto_sure
        self.confirm, self.confirm_conf = confirm, confirm_conf
        self.alone = alone
        self.imgsz = finder.imgsz
        self.conf = conf
        self.looks, self.turns, self.retry = looks, turns, retry
        self.whole_frame, self.on_table = whole_frame, on_table
        self.pool_looks = pool_looks
        self.grow, self.even_light = grow, even_light
        self.wider = wider
        self.disagree = disagree
        self.fuse, self.fuse_rank = fuse, fuse_rank
        self.court = court
        self.rescue = rescue
        self.court_rescue = court_rescue
        self.faint = faint
        self.by_picture = by_picture
        self.on_top = on_top
        self.doubt = doubt
        self._looked: list = []

    def _crops(self, image: np.ndarray, quad: np.ndarray):
        """Corner crops and regions of each reading of one outline. A box clearly longer
        than wide is read only upright and half turned; a near-square one (a card seen at
        a steep angle) is read sideways too."""
        reads = orientations(quad)
        top = np.linalg.norm(reads[0][1] - reads[0][0])
        side = np.linalg.norm(reads[0][2] - reads[0][1])
        if side > SQUARISH * top:
            reads = reads[:2]
        return [corner_crop(image, card) for card in reads]

    def _outlines(self, image: np.ndarray, quad: np.ndarray) -> list[np.ndarray]:
        return [quad if look == "found" else refine_quad(image, quad) for look in self.looks]

    def _prepare(self, image: np.ndarray, outlines: list[np.ndarray]):
        """One card's corner crops: each look's outline read at each end (and sideways
        when near square), as (crops, looks, ends, regions of the last look)."""
        per_look = [self._crops(image, q) for q in outlines]
        n = min(len(c) for c in per_look)
        return ([c for crops in per_look for c, _ in crops[:n]], len(outlines), n,
                [r for _, r in per_look[-1][:n]])

    @staticmethod
    def _decide(probs: np.ndarray, looks: int, ends: int, regions, conf: float, W: int, H: int,
                given_index: bool = False):
        """One card from its crops' probabilities: its best identity's pooled probability,
        a detection per end that reads it, which reading it is, and the pooled card
        probabilities it was chosen from. given_index: an end names the card even
        where "no index" reads higher, and its confidence is the card's probability given
        that an index is there (an unsure reading, for the middle reader to confirm: a
        corner crop cluttered by the card below or a hand can leave the reader unsure an
        index is there while sure which card it would be)."""
        # The looks' readings are averaged.
        probs = probs.reshape(looks, ends, -1).mean(0)
        # A card has one identity: pool the readings of its two ends (upright and half
        # turned), and take the portrait or the sideways pair, whichever reads a card
        # (a box near square can be taken the wrong way round), then report each end
        # that agrees.
        pairs = [(0, 1), (2, 3)] if len(probs) == 4 else [(0, 1)]
        pooled = [probs[list(pr), :NONE_CLASS].sum(0) for pr in pairs]
        k = int(np.argmax([p.max() for p in pooled]))
        cls = int(pooled[k].argmax())
        found = []
        for j in pairs[k]:
            p = probs[j]
            if p[cls] >= conf and (given_index or p[cls] >= p[NONE_CLASS]):
                sure = p[cls] / max(1e-6, 1.0 - p[NONE_CLASS]) if given_index else p[cls]
                found.append((_box(regions[j], W, H), float(min(1.0, sure)), cls))
        return float(pooled[k][cls]), found, 2 * k, pooled[k]

    def _read_all(self, image: np.ndarray, quads: list[np.ndarray], conf: float,
                  as_is: list[np.ndarray] | tuple = ()):
        """Every outline read with one reader call (a call costs more than a crop):
        (quad, pooled probability, detections) per outline, those of `as_is` (read as
        given, not snapped: each snap costs ~3 ms) last."""
        if not quads and not len(as_is):
            return []
        H, W = image.shape[:2]
        if self.pool_looks:
            looks = [self._outlines(image, q) for q in quads]
        else:           # each look its own outline, returned as the outline read
            looks = [[o] for q in quads for o in self._outlines(image, q)]
            quads = [o[0] for o in looks]
        quads = list(quads) + [np.asarray(q, np.float32) for q in as_is]
        looks += [[q] for q in quads[len(looks):]]
        prepared = [self._prepare(image, o) for o in looks]
        probs = self.reader([c for crops, *_ in prepared for c in crops])
        out, readings, unsure, ends_at, vectors, i = [], [], [], [], [], 0
        low = self.middle is not None and self.confirm < 1.0 and self.confirm_conf <= conf
        for q, outlines, (crops, n_looks, ends, regions) in zip(quads, looks, prepared):
            p = probs[i:i + len(crops)]
            pooled, found, reading, vector = self._decide(p, n_looks, ends, regions, conf, W, H)
            out.append((q, pooled, found))
            vectors.append(vector)
            readings.append(orientations(outlines[-1])[reading])
            unsure.append(None if found or not low else
                          self._decide(p, n_looks, ends, regions, self.confirm_conf, W, H,
                                       given_index=True)[1])
            # Where the two ends of that reading lie, should the middle name the card.
            ends_at.append([_box(regions[j], W, H) for j in (reading, reading + 1)])
            i += len(crops)
        if self._reads_pictures():   # for _by_picture (not the kept outlines read as they are)
            main = len(quads) - len(as_is)
            self._looked += list(zip(quads[:main], readings[:main], vectors[:main], ends_at[:main]))
        return self._check_middles(image, out, readings, unsure, ends_at, vectors)

    def _check_middles(self, image: np.ndarray, cards: list, readings: list,
                       unsure: list, ends_at: list, vectors: list) -> list:
        """The middle read as a second cue. A named card it contradicts, or whose corner
        reading (`vectors`: each outline's pooled card probabilities) its suit and pip
        count, or a court's letter, turn to another card (`fuse`, `fuse_rank`, `court`),
        is made unclear (no detections, and no weight against another outline of the
        card); an unsure one (named only at `confirm_conf`) whose pips it reads surely as
        the same rank and suit is named; one whose ends read no card at all is named where the middle alone
        counts its pips and their suit surely; one left unnamed is named where the middle
        is sure of a card its corners read too (`rescue`). `ends_at`: where each
        reading's two ends lie."""
        if self.middle is None:
            return cards
        alone = self.alone < 1.0
        ask = [j for j, (_, _, found) in enumerate(cards) if found or unsure[j] or alone]
        if not ask:
            return cards
        crops = {j: middle_crop(image, readings[j]) for j in ask}
        probs = self.middle([crops[j] for j in ask])
        # The court letter is read only for named courts (its network costs a call).
        courts = [j for j in ask if cards[j][2] and cards[j][2][0][2] in COURT_CLASSES] \
            if self.court and getattr(self.middle, "reads_letters", False) else []
        letters = dict(zip(courts, self.middle.letters([crops[j] for j in courts]))) \
            if courts else {}
        for j, p in zip(ask, probs):
            q, pooled, found = cards[j]
            named = None            # (class, confidence) the middle names the card by
            if found and max(f[1] for f in found) < self.veto_sure and \
                    not agrees(p, found[0][2], self.veto, self.suit_veto, self.ace_veto):
                cards[j] = (q, 0.0, [])
            elif found and not prefers(p, vectors[j], found[0][2], self.fuse, self.fuse_rank):
                cards[j] = (q, 0.0, [])
            elif j in letters and not prefers_court(letters[j], vectors[j], found[0][2],
                                                    self.court):
                cards[j] = (q, 0.0, [])
            elif not found and unsure[j] and confirms(p, unsure[j][0][2], self.confirm):
                cards[j] = (q, pooled, unsure[j])
            elif not found and not unsure[j] and alone:
                named = names(p, self.alone)
            if named is None and self.rescue and not cards[j][2]:
                named = rescues(p, vectors[j], *self.rescue)
            if named is not None:
                self._name(cards, j, named, ends_at[j])
        if self.court_rescue and getattr(self.middle, "reads_letters", False):
            # A court left unnamed: its letter read only where the middle sees a picture.
            left = [(j, p) for j, p in zip(ask, probs) if not cards[j][2]
                    and int(np.argmax(p[:len(GROUPS)])) == COURT
                    and float(p[COURT]) >= self.court_rescue[0]]
            if left:
                got = self.middle.letters([crops[j] for j, _ in left])
                for (j, p), lt in zip(left, got):
                    named = rescues_court(p, lt, vectors[j], *self.court_rescue)
                    if named is not None:
                        self._name(cards, j, named, ends_at[j])
        return cards

    @staticmethod
    def _name(cards: list, j: int, named: tuple[int, float], ends: list) -> None:
        """Outline j named by the middle: (class, confidence) at both its reading's ends;
        it ranks as surely read against other outlines of the card."""
        cls, sure = named
        q, pooled, _ = cards[j]
        cards[j] = (q, max(pooled, sure), [(box, sure, cls) for box in ends])

    def _retry(self, image: np.ndarray, card, conf: float):
        """A found card that read nothing, or one end only, its box turned each way and
        read again: the finder's angle can be more than the 10 degrees snapping turns
        (4.7 % of its validation cards), and a box between the top card and the pile can
        read a corner of the card below. The best turned box is kept only if both its
        ends read the card, and read it better."""
        q, pooled, found = card
        if (found and pooled >= RETRY_MIN) or not self.retry:
            return card
        best = max(self._read_all(image, [turn_quad(q, a) for a in self.retry], conf),
                   key=lambda c: c[1])
        return best if best[2] and best[1] >= max(RETRY_MIN, pooled) else card

    def _find(self, image: np.ndarray, even: bool = False) -> list[np.ndarray]:
        """The finder's boxes, best first; even: its EVEN_TOP best on the picture with its
        local contrast evened out (shrunk to EVEN_SIDE) instead."""
        if not even:
            return list(self.finder(image)[0])
        H, W = image.shape[:2]
        f = min(1.0, EVEN_SIDE / max(H, W))
        small = image if f == 1.0 else shrink(image, max(1, round(W * f)), max(1, round(H * f)))
        return [q / f for q in self.finder(even_light(small))[0][:EVEN_TOP]]

    def _found(self, image: np.ndarray, quads: list[np.ndarray]) -> list[np.ndarray]:
        """The finder's boxes (best first), and its GROW_TOP best grown by each of
        `grow` and snapped onto the card's edges."""
        grown = [refine_quad(image, scale_quad(q, s)) for q in quads[:GROW_TOP]
                 for s in self.grow]
        return quads + grown

    def _turned(self, image: np.ndarray, ang: float, even: bool = False) -> list[np.ndarray]:
        """The finder's outlines on the picture turned by `ang` degrees, mapped back."""
        H, W = image.shape[:2]
        M = cv2.getRotationMatrix2D((W / 2, H / 2), ang, 1.0)
        c, s = abs(M[0, 0]), abs(M[0, 1])
        nw, nh = int(W * c + H * s), int(W * s + H * c)
        M[:, 2] += (nw / 2 - W / 2, nh / 2 - H / 2)
        turned = cv2.warpAffine(image, M, (nw, nh), borderMode=cv2.BORDER_REPLICATE)
        back = cv2.invertAffineTransform(M)
        return [(q @ back[:, :2].T + back[:, 2]).astype(np.float32)
                for q in self._find(turned, even)]

    def cards(self, image: np.ndarray, conf: float | None = None,
              outlines: list[np.ndarray] | tuple = (),
              fallback: list[np.ndarray] | tuple = ()) -> list[tuple[np.ndarray, float, list]]:
        """Each card seen once, best read first: (outline, its best identity's pooled
        probability over both ends, [(box, confidence, class)] per end that names it).
        outlines: more card outlines (4 x 2, image pixels) to read beside the finder's,
        such as where the picture changed when a card landed. fallback: outlines read only
        where no other outline lies (live: those that named a card a frame before; a
        new card landing there is found by the finder or the landing, and its outline
        must not lose to the old one, which still reads the card below)."""
        conf = self.conf if conf is None else conf
        self._looked = []     # (outline, its reading's corners, pooled vector, ends) per outline read
        cards, kept, faint = self._candidates(image, conf, outlines, fallback)
        # Photos: where no outline names a card, the finder looks again with the light
        # evened out (a black card on a dark table), and only its new boxes are read. Only
        # then: on realdecks/valid's webcam photos, read always, it also made one right
        # card wrong and one unclear.
        if self.even_light and not any(found for _, _, found in cards + kept):
            cards = sorted(cards + self._evened(image, conf), key=lambda c: -c[1])
        if self.wider and not any(found for _, _, found in cards + kept):
            cards = sorted(cards + self._widened(image, conf), key=lambda c: -c[1])
        if faint and not any(found for _, _, found in cards + kept):
            # A faint box is a guess at where a card is: it names one only surely.
            cards = sorted(cards + [_sure_only(self._retry(image, c, conf))
                                    for c in self._read_all(image, faint, conf)],
                           key=lambda c: -c[1])
        return self._settled(image, cards + kept)

    def _settled(self, image: np.ndarray, read: list) -> list:
        """Every outline's reading -> one reading per card, checked by the deck's pictures."""
        kept = self._beneath(image, self._one_each(read, image), read)
        kept = self._doubted(image, self._courts_checked(image, kept, read), read)
        return self._by_picture(image, kept)

    def _beneath(self, image: np.ndarray, kept: list, read: list) -> list:
        """With `on_top` and a deck's pictures, as `_on_top` but for a top card whose
        corners read it without naming it (a hand over one index, the other read under
        the threshold; the named card is the one below, whose corner shows). Another
        outline of that place (`_distinct`: not a look at the named card's own outline)
        whose corners give a card some support and whose middle that card's picture fits
        clearly best (enrolled.supported_fit), at least on_top's floor and better than the
        named card's picture fits its own outlines by on_top's margin, is the card on top:
        it is named there instead, its picture's fit as its confidence."""
        deck = getattr(self.reader, "deck", None)
        if self.on_top is None or not self._reads_pictures():
            return kept
        floor, margin = self.on_top
        out = []
        for quad, pooled, found in kept:
            cls = found[0][2] if found else None
            if cls is not None and cls in deck.pictures:
                own = max(deck.picture_fits(_middle_of(image, q), [cls])[0]
                          for q in _naming(read, quad, cls) or [quad])
                best = None
                for q, corners, vector, ends in self._looked:
                    # Another outline at that place, not a look at the named card's own.
                    if not _same_card(quad, q) or not _distinct(quad, q):
                        continue
                    got = deck.supported_fit(vector, lambda: middle_crop(image, corners))
                    if got and got[0] != cls and got[1] >= floor and got[1] > own + margin \
                            and (best is None or got[1] > best[1]):
                        best = (got[0], got[1], q, ends)
                if best is not None:
                    c, fit, q, ends = best
                    quad, pooled, found = q, fit, [(box, fit, c) for box in ends]
            out.append((quad, pooled, found))
        return out

    def _doubted(self, image: np.ndarray, kept: list, read: list) -> list:
        """With `doubt` and a deck's pictures: a named card is "unclear" where its own
        picture fits the middle of none of its outlines (those of it naming it) at the
        floor, and on the one it fits best another enrolled card's picture fits by the
        margin more: a card below, named through the top card's outline, whose middle
        is the top card's. (A card under a hand fits every picture badly and stays.)"""
        deck = getattr(self.reader, "deck", None)
        if self.doubt is None or deck is None or len(deck.pictures) < 2:
            return kept
        floor, margin = self.doubt
        cards = sorted(deck.pictures)
        out = []
        for quad, pooled, found in kept:
            if found and found[0][2] in deck.pictures:
                cls = found[0][2]
                same = _naming(read, quad, cls)
                fits = [deck.picture_fits(_middle_of(image, q), cards) for q in same or [quad]]
                best = max(fits, key=lambda f: f[cards.index(cls)])
                own = best[cards.index(cls)]
                other = max(f for c, f in zip(cards, best) if c != cls)
                if own < floor and other >= own + margin:
                    found = []
            out.append((quad, pooled, found))
        return out

    def _courts_checked(self, image: np.ndarray, kept: list, read: list) -> list:
        """With an enrolled deck that keeps its cards' pictures: a card read as a court
        is unclear where its middle looks more like another enrolled court's
        (enrolled.doubts_court), however sure its corners. Judged once a card, on every
        outline of it that names that court (a loose outline's middle fits every court
        about alike; the deck judges on the one that fits a picture best)."""
        deck = getattr(self.reader, "deck", None)
        if deck is None or not getattr(deck, "pictures", None):
            return kept
        out = []
        for quad, pooled, found in kept:
            if found and found[0][2] in COURT_CLASSES:
                cls = found[0][2]
                same = _naming(read, quad, cls)
                if deck.doubts_court([_middle_of(image, q) for q in same or [quad]], cls):
                    found = []
            out.append((quad, pooled, found))
        return out

    def _reads_pictures(self) -> bool:
        """Whether a card may be named by its picture: by_picture, and a deck with pictures."""
        return self.by_picture and bool(getattr(getattr(self.reader, "deck", None), "pictures", None))

    def _by_picture(self, image: np.ndarray, kept: list) -> list:
        """With an enrolled deck, where no outline names a card: the card whose picture
        fits an outline's middle clearly best and which its corners read too
        (enrolled.names_by_picture), named at that outline (its ends) with its picture's
        fit as confidence."""
        looked = self._looked
        if not self._reads_pictures() or not looked or any(found for _, _, found in kept):
            return kept
        named = self.reader.deck.names_by_picture([vector for _, _, vector, _ in looked],
                                      lambda k: middle_crop(image, looked[k][1]))
        if named is None:
            return kept
        cls, fit, k = named
        quad, _, _, ends = looked[k]
        card = (quad, fit, [(box, fit, cls) for box in ends])
        return [card] + [c for c in kept if not _same_card(quad, c[0])]

    def _candidates(self, image: np.ndarray, conf: float, outlines, fallback):
        """Every outline of the picture read (the finder's boxes from each angle, grown,
        the given outlines, the frame and the table's), those that read best first; the
        fallback outlines read, each naming a card only surely; and the finder's faint boxes
        (under its own threshold, down to `faint`), not read: cards() reads them only where
        no other outline names a card. One finder call gives both."""
        faint: list[np.ndarray] = []
        if self.faint:
            found, scores = self.finder(image, conf=self.faint)
            strong = scores >= self.finder.conf
            quads = self._found(image, list(found[strong]))
            faint = list(found[~strong])
        else:
            quads = self._found(image, self._find(image))
        quads += [np.asarray(q, np.float32) for q in outlines]
        if self.whole_frame:
            H, W = image.shape[:2]
            quads.append(np.float32([[0, 0], [W, 0], [W, H], [0, H]]))
        if self.on_table:
            quads += table_outlines(image)
        # More looks from other angles (still photos): a box the finder gets badly wrong at
        # one angle it usually gets right at another. (Tried on video as a fallback when
        # the first look read nothing: no flip gained, one false flip made.)
        for ang in self.turns:
            quads += self._found(image, self._turned(image, ang))
        # One reader call for all (a photo's looks are outlines of their own).
        read = self._read_all(image, quads, conf, as_is=fallback)
        main = len(read) - len(fallback)
        cards = sorted((self._retry(image, c, conf) for c in read[:main]), key=lambda c: -c[1])
        # A kept outline is a guess at where a card still is: it names one only surely.
        return cards, [_sure_only(c) for c in read[main:]], faint

    def _evened(self, image: np.ndarray, conf: float) -> list[tuple[np.ndarray, float, list]]:
        """The finder's EVEN_TOP best boxes on the picture with its light evened out, from
        each angle, grown as its boxes are, read. (Until session 16 the whole first look
        was read again with these boxes added, which grew them only where the finder had
        found fewer than GROW_TOP: on realdecks/valid's webcam photos both read 505 right,
        4 wrong, 11 unclear.)"""
        quads = self._found(image, self._find(image, even=True))
        for ang in self.turns:
            quads += self._found(image, self._turned(image, ang, even=True))
        return [self._retry(image, c, conf) for c in self._read_all(image, quads, conf)]

    def _widened(self, image: np.ndarray, conf: float) -> list[tuple[np.ndarray, float, list]]:
        """The finder's boxes on the picture with a border round it (its edge pixels
        drawn out), mapped back and read."""
        b = max(1, round(self.wider * image.shape[0]))
        wide = cv2.copyMakeBorder(image, b, b, b, b, cv2.BORDER_REPLICATE)
        found, scores = self.finder(wide, conf=self.faint or None)
        read = [self._retry(image, c, conf)
                for c in self._read_all(image, [q - np.float32(b) for q in found], conf)]
        # A faint box (under the finder's own threshold) names a card only surely.
        return [_sure_only(c) if self.faint and s < self.finder.conf else c
                for c, s in zip(read, scores)]

    def _one_each(self, read: list, image: np.ndarray) -> list[tuple[np.ndarray, float, list]]:
        """Several outlines of one card: the first (the best read) is kept; with
        `disagree`, it is made unclear where another outline of it names another card
        with at least that share of its probability; with `on_top` and a deck, the card
        on top may win instead (`_on_top`)."""
        groups: list[list] = []
        for reading in read:
            g = next((g for g in groups if _same_card(reading[0], g[0][0])), None)
            if g is None:
                groups.append([reading])
            else:
                g.append(reading)
        kept = []
        for first, *others in groups:
            q, p, f = first
            if self.disagree and f and any(found and found[0][2] != f[0][2] and
                                           pooled >= self.disagree * p
                                           for _, pooled, found in others):
                first = (q, 0.0, [])
            if others and f:
                first = self._on_top(image, [(q, p, f)] + others, first)
            kept.append(first)
        return kept

    def _on_top(self, image: np.ndarray, group: list, first: tuple) -> tuple:
        """Outlines of one card naming different cards, the best read first: where a pile's
        card below shows its corner, its outline and the top card's overlap so much that
        they count as one card, and the lower card's index may read better than the top
        card's. The top card's middle is in view, the lower one's is under it: with a
        deck's pictures, a card whose own picture fits its outline's middle at least
        on_top's floor, and better than the best-read card's fits its own by more than
        its margin, is the card on top: its best-read outline is kept. Cards the deck
        has no picture of are not judged. (A floor: read with a deck of another design,
        every fit is noise, and a Kh of another deck fitting its picture at -0.05 lost to
        an Ah at 0.06.) (Session 47: calling the card "unclear" instead left more wrong
        cards on the choice styles, 12 against 11 of 2,080, and named fewer right.)"""
        deck = getattr(self.reader, "deck", None)
        if self.on_top is None or deck is None:
            return first
        named: dict[int, list] = {}
        for quad, pooled, found in group:
            if found:
                named.setdefault(found[0][2], []).append((quad, pooled, found))
        if len(named) < 2 or any(c not in deck.pictures for c in named):
            return first
        floor, margin = self.on_top
        fits = {c: max(deck.picture_fits(_middle_of(image, q), [c])[0]
                       for q, _, _ in named[c]) for c in named}
        best_read = group[0][2][0][2]
        top = max(named, key=lambda c: fits[c])
        if top == best_read or fits[top] < floor or fits[top] <= fits[best_read] + margin:
            return first
        return max(named[top], key=lambda r: r[1])

    def __call__(self, image: np.ndarray, conf: float | None = None,
                 outlines: list[np.ndarray] | tuple = (),
                 fallback: list[np.ndarray] | tuple = ()) -> Detections:
        dets = [(d, q) for q, _, found in self.cards(image, conf, outlines, fallback)
                for d in found]
        if not dets:
            return Detections.empty()
        return Detections(np.float32([d[0] for d, _ in dets]),
                          np.float32([d[1] for d, _ in dets]),
                          np.array([d[2] for d, _ in dets], int),
                          np.float32([q for _, q in dets])).sorted()


def _sure_only(card: tuple) -> tuple:
    """A read outline (outline, pooled probability, detections) naming its card only where
    an end reads it at FALLBACK_CONF: an outline that is a guess at where a card is."""
    q, pooled, found = card
    return q, pooled, [f for f in found if f[1] >= FALLBACK_CONF]


def _middle_of(image: np.ndarray, quad: np.ndarray) -> np.ndarray:
    """An outline's middle, straightened as it was found, for a deck's pictures to judge
    (they are matched either way up)."""
    return middle_crop(image, orientations(quad)[0])


def _naming(read: list, quad: np.ndarray, cls: int) -> list[np.ndarray]:
    """The outlines among `read` of the card at `quad` that name card `cls`."""
    return [q for q, _, f in read if f and f[0][2] == cls and _same_card(quad, q)]


def _same_card(quad: np.ndarray, other: np.ndarray) -> bool:
    """Whether `other` outlines the same card as `quad`: its centre within a quarter of
    quad's diagonal."""
    return bool(np.linalg.norm(quad.mean(0) - other.mean(0))
                <= 0.25 * np.linalg.norm(quad[0] - quad[2]))


def _distinct(quad: np.ndarray, other: np.ndarray) -> bool:
    """Whether `other` outlines another card than `quad`: centres DISTINCT_SHIFT apart."""
    return bool(np.linalg.norm(quad.mean(0) - other.mean(0))
                >= DISTINCT_SHIFT * np.linalg.norm(quad[0] - quad[2]))


def _box(region: np.ndarray, W: int, H: int) -> list[float]:
    """A corner region's bounding box [x1, y1, x2, y2] inside a W x H picture."""
    x1, y1 = np.clip(region.min(0), 0, (W, H))
    x2, y2 = np.clip(region.max(0), 0, (W, H))
    return [x1, y1, x2, y2]


def table_outlines(image: np.ndarray, side: int = 256, step: float = 40.0,
                   max_cards: int = 2) -> list[np.ndarray]:
    """Outlines of what stands out from a plain table: the table's colour is the median of
    the picture's border, and each large, rectangular patch that differs from it is a card
    candidate (its minimum-area rectangle). On a plain table this finds a card of any
    design, however unlike the rendered cards the finder learnt from, with its true angle;
    on a busy table it finds nothing rectangular and costs ~1 ms."""
    H, W = image.shape[:2]
    f = min(1.0, side / max(H, W))
    small = shrink(image, max(1, round(W * f)), max(1, round(H * f))) if f < 1 else image
    small = cv2.GaussianBlur(small, (0, 0), 1.0).astype(np.int16)
    h, w = small.shape[:2]
    b = max(2, int(0.03 * min(h, w)))
    border = np.concatenate([small[:b].reshape(-1, 3), small[-b:].reshape(-1, 3),
                             small[:, :b].reshape(-1, 3), small[:, -b:].reshape(-1, 3)])
    table = np.median(border, 0)
    if np.abs(border - table).max(1).mean() > step / 2:
        return []                    # the border is not one plain colour: no table to trust
    mask = (np.abs(small - table).max(2) > step).astype(np.uint8)
    mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask)
    out = []
    for k in np.argsort(-stats[1:, cv2.CC_STAT_AREA])[:max_cards] + 1:
        area = stats[k, cv2.CC_STAT_AREA]
        if not 0.02 * h * w <= area <= 0.9 * h * w:
            continue
        pts = np.column_stack(np.nonzero(labels == k)[::-1]).astype(np.float32)
        rect = cv2.minAreaRect(pts)
        (rw, rh) = rect[1]
        if rw * rh <= 0 or area / (rw * rh) < 0.85 or not 1.15 < max(rw, rh) / min(rw, rh) < 1.9:
            continue                 # not a card-shaped rectangle
        out.append((cv2.boxPoints(rect) / f).astype(np.float32))
    return out


def turn_quad(quad: np.ndarray, degrees: float) -> np.ndarray:
    """The outline turned about its centre."""
    a = np.deg2rad(degrees)
    rot = np.float32([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    c = quad.mean(0)
    return ((quad - c) @ rot.T + c).astype(np.float32)


def even_light(image: np.ndarray) -> np.ndarray:
    """The picture with the local contrast of its lightness evened out (CLAHE on L of
    Lab): a black card on a dark table, or one in a dim corner, stands out."""
    clahe = cv2.createCLAHE(clipLimit=3.0, tileGridSize=(8, 8))
    if image.ndim == 2:
        return clahe.apply(image)
    lab = cv2.cvtColor(image, cv2.COLOR_BGR2LAB)
    lab[..., 0] = clahe.apply(lab[..., 0])
    return cv2.cvtColor(lab, cv2.COLOR_LAB2BGR)


def scale_quad(quad: np.ndarray, scale: float) -> np.ndarray:
    """The outline grown (or shrunk) about its centre."""
    c = quad.mean(0)
    return (c + scale * (quad - c)).astype(np.float32)


def refine_quad(image: np.ndarray, quad: np.ndarray, search: float = 0.1, turn: float = 10.0,
                side_px: int = 240) -> np.ndarray:
    """Snap each side of a found card box onto the card's own edge.

    The finder's rectangle can be a few degrees or a few per cent off, and a rectangle
    cannot follow perspective. Each side is moved (within `search` of the card's size)
    and turned (within `turn` degrees) to where the picture steps from bright inside to
    darker outside most strongly along it: a card's edge against the table or the card
    below (whose shadow it casts); for a card darker than the ground round it (black
    paper on a pale table or on white cards), from dark inside to brighter outside. The
    four lines are intersected into a quadrilateral. A side with no clear edge keeps its
    place."""
    pts = np.asarray(quad, np.float64).reshape(4, 2)
    L = max(np.linalg.norm(pts[1] - pts[0]), np.linalg.norm(pts[2] - pts[1]))
    if L < 16:
        return quad
    # Work on a patch around the card, scaled so the card's long side is ~side_px.
    f = min(1.0, side_px / L)
    pad = (search + 0.05) * L
    x0, y0 = np.floor(pts.min(0) - pad).astype(int)
    x1, y1 = np.ceil(pts.max(0) + pad).astype(int)
    H, W = image.shape[:2]
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, W), min(y1, H)
    if x1 - x0 < 8 or y1 - y0 < 8:
        return quad
    patch = image[y0:y1, x0:x1]
    if patch.ndim == 3:
        patch = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
    if f < 1.0:
        patch = shrink(patch, max(1, round(patch.shape[1] * f)), max(1, round(patch.shape[0] * f)))
    patch = cv2.GaussianBlur(patch.astype(np.float32), (0, 0), 1.0)
    ph, pw = patch.shape
    p = (pts - (x0, y0)) * f
    # A card darker than the ground round it (black paper on a pale table or on the
    # white cards below) has its edge the other way round: dark inside, brighter outside.
    # Seeking a bright card there snapped onto its inner frame (session 51: the dark
    # faces video missed). Medians of every third pixel each way: a full one cost ~1 ms.
    inside = np.zeros((ph, pw), np.uint8)
    cv2.fillConvexPoly(inside, np.round(p).astype(np.int32), 1)
    grey, inside = patch[::3, ::3], inside[::3, ::3].astype(bool)
    if inside.any() and not inside.all() and \
            np.median(grey[inside]) + DARK_CARD < np.median(grey[~inside]):
        patch = 255.0 - patch
    # The gradients with a border of zeros, flattened: a sample off the patch is clipped
    # onto the border and counts 0, and one flat gather is cheaper than a 2-D one.
    gx = np.pad(cv2.Sobel(patch, cv2.CV_32F, 1, 0, ksize=3), 1).ravel()
    gy = np.pad(cv2.Sobel(patch, cv2.CV_32F, 0, 1, ksize=3), 1).ravel()
    centre = p.mean(0)
    Ls = L * f
    t = np.linspace(0.12, 0.88, 32, dtype=np.float32)

    def scores(m, u, n, length, angles, offsets):
        """Edge strength of each (side, turn, shift) of the four sides, side i through
        m[i] along u[i] with outward normal n[i]: (4, A, D), and the turned directions."""
        # float32 throughout: the gathers below are memory-bound.
        m, u, n, length = (np.float32(v) for v in (m, u, n, length))
        offsets = np.float32(offsets)
        c = np.cos(angles).astype(np.float32)[None, :, None]
        s = np.sin(angles).astype(np.float32)[None, :, None]
        ua = np.concatenate([c * u[:, None, :1] - s * u[:, None, 1:],
                             s * u[:, None, :1] + c * u[:, None, 1:]], 2)     # (4, A, 2)
        na = np.concatenate([c * n[:, None, :1] - s * n[:, None, 1:],
                             s * n[:, None, :1] + c * n[:, None, 1:]], 2)
        along = (t[None, :] - 0.5) * length[:, None]                          # (4, T)
        off = offsets[:, None, :, None]
        alo = along[:, None, None, :]
        # Sample points (4, A, D, T), x and y apart, shifted onto the padded patch.
        xs = np.round(m[:, None, None, None, 0] + off * na[:, :, None, None, 0]
                      + alo * ua[:, :, None, None, 0]).astype(np.intp)
        ys = np.round(m[:, None, None, None, 1] + off * na[:, :, None, None, 1]
                      + alo * ua[:, :, None, None, 1]).astype(np.intp)
        np.clip(xs, -1, pw, out=xs)
        np.clip(ys, -1, ph, out=ys)
        idx = (ys + 1) * (pw + 2) + (xs + 1)
        # Bright inside, darker outside: the gradient points inward, against the normal.
        g = -(gx.take(idx) * na[:, :, None, None, 0] + gy.take(idx) * na[:, :, None, None, 1])
        # Only steps the right way count, so a dark line inside the card (a court card's
        # frame) does not cancel out along the side.
        return np.maximum(g, 0).mean(3), ua, na

    # Coarse to fine: 2 degrees and 2 pixels, then half a degree and half a pixel; all
    # four sides at once (one numpy pass each, ~4x faster than side by side).
    coarse_a = np.deg2rad(np.arange(-turn, turn + 0.5, 2.0))
    coarse_d = np.arange(-search * Ls, search * Ls + 0.5, 2.0)
    fine_a, fine_d = np.deg2rad(np.arange(-2.0, 2.01, 0.5)), np.arange(-2.0, 2.01, 0.5)
    a, b = p, np.roll(p, -1, axis=0)
    length = np.linalg.norm(b - a, axis=1)
    u = (b - a) / np.maximum(length, 1e-6)[:, None]
    n = np.stack([u[:, 1], -u[:, 0]], 1)
    n *= np.where(np.einsum("ij,ij->i", n, (a + b) / 2 - centre) < 0, -1.0, 1.0)[:, None]  # outward
    m = (a + b) / 2
    sides = np.arange(4)
    sc, ua, na = scores(m, u, n, length, coarse_a, np.broadcast_to(coarse_d, (4, len(coarse_d))))
    best = sc.reshape(4, -1).argmax(1)
    ai, di = np.unravel_index(best, sc.shape[1:])
    edge = sc[sides, ai, di] >= MIN_EDGE
    m2 = m + coarse_d[di][:, None] * na[sides, ai]
    sc, ua2, na2 = scores(m2, ua[sides, ai], na[sides, ai], length, fine_a,
                          np.broadcast_to(fine_d, (4, len(fine_d))))
    best = sc.reshape(4, -1).argmax(1)
    fa, fd = np.unravel_index(best, sc.shape[1:])
    # A side with no clear edge keeps its place.
    lines = [(m2[i] + fine_d[fd[i]] * na2[i, fa[i]], ua2[i, fa[i]]) if edge[i] else (a[i], u[i])
             for i in range(4)]
    out = []
    for i in range(4):
        (p1, d1), (p2, d2) = lines[i - 1], lines[i]
        A = np.array([d1, -d2]).T
        if abs(np.linalg.det(A)) < 1e-6:
            return quad
        s1 = np.linalg.solve(A, p2 - p1)[0]
        out.append(p1 + s1 * d1)
    out = np.array(out) / f + (x0, y0)
    # Sanity: a refinement that moves a corner by more than the search range is a wrong edge.
    if np.linalg.norm(out - pts, axis=1).max() > 2.5 * search * L:
        return quad
    return out.astype(np.float32)
