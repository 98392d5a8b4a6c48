"""The `companion` command. Each subcommand lives with its concern; this file only
parses arguments and turns expected failures into one clear line on stderr."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Callable, Sequence

from .engine import PRESETS, Game, RulesError, load_rules, run_lines


class CommandError(Exception):
    """An expected failure: printed as one line, exit status 2."""


def _rules_arg(p: argparse.ArgumentParser, default: str = "base",
               resumable: bool = False) -> None:
    """resumable: the default is left None, so --resume can tell the rules were not given
    (a resumed game goes on under its log's)."""
    p.add_argument("--rules", default=None if resumable else default, metavar="PRESET_OR_TOML",
                   help=f"a preset ({', '.join(PRESETS)}) or a TOML file of house options "
                        f"(default: {default}" + ("; with --resume, the log's)" if resumable
                                                   else ")"))


def _resume_arg(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--resume", default=None, metavar="LOG",
                   help=f"carry on the game of this session log ({what}), appending to it: "
                        "players, rules and the whole referee state come from the log")


# ---------------------------------------------------------------- referee
def cmd_referee(args: argparse.Namespace) -> int:
    game = Game(load_rules(args.rules))
    name = "<stdin>" if args.events == "-" else args.events
    try:
        src = sys.stdin if args.events == "-" else open(args.events, encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"{args.events}: {exc.strerror}") from None
    out = sys.stdout
    with src:
        for res in run_lines(game, src):
            for ann in res.announcements:
                out.write(json.dumps(ann) + "\n")
            if res.error:
                print(f"{name}:{res.line}: rejected: {res.error}", file=sys.stderr)
            out.flush()   # a live consumer reads each call as it happens
    if game.players:
        out.write(json.dumps(game.snapshot()) + "\n")
    return 0


# ---------------------------------------------------------------- simulate
def cmd_simulate(args: argparse.Namespace) -> int:
    from .sim.report import simulate
    rules = load_rules(args.rules)
    if not 2 <= args.players <= 8:
        raise CommandError("--players: between 2 and 8")
    if args.hands < 1:
        raise CommandError("--hands: at least 1")
    print(simulate(rules, args.players, args.hands, args.seed, flip_ms=args.flip_ms,
                   as_json=args.json))
    return 0


# ---------------------------------------------------------------- live referee
def _players(text: str) -> list[str]:
    players = [p.strip() for p in text.split(",") if p.strip()]
    if len(players) < 2:
        raise CommandError("--players: at least two names, comma-separated")
    return players


def _zones(text: str | None) -> dict[int, int] | None:
    """'0:2,1:0,2:1' -> {zone: seat}."""
    if not text:
        return None
    try:
        pairs = [item.split(":") for item in text.split(",")]
        return {int(z): int(s) for z, s in pairs}
    except ValueError:
        raise CommandError(f"--pad-zones {text!r}: expected ZONE:SEAT pairs like 0:2,1:0") \
            from None


def _roi(text: str | None):
    from .live.pipeline import Roi
    if text is None:
        return None
    try:
        return Roi.parse(text)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def _seats(text: str | None, n: int) -> list[float]:
    from .live.seats import parse_seats
    try:
        return parse_seats(text, n)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def seats_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seats", default=None, metavar="POS,...",
                   help="where each player sits round the camera's picture, in seat order: "
                        "bottom, left, top, right, top-left, ... or degrees clockwise from "
                        "the bottom (default: spread evenly, the first at the bottom)")


def cmd_demo(args: argparse.Namespace) -> int:
    from .callouts import Verbosity
    from .deck.enrolled import DeckError
    from .detector.model import ModelError, load_detector
    from .live.runner import run_demo
    rules = load_rules(args.rules)
    players = _players(args.players)
    try:
        det = load_detector(args.model, deck=args.deck)
    except DeckError as exc:
        raise CommandError(str(exc)) from None
    except ModelError as exc:
        raise CommandError(f"{exc}; the demo needs the shipped detector "
                           "(models/, see models/MODEL_CARD.md)") from None
    show = {"auto": None, "on": True, "off": False}[args.window]
    speaker = _speaker(args.voice)
    try:
        return run_demo(det, rules, players, args.seed, args.seconds, Verbosity(args.verbosity),
                        show, speaker)
    finally:
        if speaker is not None:
            speaker.close()


def cmd_watch(args: argparse.Namespace) -> int:
    from .live.capture import SourceError
    from .live.runner import run_watch
    from .live.session import ReplayError
    rules = load_rules(args.rules) if args.rules else None
    det = _detector(args)
    players = _players(args.players)
    if args.resume:
        players = _resumed_players(args.resume, players)
    seats = _seats(args.seats, len(players))
    camera = {"auto": not args.slaps, "on": True, "off": False}[args.camera_slaps]
    try:
        return run_watch(args.video, det, rules, players, args.json, args.slaps,
                         not args.no_gate, _roi(args.roi), args.log, args.realtime,
                         seats=seats if camera else None, resume=args.resume)
    except (SourceError, ReplayError, ValueError, OSError) as exc:
        raise CommandError(str(exc)) from None


