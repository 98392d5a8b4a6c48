"""The shipped detector: which model files, and how to load them.

One design (`card_reader.py`): a card finder outlines each whole face-up card, the
corner reader reads its straightened corners. Both run as ONNX files through ONNX
Runtime: fast on a CPU, and no torch import. Training and evaluation live apart, in
`companion/training/`.
"""

from __future__ import annotations

import sys
from pathlib import Path

from .card_reader import CardFinder, CardReaderDetector, CornerReader
from .detections import Detector, ModelError, default_threads, onnx_session
from .middle_reader import MiddleReader

MODELS = Path(__file__).resolve().parent.parent.parent / "models"
CARD_FINDER = MODELS / "card_finder.onnx"        # YOLO11n-OBB, one class: whole face-up cards
CORNER_READER = MODELS / "corner_reader.onnx"    # reads a straightened corner
MIDDLE_READER = MODELS / "middle_reader.onnx"    # rank group and suit from the card's middle
COURT_LETTERS = MODELS / "court_letters.onnx"    # which court a court's middle shows
# The same finder with int8 weights and activations but a float head (quantize.py): for
# video, where it must keep up with the camera; still photos take the float one.
LIVE_FINDER = MODELS / "card_finder-int8.onnx"
# ...and the corner reader's int8 copy (quantize.py, 7-bit weights as the finder's): for
# video too, a call of 8 crops 1.2 ms against 2.3 ms; an enrolled deck (fitted on the float
# reader's features) reads through it as well (session 22: the same cards on a choice
# style). Photos take the float one.
LIVE_READER = MODELS / "corner_reader-int8.onnx"
# Which outlines of a card are read (card_reader): photos read the found and the snapped
# box as two outlines and keep the better reading (on realdecks/valid, snapped alone:
# 252 right, 0 wrong; both: 255, 1: snapping can pull a dark card's sides inwards);
# video pools the two.
LOOKS = ("found", "snapped")
PHOTO_TURNS = (30.0, 60.0)                        # extra angles the finder sees a photo from
# Photos: the finder's two best boxes of each angle, grown by these scales and snapped onto
# the card's edges, are read too (a box on a card's inner frame reads no index). Chosen on
# realdecks/valid as a webcam photographs it (session 15, 520 photos): 497 right, 4 wrong
# without; 503, 3 with (1.15, 1.3); (1.1, 1.25, 1.45) or 4 boxes gained nothing more, nor
# did growing the turned looks' boxes on the turned picture. Valid's table photos: 257, 0
# either way.
PHOTO_GROW = (1.15, 1.3)
# ...and where no outline names a card, the finder looks again with the picture's light
# evened out (card_reader.even_light): on the same photos 503 -> 508 right, 3 wrong either
# way (read always, not only then: 506 right, 4 wrong, a joker named).
# How sure an end's reading must be to name a card. Photos: chosen on realdecks/valid (at
# 0.25 the first real-deck reader named 3 wrong cards of 260 there, at 0.45 one, losing one
# right). Video: low, because the flip tracker asks more itself (0.55 on two looks).
PHOTO_CONF, LIVE_CONF = 0.45, 0.25
# A named card is "unclear" when the middle reader, counting pips, gives its rank group less
# than VETO, or gives its suit less than SUIT_VETO (middle_reader.agrees; 0: the middle is
# not read). Chosen on realdecks/valid photos (session 12): 0.03 took 6c->4c, and lost a
# 10h; the suit veto at 0.01 changed nothing there, at 0.1 it cost 7 right cards for 2
# wrong ones. On video too: on rendered piles of the choosing seed 31337 it took 5 of the
# 6 misread top cards away and named as many right.
VETO, SUIT_VETO = 0.03, 0.01
# With an enrolled deck the suit veto is stricter: a deck's index may print its suit small
# (its corner crops, blurred, read clubs for spades and back again), while its middle's
# pips are large. Chosen on the choice style 555555555 (bench_enrol's scenes, 20 a card):
# video 999 right / 6 wrong at 0.01, 999 / 4 at 0.1, 1000 / 3 at 0.2, 998 / 3 at 0.3;
# photos 1013 / 20, 1014 / 19, 1015 / 17 at 0.01 / 0.1 / 0.2. On a second choice style,
# 444444444, it changed no reading in either setting (1022 / 1 and 1030 / 7).
DECK_SUIT_VETO = 0.2
# ...unless an end read the card at VETO_SURE or more (session 13): a 10h whose pips sit near
# its corners, which the middle (corners blanked) counts as 8 at 0.94, was vetoed against
# a corner reading of 0.9-0.95. Chosen on the choice sets: realdecks/valid photos and the
# rendered piles of seed 31337 the same, the valid-face games 201-205 one flip more.
VETO_SURE = 0.9
# With an enrolled deck no corner reading is that sure (DECK_VETO_SURE: never): the heads
# fitted to one deck read its own index surely, its look-alikes too (an Ac read As at 0.9
# and 0.82 over one large club, a 3s read 3c at 0.9 over spade pips), and the deck's
# pictures tell such suits apart too seldom to judge them (a 6s: its picture 0.92, 6c's 0.91).
# Session 56, rule fixed before its figures (runs/-only log); choice styles' bench_enrol
# scenes, right / wrong of 1,040, photos: 555555555 1024 / 8 -> 1026 / 6, 444444444
# 1036 / 1 (=), 387298334 1022 / 7 -> 1024 / 6; video unchanged (MODEL_CARD, Session 56).
DECK_VETO_SURE = 2.0
# A card named 2-10 whose middle the middle reader reads as an ace at ACE_VETO or more is
# unclear too (session 48; middle_reader.agrees): a blurred ace's index read as a 3 or a
# 6. Chosen on the choice sets among 0.8 / 0.9 / 0.95: rendered piles of seeds 31337 and
# 31338 (1,500 each) 21 -> 20 misreads at 0.8 (an Ac read 3c), none fewer at 0.9 or
# 0.95, whole top cards the same; realdecks/valid's photos and valid-face games 276-285
# unchanged. Not lower: valid's art 3s, 4s and 7s read as aces at 0.5-0.76.
ACE_VETO = 0.8
# A card whose ends read it at CONFIRM_CONF but not at the threshold, or only below "no
# index", is named when the middle's pips read the same rank group and suit, each at least
# PHOTO_CONFIRM / LIVE_CONFIRM (1: never). Photos: chosen on realdecks/valid (0.8 named 3
# more cards right and none wrong, 0.9 one more). Video, session 13: the same 0.8, on the
# choosing games (drawn 1-10: one more flip, a 2d whose index read 0.38 against "no index"
# 0.5 on every frame; valid faces 201-205: the same flips).
PHOTO_CONFIRM, CONFIRM_CONF = 0.8, 0.25
LIVE_CONFIRM = 0.8
# A card whose ends read no card at all, not even unsurely, is named by its middle alone
# where the middle counts its pips (2-10) and their suit, each at least PHOTO_ALONE /
# LIVE_ALONE (1: never): a blurred or tiny index over clear pips. Chosen in session 16 by
# a rule fixed before: more right and no more wrong on the choice sets. Photos, on
# realdecks/valid's webcam photos: 505 right / 4 wrong without, 506 / 5 at 0.8, 507 / 4 at
# 0.9 (its table photos 257 / 0 throughout). Video never: at 0.8 the rendered piles of seed
# 31337 named 2 more whole top cards (0.9: 1) and drawn games 1-10 called the same flips,
# but the valid-face game 201 called a 6s as 2c, a false flip.
PHOTO_ALONE, LIVE_ALONE = 0.9, 1.0
# Video: where no outline of a frame names a card, the finder looks again with a border of
# this share of the frame's height round it (CardReaderDetector's `wider`). Photos have
# their own second looks (turns, grown boxes, the light evened out).
LIVE_WIDER = 0.15
# Photos: a card is "unclear" where two of its outlines name different cards, the second
# with at least this share of the best one's probability (CardReaderDetector's `disagree`;
# a photo is read through many outlines and the best reading wins, so one outline's sure
# mistake would otherwise stand). Chosen in session 36 on realdecks/valid's photos (on a
# table, close and small in a webcam's frame; 998 right / 16 wrong without) by the rule the
# veto was chosen by (no more right cards lost than wrong ones removed; a tie in the net
# goes to the rule that changes less): 0.5 979 / 9, 0.8 993 / 10, 0.95 998 / 15.
PHOTO_DISAGREE = 0.95
# A named card is "unclear" where its corner reading, each card's probability weighed by
# the middle's probability of that card's suit (to this power; where the middle sees pips),
# would name another card (middle_reader.prefers): a blurred index's club read as a spade
# over clear club pips. Photos and video alike. Chosen in session 37 on the choice sets by
# the rules fixed before (photos: no more right lost than wrong removed; piles: no more
# misreads, at most one whole top card fewer; games: no fewer flips, no more false ones):
# realdecks/valid's photos 998 right / 15 wrong -> 999 / 14; rendered piles (1,500 each)
# of seed 31337 12 -> 10 misreads, whole 1055 either way, of 31338 13 -> 12, whole
# 1066 -> 1067; valid-face games 206-215 391 / 407 flips, 2 false -> 392, 1. At 2: piles
# 8 and 12 misreads, but photos 997 / 14 and those games 387 flips, 1 false (a red-inked
# 4c's and an Ah's middles read another suit).
FUSE = 1.0
# Photos weigh the middle's pip count in the same way (its probability of the card's rank
# group, where it counts 2-10 pips, to this power; middle_reader.prefers): an index read
# one pip off. Chosen in session 38 by the same rules: realdecks/valid's photos 999 / 14
# -> 999 / 13 (a small 7s read 4s made unclear); rendered piles of seed 31337 1055 / 10
# either way, 31338 1067 / 12 -> 1068 / 11; but the valid-face games 206-215 392 -> 391
# flips (1 false either way): one flip fewer, so video does not.
PHOTO_FUSE_RANK, LIVE_FUSE_RANK = 1.0, 0.0
# A named court is "unclear" where its corner reading of the twelve courts, each weighed by
# the court letter its middle shows to this power (COURT_LETTERS), would name another
# court (middle_reader.prefers_court): a small queen's index read as a king where the
# picture says queen. Photos and video alike, but not with an enrolled deck (its
# reading is fitted on that deck's own court indices; with the cue, the choice style
# 555555555 on video lost a Qh and named a Kh). Session 50; its figures are in the model
# card.
COURT_FUSE = 1.0
# Video: a card left unnamed after all that (corners unsure, or their card vetoed or
# turned by the middle) is named by its middle where the middle reads its pips and
# their suit each at LIVE_RESCUE[0] or more and the corners' reading, pooled over both
# ends, gives that very card at least LIVE_RESCUE[1] (middle_reader.rescues): a blurred
# index read 2c over 2s whose clear pips are spades. Chosen in session 44 by a rule fixed
# before any figure (choose.py's questions; the deck styles: more right, no more wrong)
# from (0.9, 0.3), (0.9, 0.15) and (0.95, 0.3), on the choice sets only: rendered piles (1,500 each) of seed 31337 whole
# top cards 1055 -> 1060 / 1063 / 1060 of 1088 (misreads 10 throughout), of 31338
# 1067 -> 1070 / 1071 / 1067 of 1091 (misreads 12 / 11 / 12); valid-face games 276-285
# 387 of 405 flips, 1 false, and drawn games 1-30 586 of 587, none false, with (0.9,
# 0.15) as without; with the choice deck styles 555555555 and 444444444 enrolled
# (bench_enrol's scenes, 20 a card) 2022 -> 2026 / 2027 / 2025 of 2080 right, none
# wrong. Photos do not: session 45 measured (0.9, 0.15) and (0.9, 0.3) on
# realdecks/valid's photos, 999 right / 13 wrong with either and without (no reading changed).
# Session 55: the corners' reading may give the card's rank instead, summed over the four
# suits, at LIVE_RESCUE[2] (fixed, not swept): a blurred 2c whose index reads 2s at 1.13
# pooled over clear club pips. By a rule fixed before any figure (runs/-only log), choice
# sets: rendered piles of 31337 1063 -> 1064 whole top cards, 8 misreads either way, of
# 31338 1071 / 11 (=); drawn games 1-30 586 of 587, none false (=); fresh valid-face games
# 386-395 382 of 392, none false, with either code. Held out, piles of 90210 (300 scenes):
# 208 -> 209 of 215 whole top cards, 3 misreads either way.
LIVE_RESCUE = (0.9, 0.15, 0.5)
# Video, without an enrolled deck: a court left unnamed is named where the middle sees a
# picture and the court-letter network reads its letter, each at LIVE_COURT_RESCUE[0] or
# more, and the corners' pooled reading gives that letter's court of its likeliest suit at
# least LIVE_COURT_RESCUE[1] (middle_reader.rescues_court): an art court whose index the
# corner reader reads unsurely. Session 52, by a rule fixed before any figure (runs/-only
# rule log; choose.py's questions), on the choice sets only: valid-face games 356-365
# 380 -> 382 of 398 flips, none false; drawn games 1-30 586 of 587, none false; rendered
# piles (1,500 each) of seeds 31337 and 31338 1063 / 8 and 1071 / 11, as without (the
# renderer's courts show no letter). Photos not: realdecks/valid's photos read 1002 right
# / 11 wrong with it as without.
LIVE_COURT_RESCUE = (0.9, 0.15)
# Photos, with an enrolled deck that keeps its cards' pictures: where outlines of one card
# name different cards, a card whose own picture fits its outline's middle at least
# PHOTO_ON_TOP[0], and better than the best-read card's fits its own by more than
# PHOTO_ON_TOP[1], is the card on top and is named (CardReaderDetector's `on_top`): a pile's
# card below can show a corner that reads better than the top card's, but its middle lies
# under the top card. Chosen in session 47 by rules fixed before any figure (runs/-only
# rule log), on the choice styles' bench_enrol scenes (photos 555555555 + 444444444): the
# margin among 0.1 / 0.2 / 0.3, switching or calling the card "unclear": 2055 right / 16
# wrong -> 2060 / 11 at 0.1 (0.2 and 0.3: 2059 / 12; "unclear" 2058 / 12). Held out, style
# 223606797: 1023 / 8 -> 1027 / 5. Then the floor: with the realcards deck, realdecks/valid's
# cards of other decks read 255 / 1 -> 254 / 2 (cards without a picture not judged; a
# foreign Kh fitting its picture at -0.05 switched to an Ah at 0.06: with another deck's
# pictures every fit is noise); floors 0.3 and 0.5 give back 255 / 1, the choice styles
# 2060 / 11 at 0.3 (0.5: 2059 / 12). Held out, fresh style 244948974: 1024 / 7 -> 1026 / 5.
# Video not: no reading of its choice styles changed (1008 / 0 and 1023 / 0 at every
# margin). Session 55: the same floor and margin judge a top card that no outline names,
# where another outline of that place reads it with some support and its picture fits
# there clearly best (CardReaderDetector._beneath: a hand over one index, the corner of the
# card below read instead). By a rule fixed before (runs/-only log; right lost <= wrong
# removed on the choice styles, no more wrong on other decks or held out): photos of
# 555555555, 444444444 and 387298334 1024 / 8, 1036 / 1 (=) and 1021 / 8 -> 1022 / 7;
# realcards 510 / 510 (=); other decks with the realcards deck 246 / 1 / 13 (=); held out,
# fresh style 400000033, 1019 / 2 with either code. Its first form, which took a grown look
# at the named card for another card, read other decks 245 / 2 (an Ac named As).
PHOTO_ON_TOP = (0.3, 0.1)
# Photos, with such a deck: a named card whose own picture fits none of its outlines'
# middles at PHOTO_DOUBT[0], while on the outline it fits best another enrolled card's
# picture fits at least PHOTO_DOUBT[1] better, is "unclear" (CardReaderDetector's `doubt`):
# a card below named through the top card's outline, where the top card's own reading is
# lost. A card under a hand fits every picture badly, so the second condition spares it.
# Chosen in session 47 by a rule fixed before any figure (right lost <= wrong removed,
# summed over the choice styles 555555555 + 444444444, photos) among margins 0.2 / 0.3 /
# 0.4: 2060 / 11 -> 2053 / 7, 2057 / 9, 2059 / 9 (only 0.4 passes). Held out, fresh style
# 264575131: 1019 / 9 -> 1020 / 8. With another deck's pictures: realdecks/valid's cards of
# other decks read with the realcards deck 255 right / 1 wrong -> 248 / 1 (7 more "no
# card", as a card of another deck should read). The floor alone (any other fit) was
# measured first: it lost 11 right for 5 wrong removed. Video not: it has no wrong card
# on the choice styles to remove.
PHOTO_DOUBT = (0.2, 0.4)
# With an enrolled deck: where no outline names a card, the finder's boxes down to this
# confidence (its own threshold is FINDER_CONF) are read too, each naming a card only at
# FALLBACK_CONF (CardReaderDetector's `faint`): a card a hand half covers is boxed only
# faintly, and most of what the choice style 555555555 missed on video was such a card.
# Session 52, by rules fixed before its figures (runs/-only rule log; choice styles more
# right, no more wrong; enrolled games no fewer flips, none false). Video: choice styles
# 555555555 1008 -> 1013 of 1040 and 444444444 1023 -> 1027, no wrong card either way;
# enrolled drawn games 1-10 192 of 193 either way. Photos, judged after: 1024 / 8 and
# 1035 / 1 -> 1024 / 8 and 1036 / 1. (Without the FALLBACK_CONF floor, the first form,
# a held-out style named a 5c under a hand 6c on video: model card.)
DECK_FAINT = 0.05


