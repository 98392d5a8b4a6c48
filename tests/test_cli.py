"""The command-line contract: `companion referee`, `simulate`, `demo`."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from companion.cli import main


def run(args, stdin=""):
    return subprocess.run([sys.executable, "-m", "companion", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


def lines(stdout):
    return [json.loads(x) for x in stdout.splitlines() if x.strip()]


def test_referee_contract_with_a_bad_line_in_the_middle():
    events = "\n".join([
        '{"type":"start","players":["Ada","Ben","Cho"],"stacks":[5,5,5]}',
        '{"type":"flip","card":"6h","t":1.0}',
        '{"type":"flip","card":"Qs","t":2.0}',
        '{"type":"flip","card":"Zz"}',                 # unknown card
        'not json',
        '{"type":"flip","card":"6H","t":3.0}',           # duplicate
        '{"type":"flip","card":"6c","t":3.5}',
        '{"type":"slap","seats":[2,0],"t":3.9}',
        '{"type":"slap","seat":9}',                      # unknown seat
        '{"type":"state"}',
    ])
    res = run(["referee", "--rules", "base"], events)
    assert res.returncode == 0
    out = lines(res.stdout)
    rejected = [a for a in out if a["type"] == "rejected"]
    assert [r["line"] for r in rejected] == [4, 5, 6, 9]
    err = res.stderr.splitlines()
    assert len(err) == 4 and err[0].startswith("<stdin>:4: rejected: unknown card")
    assert err[1].startswith("<stdin>:5: rejected: bad JSON")
    assert "duplicate" in err[2] and "unknown seat" in err[3]
    pattern = next(a for a in out if a["type"] == "pattern")
    assert pattern["patterns"] == ["sandwich"] and pattern["t"] == 3.5
    award = next(a for a in out if a["type"] == "award")
    assert award == {"type": "award", "seat": 2, "reason": "slap", "cards": 3,
                     "patterns": ["sandwich"], "top": ["6h", "Qs", "6c"], "late": [0],
                     "t": 3.9}
    states = [a for a in out if a["type"] == "state"]
    assert len(states) == 2                           # on the event and at end of input
    assert states[-1]["stacks"] == [4, 4, 7] and states[-1]["pile"] == 0
    assert states[-1]["turn"] == 0                    # left of Cho, who played the 6c


def test_referee_reads_a_file_and_reports_a_missing_one(tmp_path):
    f = tmp_path / "ev.jsonl"
    f.write_text('{"type":"start","players":["A","B"]}\n{"type":"flip","card":"Ts"}\n')
    res = run(["referee", "--rules", "intro", "--events", str(f)])
    out = lines(res.stdout)
    assert out[0]["type"] == "start" and out[0]["stacks"] == [26, 26]
    assert any(a["type"] == "flip" and a["card"] == "10s" for a in out)
    res = run(["referee", "--events", str(tmp_path / "missing.jsonl")])
    assert res.returncode == 2 and "missing.jsonl" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


def test_referee_bad_rules_file_is_one_clear_line(tmp_path):
    f = tmp_path / "r.toml"
    f.write_text("penalty = 'lots'\n")
    res = run(["referee", "--rules", str(f)], "")
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "'penalty'" in res.stderr


def test_simulate_prints_a_summary_table(capsys):
    assert main(["simulate", "--players", "3", "--hands", "5", "--rules", "challenge",
                 "--seed", "4"]) == 0
    out = capsys.readouterr().out
    for row in ("flips", "slaps", "wrong slaps", "challenges"):
        assert row in out
    assert main(["simulate", "--players", "3", "--hands", "5", "--rules", "challenge",
                 "--seed", "4", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["hands"] == 5 and summary["challenges"]["mean"] > 0


def test_simulate_is_deterministic_by_seed(capsys):
    main(["simulate", "--hands", "3", "--seed", "9", "--json"])
    a = capsys.readouterr().out
    main(["simulate", "--hands", "3", "--seed", "9", "--json"])
    assert capsys.readouterr().out == a


@pytest.mark.parametrize("cmd", ["referee", "simulate", "demo", "watch", "run", "replay", "dataset",
                                 "render-game", "detect", "eval", "enrol", "train", "pad-sim",
                                 "pad-test", "practice", "stats"])
def test_every_command_has_help(cmd):
    res = run([cmd, "--help"])
    assert res.returncode == 0 and "usage: companion" in res.stdout


def test_demo_referees_a_rendered_table_with_the_shipped_model(capsys):
    assert main(["demo", "--seconds", "12", "--seed", "3", "--window", "off",
                 "--voice", "off"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Demo: a rendered table")
    summary = out[-1]
    called, truth = (int(x) for x in re.findall(r"(\d+) flips called \((\d+) in", summary)[0])
    assert truth >= 8 and called == truth       # the README: the demo calls every card
    assert any(line.endswith("of hearts.") or line.endswith("of spades.") or
               line.endswith("of clubs.") or line.endswith("of diamonds.") for line in out)