def _resumed_players(log: str, players: list[str]) -> list[str]:
    """A resumed game's players are its log's (their seats follow from how many)."""
    from .live.session import ReplayError, read_log
    try:
        return read_log(log).players or players
    except ReplayError as exc:
        raise CommandError(str(exc)) from None


def cmd_run(args: argparse.Namespace) -> int:
    from .live.capture import SourceError
    from .live.runner import run_live
    from .live.runner import open_resume
    from .live.session import ReplayError
    det = _detector(args)
    show = {"auto": None, "on": True, "off": False}[args.window]
    log = args.log or time.strftime("sessions/session-%Y%m%d-%H%M%S.jsonl")
    players = _players(args.players)
    session = None
    if args.resume:
        if args.log and Path(args.log).resolve() != Path(args.resume).resolve():
            raise CommandError("--resume carries on in the resumed log; leave out --log")
        try:
            session = open_resume(args.resume, load_rules(args.rules) if args.rules else None,
                                  det)
        except ReplayError as exc:
            raise CommandError(str(exc)) from None
        rules, players, log = session.rules, session.players, args.resume
    else:
        rules = load_rules(args.rules or "challenge")
    seats = _seats(args.seats, len(players))
    camera = {"auto": True, "on": True, "off": False}[args.camera_slaps]
    speaker = _speaker(args.voice)
    hub = server = None
    if args.web:
        from .web.server import Hub, WebServer
        hub = Hub(players)
        try:
            server = WebServer(hub, args.host, args.port).start()
        except OSError as exc:
            raise CommandError(str(exc)) from None
        print(f"table page: {server.url}", flush=True)
    try:
        return run_live(str(args.camera), det, rules, players, args.pad, show,
                        args.high_contrast, _roi(args.roi), log, Path(log).with_suffix(""),
                        speaker=speaker, hub=hub, zones=_zones(args.pad_zones),
                        seats=seats if camera else None, resume=session)
    except SourceError as exc:
        raise CommandError(str(exc)) from None
    finally:
        if server is not None:
            server.stop()
        if speaker is not None:
            speaker.close()


def _speaker(mode: str):
    """The voice: on where a sound device exists; text only otherwise (said once)."""
    if mode == "off":
        return None
    try:
        from .callouts.speech import Speaker, SpeechError
        speaker = Speaker()
    except (ImportError, OSError, SpeechError) as exc:
        print(f"voice: off ({exc}); calls are printed", file=sys.stderr)
        return None
    if not speaker.has_audio:
        print("voice: no audio device here; calls are printed", file=sys.stderr)
        speaker.close()
        return None
    return speaker


def cmd_replay(args: argparse.Namespace) -> int:
    from .callouts import phrase
    from .live.session import ReplayError, read_log, replay
    try:
        session = read_log(args.log)
        if session.warning:
            print(session.warning, file=sys.stderr)
        players = session.players
        for ann in replay(session):
            if args.json:
                print(json.dumps(ann))
            else:
                text = phrase(ann, players)
                if text:
                    print(text)
    except ReplayError as exc:
        raise CommandError(str(exc)) from None
    return 0


# ---------------------------------------------------------------- dataset
def cmd_dataset(args: argparse.Namespace) -> int:
    from .training.dataset import make_dataset
    if args.images < 1:
        raise CommandError("--images: at least 1")
    if not 0 <= args.val < 1:
        raise CommandError("--val: a fraction from 0 to below 1")
    if args.real_faces and not Path(args.real_faces).is_file():
        raise CommandError(f"--real-faces {args.real_faces}: no such file (make it with "
                           "python -m companion.training.harvest)")
    if not 0 <= args.real_share <= 1:
        raise CommandError("--real-share: a fraction from 0 to 1")
    if not 0 < args.under_hands <= 1:
        raise CommandError("--under-hands: a fraction above 0, up to 1")
    try:
        info = make_dataset(Path(args.out), args.images, args.seed, size=args.size,
                            val=args.val, workers=args.workers, real_faces=args.real_faces,
                            real_share=args.real_share, shown=args.under_hands)
    except (ValueError, KeyError, OSError) as exc:
        raise CommandError(f"--real-faces {args.real_faces}: {exc}") from None
    print(f"{info['images']} images ({info['val']} for validation), {info['boxes']} card outlines "
          f"-> {info['data']}; look at {info['contact_sheet']}")
    return 0