def default_model(photo: bool = False) -> Path:
    """The shipped finder: its int8 copy for video frames, the float one for photos."""
    return LIVE_FINDER if not photo and LIVE_FINDER.is_file() else CARD_FINDER


def load_detector(path: str | Path | None = None, imgsz: int | None = None,
                  conf: float | None = None, reader: str | Path | None = None,
                  photo: bool = False, deck=None, veto: float | None = None) -> Detector:
    """The card reader: a card finder (`.onnx`, a one-class YOLO-OBB export) and the corner
    reader (`reader`, default `corner_reader.onnx` beside the finder, else the shipped one;
    for video, `corner_reader-int8.onnx` first where it lies there).
    Without a path, the shipped finder (its int8 copy for video frames). Without imgsz,
    the finder runs at the size it was trained for; without conf, PHOTO_CONF or LIVE_CONF.
    deck: an enrolled deck (a name, a path or an EnrolledDeck, companion.deck): corners
    are then read as that deck's cards. A deck enrolled with another reader is refused
    (DeckError). veto: the middle reader's veto (default VETO; 0 reads no middle)."""
    path = Path(default_model(photo) if path is None else path)
    if path.suffix != ".onnx":
        raise ModelError(f"{path}: not an ONNX model (export a checkpoint with "
                         "`companion train --export`)")
    # One session, read once: its metadata says whether the file is a card finder.
    session = onnx_session(path, default_threads(), spin=True)
    if session.get_modelmeta().custom_metadata_map.get("task") != "obb":
        raise ModelError(f"{path}: not a card finder (a one-class YOLO-OBB export)")
    if reader is None:
        # The reader beside the finder, else the shipped one; on video, each one's int8
        # copy first.
        names = [CORNER_READER.name] if photo else [LIVE_READER.name, CORNER_READER.name]
        reader = next((p for folder in (path.parent, MODELS) for n in names
                       if (p := folder / n).is_file()), CORNER_READER)
    # Photos: the found and the snapped outline, each read as an outline of its own (the
    # better reading kept), found from three angles. Video frames of a pile: the found and
    # the snapped outline pooled (a snapped side can catch the edge of a card below;
    # pooled, 10 rendered games gave precision 1.000 / recall 0.848 against 0.977 /
    # 0.824 from the found box alone).
    corner_reader = CornerReader(reader)
    if deck is not None:
        from ..deck.enrolled import DeckError, EnrolledDeck, reader_id
        if not corner_reader.has_features:
            raise DeckError(f"{reader}: this corner reader has no 'features' output, so it "
                            "cannot read an enrolled deck")
        rid = reader_id(reader)
        if isinstance(deck, EnrolledDeck):
            if deck.reader != rid:
                raise DeckError(f"deck {deck.name}: enrolled with another corner reader; "
                                "enrol it again")
        else:
            deck = EnrolledDeck.load(deck, reader=rid)
            if deck.load_note:
                print(deck.load_note, file=sys.stderr)
        corner_reader.deck = deck
    veto = VETO if veto is None else veto
    suit_veto = (DECK_SUIT_VETO if deck is not None else SUIT_VETO) if veto > 0 else 0.0
    middle = MiddleReader(MIDDLE_READER, letters_path=COURT_LETTERS if COURT_LETTERS.is_file()
                          else None) if veto > 0 and MIDDLE_READER.is_file() else None
    return CardReaderDetector(CardFinder(path, imgsz, session=session), corner_reader,
                              conf=conf if conf is not None else PHOTO_CONF if photo else LIVE_CONF,
                              looks=LOOKS, pool_looks=not photo,
                              turns=PHOTO_TURNS if photo else (), whole_frame=photo,
                              on_table=photo, middle=middle, veto=veto, suit_veto=suit_veto,
                              ace_veto=ACE_VETO,
                              veto_sure=VETO_SURE if deck is None else DECK_VETO_SURE,
                              confirm=PHOTO_CONFIRM if photo else LIVE_CONFIRM,
                              confirm_conf=CONFIRM_CONF,
                              alone=PHOTO_ALONE if photo else LIVE_ALONE,
                              grow=PHOTO_GROW if photo else (),
                              even_light=photo, wider=0.0 if photo else LIVE_WIDER,
                              disagree=PHOTO_DISAGREE if photo else 0.0, fuse=FUSE,
                              fuse_rank=PHOTO_FUSE_RANK if photo else LIVE_FUSE_RANK,
                              court=COURT_FUSE if deck is None else 0.0,
                              rescue=None if photo else LIVE_RESCUE,
                              court_rescue=None if photo or deck is not None
                              else LIVE_COURT_RESCUE,
                              by_picture=True,
                              on_top=PHOTO_ON_TOP if photo else None,
                              doubt=PHOTO_DOUBT if photo else None,
                              faint=DECK_FAINT if deck is not None else 0.0)
