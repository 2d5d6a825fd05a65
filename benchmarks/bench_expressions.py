"""Throughput of the expression language on the seed flow's expressions.

Run: ``python benchmarks/bench_expressions.py``. Prints one row per workload with evaluations
per second (best of five rounds). The interpreter's target is 20,000 state transitions/s; a
transition of the seed flow evaluates at most a handful of these expressions.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

from deployer.fdl.expressions.constructors import build_value, compile_template
from deployer.fdl.expressions.evaluator import ExpressionScope, evaluate
from deployer.fdl.expressions.parser import parse_expression

SCOPE = ExpressionScope(
    input={"job_id": "j-1", "job_status": "running", "try_count": 3, "Body": {"job_id": "j-1"}},
    output={"Body": {"job_id": "j-1", "job_status": "success", "try_count": 4}},
    context={"Execution": {"Name": "e", "Input": {"delay": 30}}, "Current": {"Name": "Poll"}},
    global_vars={},
)
PARAMETERS = {
    "resourceArn": "acs:fc:cn-hangzhou:123:functions/GetJobStatus",
    "invocationType": "Sync",
    "body": {
        "job_id.$": "$Input.job_id",
        "try_count.$": "$Input.try_count",
        "delay.$": "$Context.Execution.Input.delay",
    },
}
EXPRESSIONS = [
    '$Input.job_status== "success"',
    "$Input.try_count > 3",
    "$Context.Execution.Input.delay",
    "jsonMerge($Input, $Output.Body)",
    '$Input.try_count >= 1 && "job_id" in $Input || false',
    'format("{}-{}", $Input.job_id, intAdd($Input.try_count, 1))',
]


def _rate(work: Callable[[], object], count: int = 20_000) -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(count):
            work()
        best = min(best, time.perf_counter() - start)
    return count / best


def main() -> None:
    rows: list[tuple[str, float]] = []
    for text in EXPRESSIONS:
        expr = parse_expression(text)
        rows.append((f"evaluate {text}", _rate(lambda expr=expr: evaluate(expr, SCOPE))))
    rows.append(
        (
            "parse (cached) + evaluate seed condition",
            _rate(lambda: evaluate(parse_expression('$Input.job_status== "success"'), SCOPE)),
        )
    )
    rows.append(
        ("build_value seed Parameters (3 keys)", _rate(lambda: build_value(PARAMETERS, SCOPE)))
    )
    compiled = compile_template(PARAMETERS)
    rows.append(("compiled template seed Parameters", _rate(lambda: compiled.build(SCOPE))))
    rows.append(
        (
            "build_value {$: jsonMerge(...)}",
            _rate(lambda: build_value({"$": "jsonMerge($Input, $Output.Body)"}, SCOPE)),
        )
    )
    parse_expression.cache_clear()
    texts = [f'$Input.a{i} + {i} > 3 && $Input.b == "x"' for i in range(5_000)]
    start = time.perf_counter()
    for text in texts:
        parse_expression(text)
    rows.append(("parse (uncached, 40 chars)", len(texts) / (time.perf_counter() - start)))
    width = max(len(name) for name, _ in rows)
    print(f"{'workload':<{width}}  {'ops/s':>12}")
    for name, rate in rows:
        print(f"{name:<{width}}  {rate:>12,.0f}")


if __name__ == "__main__":
    if {"-h", "--help"} & set(sys.argv):  # the docstring is the help
        print(__doc__)
        raise SystemExit(0)
    main()