# ---------------------------------------------------------------- render-game
def cmd_render_game(args: argparse.Namespace) -> int:
    from .render.video import GameFilm
    rules = load_rules(args.rules)
    players = [p.strip() for p in args.players.split(",") if p.strip()]
    if len(players) < 2:
        raise CommandError("--players: at least two names")
    if args.seconds is not None and args.seconds <= 0:
        raise CommandError("--seconds: must be positive")
    if args.hands < 1:
        raise CommandError("--hands: at least one")
    film = GameFilm(rules, players, args.seed, seconds=args.seconds,
                    seats=_seats(args.seats, len(players)), hands=args.hands)
    try:
        info = film.write(Path(args.out))
    except OSError as exc:
        raise CommandError(str(exc)) from None
    hands = [x for x in film.timeline.log if x["type"] == "hand_over"]
    print(f"{info['frames']} frames, {info['flips']} flips, {len(hands)} hands played out "
          f"-> {info['video']}; ground truth -> {info['truth']}")
    return 0


# ---------------------------------------------------------------- detector
def _detector(args: argparse.Namespace, photo: bool = False, model: str | Path | None = None):
    from .deck.enrolled import DeckError
    from .detector.model import ModelError, load_detector
    try:
        return load_detector(model or args.model, args.imgsz, args.conf, args.reader,
                             photo=photo, deck=getattr(args, "deck", None),
                             veto=getattr(args, "veto", None))
    except (ModelError, DeckError) as exc:
        raise CommandError(str(exc)) from None


def cmd_detect(args: argparse.Namespace) -> int:
    import cv2
    det = _detector(args, photo=True)
    for path in args.images:
        img = cv2.imread(path)
        if img is None:
            err = "cannot read image (missing, not an image, or corrupt)"
            if args.json:
                print(json.dumps({"image": path, "error": err}), flush=True)
            else:
                print(f"{path}: error: {err}", flush=True)
            continue
        found = det(img)
        if args.json:
            print(json.dumps({"image": path, "cards": found.to_json()}), flush=True)
        else:
            cards = ", ".join(f"{n} {c:.2f}" for n, c in zip(found.names, found.confidence))
            print(f"{path}: {cards or 'no card'}", flush=True)
    return 0


def cmd_enrol(args: argparse.Namespace) -> int:
    from .deck.enrol import enrol_photos
    from .deck.enrolled import deck_path
    if args.variations < 1:
        raise CommandError("--variations: at least 1")
    out = deck_path(args.out, for_writing=True)
    if not out.parent.is_dir():
        raise CommandError(f"--out {args.out}: the folder {out.parent} does not exist")
    name = out.stem
    det = _detector(args, photo=True)
    if args.photos:
        try:
            deck, report = enrol_photos(args.photos, det, name, args.variations,
                                        trust_names=args.trust_names)
        except (FileNotFoundError, ValueError) as exc:
            raise CommandError(str(exc)) from None
    else:
        from .deck.stream import enrol_stream
        source = args.video if args.video else str(args.camera)
        speaker = _speaker(args.voice)
        try:
            deck, report = enrol_stream(source, _detector(args), det, name, args.variations,
                                        ask=not args.no_ask,
                                        say=speaker.say if speaker is not None else None)
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        finally:
            if speaker is not None:
                speaker.close()
    for line in report.lines():
        print(line)
    if deck is None:
        raise CommandError("no card could be enrolled; nothing written")
    try:
        deck.save(out)
    except OSError as exc:
        raise CommandError(f"{out}: {exc.strerror}") from None
    print(f"wrote {out}; read with it: --deck {args.out}")
    return 0 if report.complete else 1


