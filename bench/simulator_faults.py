"""Recall and precision of the deterministic simulator checks, per fault kind (issue 35).

A synthetic set of retail conversations, generated from a seed: clean ones, and ones with one
seeded simulator fault of each kind (several variants a kind). The clean conversations carry
the near-misses the checks must not flag: the user repeating an order id the agent said,
prices, dates and quantities, a goal item stated in any of its phrases, a user asking for
help ("can you help me"). Each conversation goes through ``ek.agents.simulate.check_simulator``
with its scenario; a kind found that was not seeded is a false positive of that kind.

Run: ``python bench/simulator_faults.py [--n 4000] [--seed 0]``; prints a markdown table.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from typing import Any

from ek.agents.simulate import SIMULATOR_FAULTS, STOP, Scenario, check_simulator

GOALS = {
    "refund": ["refund", "money back"],
    "exchange": ["exchange", "swap it"],
    "address": ["new address", "change my address"],
    "cancel": ["cancel"],
}
NAMES = ["Ana Silva", "Yusuf Rossi", "Mei Chen", "Omar Haddad", "Lena Novak", "Raj Patel"]
PATTERNS = {
    "order_id": r"#W\d{7}",
    "email": r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "zip": r"(?<!\d)\d{5}(?!\d)",
}


def _order(rng: random.Random) -> str:
    return f"#W{rng.randrange(10**6, 10**7)}"


def _scenario(rng: random.Random) -> tuple[Scenario, list[str]]:
    name = rng.choice(NAMES)
    goals = rng.sample(sorted(GOALS), 2)
    facts = {
        "order_id": _order(rng),
        "email": name.split()[0].lower() + "@example.com",
        "pin": str(rng.randrange(1000, 10000)),
    }
    sc = Scenario(
        persona=name,
        facts=facts,
        disclose=["order_id", "email"],
        patterns=PATTERNS,
        withheld=["store credit"],
        goals={g: GOALS[g] for g in goals},
        max_turns=8,
        max_chars=400,
    )
    return sc, goals


def _clean(rng: random.Random, sc: Scenario, goals: list[str]) -> list[dict[str, Any]]:
    f = sc.facts
    other = _order(rng)
    g1, g2 = (rng.choice(GOALS[g]) for g in goals)
    msgs: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": rng.choice(
                [
                    f"Hi, I'd like a {g1} for order {f['order_id']}.",
                    f"Hello! {g1} please, order {f['order_id']}.",
                ]
            ),
        },
        {
            "role": "assistant",
            "content": "Could you confirm your email? Can I help with anything else too?",
        },
        {
            "role": "user",
            "content": rng.choice(
                [f"It's {f['email']}.", f"Sure, {f['email']}. Can you help me quickly?"]
            ),
        },
        {
            "role": "assistant",
            "content": f"I also see {other} placed on 2024-05-01 for $25.00 (3 items).",
        },
        {
            "role": "user",
            "content": rng.choice(
                [f"Leave {other} alone. I also want to {g2}.", f"Not {other}. And {g2}, please."]
            ),
        },
        {"role": "assistant", "content": f"Done: {g1} of $54.20 issued within 5 days; {g2} noted."},
        {"role": "user", "content": rng.choice([f"Great, thanks! {STOP}", STOP]), "stop": True},
    ]
    return msgs


def _inject(rng: random.Random, kind: str, sc: Scenario, msgs: list[dict[str, Any]]) -> None:
    f, at = sc.facts, rng.choice([2, 4])
    m = msgs[at]
    if kind == "disclosed":
        m["content"] += rng.choice(
            [
                f" My zip is {rng.randrange(10000, 100000)}.",
                f" My PIN is {f['pin']}.",
                " Just give me store credit.",
            ]
        )
    elif kind == "contradicted":
        m["content"] += rng.choice(
            [
                f" Actually the order is {_order(rng)}.",
                f" Use {rng.choice(NAMES).split()[1].lower()}@mail.org instead.",
            ]
        )
    elif kind == "stopped_early":
        msgs[4]["content"] = "Okay."
        del msgs[5:]
        msgs.append({"role": "user", "content": f"Bye {STOP}", "stop": True})
    elif kind == "broke_role":
        variant = rng.randrange(3)
        if variant == 0:
            m["content"] = "Agent: I have processed the request for you. " + m["content"]
        elif variant == 1:
            m["content"] += " Thanks! How can I help you further today?"
        else:
            m["attempted_calls"] = ["get_order_details(order_id)"]
    else:  # over_limit
        variant = rng.randrange(3)
        if variant == 0:
            m["content"] += " " + "I really need this sorted. " * 20
        elif variant == 1:
            msgs.append({"role": "user", "content": "Oh and one more thing."})
        else:
            msgs[-1]["content"] = f"Thanks {STOP} wait, also check the other one"


def measure(n: int, seed: int) -> dict[str, Counter[str]]:
    rng = random.Random(seed)
    tally: dict[str, Counter[str]] = {k: Counter() for k in SIMULATOR_FAULTS}
    for i in range(n):
        sc, goals = _scenario(rng)
        msgs = _clean(rng, sc, goals)
        seeded = (
            None
            if i % (len(SIMULATOR_FAULTS) + 1) == 0
            else SIMULATOR_FAULTS[i % (len(SIMULATOR_FAULTS) + 1) - 1]
        )
        if seeded is not None:
            _inject(rng, seeded, sc, msgs)
        found = {fault.kind for fault in check_simulator(msgs, sc)}
        for kind in SIMULATOR_FAULTS:
            if kind == seeded:
                tally[kind]["tp" if kind in found else "fn"] += 1
            elif kind in found:
                tally[kind]["fp"] += 1
        tally["disclosed"]["clean"] += seeded is None
        tally["disclosed"]["clean_flagged"] += seeded is None and bool(found)
    return tally


PARAPHRASES = {
    "refund": "I'd like the funds returned",
    "exchange": "I want a different size instead",
    "address": "please ship to my office from now on",
    "cancel": "I no longer want it at all",
}


def limits(n: int, seed: int) -> tuple[float, float]:
    """The rules' known blind spots, measured: (the share of clean conversations whose second
    goal is stated in words outside its phrases that are flagged ``stopped_early``, the share
    of invented order ids said in words, not digits, that are found)."""
    rng = random.Random(seed)
    flagged = found = 0
    for _ in range(n):
        sc, goals = _scenario(rng)
        msgs = _clean(rng, sc, goals)
        msgs[4]["content"] = f"Also, {PARAPHRASES[goals[1]]}."
        flagged += any(f.kind == "stopped_early" for f in check_simulator(msgs, sc))
        msgs = _clean(rng, sc, goals)
        msgs[2]["content"] += " Oh, and the order is W one two three four five six seven."
        found += bool(check_simulator(msgs, sc))
    return flagged / n, found / n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4200)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    tally = measure(args.n, args.seed)
    print(
        f"{args.n} conversations, seed {args.seed}: "
        f"{tally['disclosed']['clean']} clean ({tally['disclosed']['clean_flagged']} flagged)\n"
    )
    print("| fault kind | seeded | found | missed | false alarms | recall | precision |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind in SIMULATOR_FAULTS:
        t = tally[kind]
        tp, fn, fp = t["tp"], t["fn"], t["fp"]
        recall = tp / (tp + fn) if tp + fn else float("nan")
        precision = tp / (tp + fp) if tp + fp else float("nan")
        print(f"| {kind} | {tp + fn} | {tp} | {fn} | {fp} | {recall:.3f} | {precision:.3f} |")
    flagged, found = limits(500, args.seed)
    print(
        f"\nlimits (500 each): a goal stated outside its phrases flagged stopped_early "
        f"{flagged:.3f}; an invented id spelled out in words found {found:.3f}"
    )


if __name__ == "__main__":
    main()