def cmd_eval(args: argparse.Namespace) -> int:
    from .detector.model import CARD_FINDER, LIVE_FINDER
    from .training import evaluate as ev
    # Photos through the float finder, video frames through its int8 copy: as `detect`
    # and `watch` run them (or the finder given, for both).
    photo_model = Path(args.model) if args.model else CARD_FINDER
    live_model = Path(args.model) if args.model else LIVE_FINDER
    det = _detector(args, photo=True, model=photo_model)
    live = _detector(args, model=live_model)
    deck = det.reader.deck
    readers = (Path(det.reader.path).name if det.reader.path == live.reader.path else
               f"{Path(det.reader.path).name} for photos, {Path(live.reader.path).name} for video")
    print(f"== card finder + corner reader ({photo_model.name} for photos, {live_model.name} "
          f"for video frames; reader {readers}"
          + (f"; photos: middle reader {det.middle.path.name}, veto {det.veto} / suit "
             f"{det.suit_veto} / ace {det.ace_veto}"
             + (", court letters weighed" if det.court and det.middle.reads_letters else "")
             if det.middle is not None else "; no middle reader")
          + (f"; enrolled deck {deck.name}, {len(deck.cards)} cards" if deck else "") + ")")
    rows = []
    real = Path(args.real) if args.real else ev.REAL_DEFAULT
    if args.real == "off":
        pass
    elif not real.is_dir():
        print(f"real photos: {real} not found; skipped (they are not part of the project)")
    else:
        r = ev.eval_real(det, real, conf=det.conf)
        rows.append((f"real photos, one deck ({real.name})", f"{r['correct']}/{r['photos']} top-1"))
        for file, truth, got in r["misses"]:
            print(f"  miss {file}: {truth} read as {got}")
    decks = Path(args.realdecks) if args.realdecks else ev.REALDECKS_TEST
    # The webcam photos are made of the same decks unless told otherwise.
    webcam = Path(args.webcam) if args.webcam else decks
    no_webcam = args.webcam == "off" or (args.realdecks == "off" and not args.webcam)
    # Each set's folder and whether it is skipped; --webcam-small sets the small photos'
    # count a card.
    where = {"table": (decks, args.realdecks == "off"), "close": (webcam, no_webcam),
             "small": (webcam, no_webcam or not args.webcam_small)}
    for name, (times, size, seed) in ev.PHOTO_SETS.items():
        folder, skip = where[name]
        times = args.webcam_small if name == "small" else times
        small = name == "small"
        what = ("small webcam photos" if small else "webcam photos") if times else "real decks"
        if skip:
            continue
        if not folder.is_dir():
            print(f"{what}: {folder} not found; skipped (they are not part of the project)")
            continue
        r = ev.eval_realdecks(det, folder, conf=det.conf, webcam=times, seed=seed, size=size)
        n = max(r["cards"], 1)
        how = f", small ({100 * size[0]:.0f}-{100 * size[1]:.0f} % of the frame)" if small else ""
        label = (f"the same decks as a webcam over a table sees them{how}"
                 f" ({folder.parent.name}/{folder.name}, {r['cards']} photos)" if times else
                 f"real decks never trained on ({folder.parent.name}/{folder.name}), "
                 f"{r['cards']} cards")
        rows.append((label, f"right {r['right']} ({r['right'] / n:.1%}), wrong card "
                            f"{r['wrong']} ({r['wrong'] / n:.1%}), unclear {r['unclear']}; "
                            f"jokers named {r['jokers_named']}/{r['jokers']}"))
        if r["misreads"]:
            print(f"  {what}, wrong cards: "
                  + ", ".join(f"{a}->{b} x{k}" for a, b, k in r["misreads"]))
    if args.rendered:
        r = ev.eval_rendered(live, args.rendered, size=320)
        rows.append((f"held-out rendered piles ({r['images']} scenes), top card",
                     f"named {r['top_correct']}/{r['top_cards']} "
                     f"({r['top_correct'] / max(r['top_cards'], 1):.1%}); whole (>= 90 % in "
                     f"view) {r['top_whole_correct']}/{r['top_whole']} "
                     f"({r['top_whole_correct'] / max(r['top_whole'], 1):.1%}); misreads 6/9 "
                     f"{r['top_6_9']}, suit {r['top_suit']}, other {r['top_other']}; nothing "
                     f"read {r['top_missed']}"))
        low = sorted(r["top_recall"].items(), key=lambda kv: kv[1])[:5]
        print("  lowest per-class recall (top card): " + ", ".join(f"{k} {v:.2f}" for k, v in low))
        if r["top_misreads"]:
            print("  most common: " + ", ".join(f"{a}->{b} x{n}" for a, b, n in r["top_misreads"]))
    if args.timing:
        # The reader video runs (the frame's), and the photos' one where it is another.
        readers = {"video's reader": Path(live.reader.path)}
        if det.reader.path != live.reader.path:
            readers["photos' reader"] = Path(det.reader.path)
        for extra in args.compare_reader or []:
            readers[f"reader {Path(extra).name}"] = Path(extra)
        timed = {f"per 320 px frame, {live_model.name} + reader": live}
        if live.middle is not None:     # the middle reader's share, timed in the same run
            import copy
            bare = copy.copy(live)
            bare.middle = None
            timed["the same without the middle reader"] = bare
        # ...and the finder's own share (its session, letterbox and box decoding): what
        # is left for the readers within a frame's budget.
        timed[f"the finder alone ({live_model.name})"] = live.finder
        t = ev.time_detectors(timed, 320, readers=readers)
        rows += [(k, f"{v:.1f} ms (median of 100, ONNX Runtime, this machine)")
                 for k, v in t.items()]
    width = max((len(a) for a, _ in rows), default=0)
    for a, b in rows:
        print(f"  {a:<{width}}  {b}")
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    from .training.train_finder import train
    data = Path(args.data)
    if not args.resume:
        yaml = data / "data.yaml" if data.is_dir() else data
        if not yaml.is_file():
            raise CommandError(f"{yaml}: no data.yaml (make one with `companion dataset`)")
        data = yaml
    try:
        best = train(str(data), args.epochs, args.imgsz, out=args.out, batch=args.batch,
                     resume=args.resume, model=args.model, lr0=args.lr0,
                     warmup_epochs=args.warmup_epochs)
    except FileNotFoundError as exc:
        raise CommandError(str(exc)) from None
    print(f"best weights: {best}")
    if args.export:
        from .training.export import export_onnx
        onnx = export_onnx(best, best.with_suffix('.onnx'), args.imgsz)
        print(f"exported: {onnx}")
        if args.int8:
            from .detector.detections import ModelError
            from .training.quantize import quantize
            try:
                print(f"int8 copy: {quantize(onnx, onnx.with_name(onnx.stem + '-int8.onnx'))}")
            except ModelError as exc:
                raise CommandError(f"{onnx}: {exc}") from None
    return 0


# ---------------------------------------------------------------- pad
def cmd_pad_sim(args: argparse.Namespace) -> int:
    from .pad.tools import run_pad_sim
    if args.every <= 0:
        raise CommandError("--every: must be positive")
    if args.firmware is not None:
        from .pad.tools import run_firmware_sim
        try:
            return run_firmware_sim(args.firmware or None, args.every, args.seconds)
        except (FileNotFoundError, RuntimeError) as exc:
            raise CommandError(str(exc)) from None
    return run_pad_sim(args.transport, args.port, args.zones, args.every, args.seconds)


def cmd_pad_test(args: argparse.Namespace) -> int:
    from .pad.tools import run_pad_test
    return run_pad_test(args.port, args.seconds)


# ---------------------------------------------------------------- practice
def cmd_practice(args: argparse.Namespace) -> int:
    from .live.runner import has_display
    from .practice.tools import run_practice
    rules = load_rules(args.rules)
    players = _players(args.players) if args.players else [args.player]
    if args.minutes <= 0 or not 0.3 <= args.pace <= 5:
        raise CommandError("--minutes must be positive and --pace between 0.3 and 5 seconds")
    if not has_display():
        raise CommandError("practice shows the cards in a window: no display found "
                           "(set DISPLAY, or run it on the table's screen)")
    return run_practice(rules, players, args.pad, args.keyboard, args.minutes, args.pace,
                        args.db, args.calibrate, args.light_zone, _zones(args.pad_zones))


def cmd_stats(args: argparse.Namespace) -> int:
    from .practice.tools import run_stats
    return run_stats(args.player, args.out, args.db)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description="The ratscrew table companion: referee, card detector and slap pad.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name: str, func: Callable[[argparse.Namespace], int], help: str,
            description: str | None = None) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help, description=description or help)
        p.set_defaults(func=func)
        return p

    def model_args(p: argparse.ArgumentParser, photo: bool, deck: bool = True) -> None:
        p.add_argument("--model", default=None, metavar="PATH",
                       help="card finder (.onnx; default models/card_finder.onnx for photos, "
                            "its int8 copy for video)")
        p.add_argument("--conf", type=float, default=None,
                       help="how sure a corner's reading must be to name a card (default "
                            "0.45 for photos, 0.25 for video, where the flip tracker asks 0.55)")
        p.add_argument("--imgsz", type=int, default=None,
                       help="finder input size in pixels (default: the size it was trained for)")
        p.add_argument("--reader", default=None, metavar="PATH",
                       help="corner reader (.onnx; default corner_reader.onnx beside the "
                            "finder, else the shipped one)")
        p.add_argument("--veto", type=float, default=None, metavar="P",
                       help="a named card is 'unclear' when the middle reader, counting "
                            "its pips, gives its rank less than P (default 0.03, with its "
                            "suit under 0.01 a veto too; 0: the middle is not read, so it "
                            "neither vetoes nor confirms a card)")
        if deck:
            deck_arg(p)

    def deck_arg(p: argparse.ArgumentParser) -> None:
        p.add_argument("--deck", default=None, metavar="DECK",
                       help="read the cards of this enrolled deck (a file, or a name from "
                            "`companion enrol --out NAME`); other cards read as no card")

    p = add("referee", cmd_referee, "referee a game from JSON Lines events",
            "Read JSON Lines events (start, flip, slap, collect, state) and write the "
            "referee's announcements as JSON Lines. Bad lines are announced as 'rejected', "
            "explained on stderr with their line number, and skipped.")
    _rules_arg(p)
    p.add_argument("--events", default="-", metavar="FILE|-",
                   help="JSON Lines events to read (default: - for standard input)")

    p = add("simulate", cmd_simulate, "self-play with bot players and print statistics",
            "Play hands between bots whose reaction times are log-normal around their own "
            "medians (330-620 ms), with misses and false alarms; print hand length, slaps, "
            "wrong slaps and challenges per hand.")
    _rules_arg(p)
    p.add_argument("--players", type=int, default=4, help="players at the table (default 4)")
    p.add_argument("--hands", type=int, default=100, help="hands to play (default 100)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--flip-ms", type=float, default=850.0,
                   help="mean time between cards in ms (default 850)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")

    p = add("demo", cmd_demo, "the companion refereeing a rendered table (no camera needed)",
            "Render a short self-played game as the table camera would see it, read every "
            "card with the shipped detector, referee it and call it out. Shows the table "
            "window where a display exists, text otherwise.")
    _rules_arg(p, "challenge")
    p.add_argument("--seed", type=int, default=7, help="which game and table (default 7)")
    p.add_argument("--players", default="Ada,Ben,Cho", help="comma-separated names")
    p.add_argument("--seconds", type=float, default=40.0, help="seconds of play (default 40)")
    p.add_argument("--verbosity", type=int, choices=(1, 2, 3), default=2,
                   help="1 patterns and challenges, 2 plus every card, 3 plus turns (default 2)")
    p.add_argument("--window", choices=("auto", "on", "off"), default="auto",
                   help="the table window (default: when a display exists)")
    p.add_argument("--model", default=None,
                   help="detector model (default: the card finder, models/card_finder.onnx)")
    deck_arg(p)
    p.add_argument("--voice", choices=("on", "off"), default="on",
                   help="speak the calls where a sound device exists (default on)")

    p = add("watch", cmd_watch, "referee a recorded video",
            "Run the live pipeline on a video file as fast as it goes, printing flips and "
            "calls (JSON Lines with --json).")
    p.add_argument("video")
    p.add_argument("--players", default="Ada,Ben,Cho", help="comma-separated names")
    _rules_arg(p, "challenge", resumable=True)
    _resume_arg(p, "of this video: play goes on after the last frame it recorded")
    p.add_argument("--json", action="store_true", help="JSON Lines output")
    p.add_argument("--slaps", default=None, metavar="FILE",
                   help="slaps recorded with the video (a pad log or a rendered game's truth)")
    p.add_argument("--camera-slaps", choices=("auto", "on", "off"), default="auto",
                   help="see slaps in the video: hands landing on the pile (default: when "
                        "no --slaps file is given)")
    seats_arg(p)
    p.add_argument("--no-gate", action="store_true", help="run the detector on every frame")
    p.add_argument("--realtime", action="store_true",
                   help="play the video at its own frame rate, dropping frames when "
                        "processing is slower, as a camera would")
    p.add_argument("--roi", default=None, metavar="X,Y,W,H", help="pile region in pixels")
    p.add_argument("--log", default=None, metavar="FILE", help="write a session log")
    model_args(p, False)

    p = add("run", cmd_run, "referee a live game from a camera",
            "The companion at the table: camera, detector, referee, calls; slaps seen by the "
            "camera, or from the pad (--pad), or the keyboard (keys 1-9 in the window; when "
            "the referee asks who took a pile, the winner's key answers).")
    p.add_argument("--camera", default="0", help="camera index, video file or stream URL (0)")
    p.add_argument("--players", default="Ada,Ben,Cho", help="comma-separated names")
    _rules_arg(p, "challenge", resumable=True)
    _resume_arg(p, "after a crash: the table plays on where it was")
    p.add_argument("--pad", default=None, metavar="PORT", help="slap pad port or pyserial URL")
    p.add_argument("--pad-zones", default=None, metavar="Z:S,...",
                   help="which seat each pad zone is, e.g. 0:2,1:0,2:1 (default: zone = seat)")
    p.add_argument("--camera-slaps", choices=("auto", "on", "off"), default="auto",
                   help="see slaps with the camera: they referee where there is no pad, and "
                        "are shown beside the pad's where there is one (default auto: on)")
    seats_arg(p)
    p.add_argument("--window", choices=("auto", "on", "off"), default="auto")
    p.add_argument("--high-contrast", action="store_true", help="high-contrast display")
    p.add_argument("--voice", choices=("on", "off"), default="on",
                   help="speak the calls where a sound device exists (default on)")
    p.add_argument("--web", action="store_true", help="serve the table page for a tablet or phone")
    p.add_argument("--host", default="127.0.0.1",
                   help="address for --web (default 127.0.0.1; 0.0.0.0 for the local network)")
    p.add_argument("--port", type=int, default=8765, help="port for --web (default 8765)")
    p.add_argument("--roi", default=None, metavar="X,Y,W,H", help="pile region in pixels")
    p.add_argument("--log", default=None, metavar="FILE",
                   help="session log (default sessions/session-DATE-TIME.jsonl)")
    model_args(p, False)

    p = add("replay", cmd_replay, "re-run a session log through the referee")
    p.add_argument("log")
    p.add_argument("--json", action="store_true", help="JSON Lines output")

    p = add("dataset", cmd_dataset, "render a labelled training set of pile scenes",
            "Render pile scenes with an oriented box (ultralytics OBB) per whole face-up card, "
            "plus data.yaml and a contact sheet. Deterministic from the seed.")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--images", type=int, default=2000, help="how many images (default 2000)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument("--size", type=int, default=320, help="image side in pixels (default 320)")
    p.add_argument("--val", type=float, default=0.1, help="share kept for validation (0.1)")
    p.add_argument("--workers", type=int, default=None, help="processes (default: all cores)")
    p.add_argument("--real-faces", default=None, metavar="NPZ",
                   help="harvested real cards (python -m companion.training.harvest): some "
                        "scenes show real faces of many designs instead of a rendered deck")
    p.add_argument("--real-share", type=float, default=0.5,
                   help="with --real-faces: the share of scenes with real faces (0.5)")
    p.add_argument("--under-hands", type=float, default=0.9, metavar="SHARE",
                   help="a card no other card lies over is outlined while this share of it "
                        "shows with hands counted (default 0.9: hands hide it like cards)")
    p = add("render-game", cmd_render_game, "film a whole self-played game as the camera sees it",
            "Render a game of referee self-play at 30 fps, 1280x720: cards flipped onto the "
            "pile, slaps, pile collections. Writes FILE.mp4 and the ground truth FILE.jsonl "
            "(a referee event stream with frame numbers).")
    p.add_argument("--out", required=True, metavar="FILE.mp4", help="video to write")
    p.add_argument("--seed", type=int, default=0, help="game, table and deck (default 0)")
    _rules_arg(p, "challenge")
    p.add_argument("--players", default="Ada,Ben,Cho", help="comma-separated names")
    p.add_argument("--seconds", type=float, default=None,
                   help="stop after this many seconds of video (default: the whole hand)")
    p.add_argument("--hands", type=int, default=1,
                   help="film this many hands of the match, each dealt by the next seat "
                        "(default 1)")
    seats_arg(p)
    p = add("detect", cmd_detect, "name the cards in photos",
            "Print the cards found in each image; with --json one object per image per line: "
            '{"image", "cards": [{"card", "confidence", "box"}]} sorted by confidence.')
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument("--json", action="store_true", help="JSON Lines output")
    model_args(p, True)

    p = add("eval", cmd_eval, "measure the detector: real photos, real decks, rendered set, speed")
    p.add_argument("--real", default=None, metavar="DIR|off",
                   help="folder of real photos named by card (default ../shared/realcards)")
    p.add_argument("--realdecks", default=None, metavar="DIR|off",
                   help="real deck images in <card>/ folders, never trained on (default "
                        "../shared/realdecks/test)")
    p.add_argument("--webcam", default=None, metavar="DIR|off",
                   help="real deck images (default: --realdecks's folder, else "
                        "../shared/realdecks/test), each photographed twice as a webcam over "
                        "a plain table would (fixed seed): any angle, smaller, blur, noise")
    p.add_argument("--webcam-small", type=int, default=1, metavar="N",
                   help="...and N times more with the card small in the frame (20-32 %% of "
                        "its height, as a webcam above a pile sees it; default 1, 0 to skip)")
    p.add_argument("--rendered", type=int, default=300, metavar="N",
                   help="held-out rendered scenes to score (default 300; 0 to skip)")
    p.add_argument("--timing", action="store_true", help="also time inference (ONNX Runtime)")
    p.add_argument("--compare-reader", nargs="*", default=None, metavar="PATH",
                   help="with --timing: other corner reader files to time beside this one")
    model_args(p, True)

    p = add("enrol", cmd_enrol, "enrol your own deck, so every card of it reads exactly",
            "Photos named by card (7h.jpg, 10s.png, Qd_2.jpg for a second photo; RJ/BJ for "
            "jokers), one face-up card each, on any table; or the whole deck dealt onto the "
            "pile before a camera. Writes DECK and says what was enrolled and what is "
            "missing. Exit 0 when all 52 cards are enrolled, 1 otherwise (the file is still "
            "written and reads the cards it holds).")
    p.add_argument("--out", required=True, metavar="DECK",
                   help="deck file to write; a bare name (club) is kept in your data "
                        "directory and found by --deck NAME")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--photos", metavar="DIR", help="folder of photos named by card")
    src.add_argument("--camera", metavar="N", help="camera index or stream URL: deal the deck")
    src.add_argument("--video", metavar="FILE", help="a recorded video of the deck being dealt")
    p.add_argument("--trust-names", action="store_true",
                   help="enrol a photo even when it reads strongly as another card")
    p.add_argument("--variations", type=int, default=24,
                   help="cuts of each corner of each card (default 24)")
    p.add_argument("--no-ask", action="store_true",
                   help="camera/video: skip cards the reader is unsure of instead of asking")
    p.add_argument("--voice", choices=("on", "off"), default="on",
                   help="camera/video: speak the questions where a sound device exists")
    model_args(p, True, deck=False)      # a deck is what this command makes

    p = add("train", cmd_train, "train the card detector (ultralytics, offline)")
    p.add_argument("--data", required=False, default="data/cards", help="dataset folder or data.yaml")
    p.add_argument("--epochs", type=int, default=14)
    p.add_argument("--imgsz", type=int, default=320)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--out", default="runs/cards", help="run folder (default runs/cards)")
    p.add_argument("--resume", action="store_true", help="continue from OUT/weights/last.pt")
    p.add_argument("--model", default="yolo11n.yaml",
                   help="architecture .yaml, or a .pt to fine-tune (default yolo11n.yaml; "
                        "yolo11n-obb.yaml for the card finder)")
    p.add_argument("--lr0", type=float, default=None,
                   help="initial learning rate (default 0.002)")
    p.add_argument("--warmup-epochs", type=float, default=None,
                   help="warm-up length in epochs (default 1)")
    p.add_argument("--export", action="store_true", help="export best.pt to ONNX afterwards")
    p.add_argument("--int8", action="store_true",
                   help="with --export: also write an int8 copy with a float head (for video)")
    p = add("pad-sim", cmd_pad_sim, "a simulated slap pad speaking the real protocol",
            "Serve the pad protocol over TCP (connect with socket://127.0.0.1:PORT) or a "
            "pseudo-terminal, with random slaps, for trying the companion without hardware.")
    p.add_argument("--transport", choices=("socket", "pty"), default="socket")
    p.add_argument("--port", type=int, default=7777, help="TCP port (socket transport; 7777)")
    p.add_argument("--zones", type=int, default=4, help="zones (default 4)")
    p.add_argument("--every", type=float, default=2.0, help="seconds between slaps (2)")
    p.add_argument("--seconds", type=float, default=None, help="stop after this long")
    p.add_argument("--firmware", nargs="?", const="", default=None, metavar="ELF",
                   help="run the pad's real firmware in simavr behind a pseudo-terminal "
                        "(default ELF: firmware/build/uno, from firmware/build.sh)")

    p = add("pad-test", cmd_pad_test, "live view of a pad's zones and onsets, for building one")
    p.add_argument("port", nargs="?", default=None,
                   help="serial port or pyserial URL (default: the first pad found)")
    p.add_argument("--seconds", type=float, default=None, help="stop after this long")
    p = add("practice", cmd_practice, "train your slap against a virtual pile",
            "Cards appear one by one at a pace that adapts to you; real patterns of the rules "
            "come up at random with near misses mixed in. Slap the pad (or a key). Every trial "
            "goes into your history.")
    src = p.add_mutually_exclusive_group()
    src.add_argument("--pad", default=None, metavar="PORT", help="slap pad port or pyserial URL")
    src.add_argument("--keyboard", action="store_true", help="slap with the space bar / 1-9")
    _rules_arg(p)
    p.add_argument("--minutes", type=float, default=3.0, help="session length (default 3)")
    p.add_argument("--player", default="player", help="your name in the history")
    p.add_argument("--players", default=None, help="several seats on one pad: Ada,Ben")
    p.add_argument("--pace", type=float, default=1.4, help="seconds a card to start (1.4)")
    p.add_argument("--db", default=None, help="history file (default: your data directory)")
    p.add_argument("--calibrate", action="store_true",
                   help="measure the display latency with a light sensor on a pad zone")
    p.add_argument("--light-zone", type=int, default=3, help="the light sensor's zone (3)")
    p.add_argument("--pad-zones", default=None, metavar="Z:S,...",
                   help="which seat each pad zone is (default: zone = seat)")

    p = add("stats", cmd_stats, "your practice history: summary and plots")
    p.add_argument("--player", default=None, help="one player (default: everyone)")
    p.add_argument("--out", default="practice-stats", help="folder for the PNG plots")
    p.add_argument("--db", default=None, help="history file (default: your data directory)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.func(args) or 0
    except (CommandError, RulesError) as exc:
        print(f"companion {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:   # e.g. `companion referee | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
