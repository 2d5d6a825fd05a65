"""How ``deploy plan``, ``deploy up`` and ``deploy down`` print their results (text; JSON is
the results' own ``to_json``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from deployer.cli.render import view
from deployer.config.specs import Undeployed
from deployer.core.apply import ResourceResult
from deployer.core.deploy import DownResult, PlanSummary, UpSummary
from deployer.core.plan import Action, ActionKind

if TYPE_CHECKING:
    from rich.text import Text

SYMBOLS = {ActionKind.CREATE: ("+", "green"), ActionKind.UPDATE: ("~", "yellow"),
           ActionKind.NO_CHANGE: ("=", "dim"), ActionKind.DELETE: ("-", "red")}
DONE = {ActionKind.CREATE: "created", ActionKind.UPDATE: "updated",
        ActionKind.NO_CHANGE: "unchanged", ActionKind.DELETE: "deleted"}


def _details(text: Text, item: Action | ResourceResult) -> None:
    """The settings (old -> new) and the document diff under a resource line."""
    for setting in item.settings:
        if setting.name != "code" or setting.old is not None:
            text.append(f"      {setting.text()}\n")
    for note in getattr(item, "notes", ()):
        style = "bold red" if note.startswith("still invoked") else "dim"
        text.append(f"      {note}\n", style=style)
    owner = getattr(item, "owner", "")
    if owner:
        text.append(f"      belongs to project {owner}: `deploy up --force` takes it over\n",
                    style="bold red")
    for line in item.diff.splitlines():
        style = "green" if line.startswith("+") else "red" if line.startswith("-") else \
            "cyan" if line.startswith("@@") else "dim"
        text.append(f"      {line}\n", style=style)


def action_lines(items: Sequence[Action | ResourceResult], *, done: bool,
                 details: bool) -> Text:
    from rich.text import Text  # text output only: JSON needs no rich

    text = Text()
    width = max((len(i.name) for i in items), default=0)
    kind_width = max((len(i.resource.value) for i in items), default=8) + 1
    for item in items:
        kind = item.kind if isinstance(item, Action) else item.action
        symbol, style = SYMBOLS[kind]
        label = DONE[kind] if done else kind.value
        outcome = getattr(item, "outcome", "")
        if outcome and outcome != "deleted":
            label, style = outcome.split(":")[0], "yellow"
        text.append(f"  {symbol} {label:<10}", style=style)
        detail = outcome if outcome.startswith("kept") else (item.url or item.arn)
        line = f"{item.resource.value:<{kind_width}}{item.name:<{width + 2}}{detail}"
        text.append(line.rstrip() + "\n")
        if details and (kind is not ActionKind.NO_CHANGE or getattr(item, "owner", "")):
            _details(text, item)
    return text


def not_deployed_lines(items: Sequence[Undeployed], notes: Sequence[str]) -> Text:
    """The resources of s.yaml this toolkit does not deploy, each with why; then the notes
    on accepted settings."""
    from rich.text import Text

    text = Text()
    if items:
        text.append(f"Not deployed by this toolkit ({len(items)}):\n", style="yellow")
        for item in items:
            text.append(f"  ! {item.resource} ({item.component}): ", style="yellow")
            text.append("; ".join(item.reasons) + "\n")
    for note in notes:
        text.append(f"  note: {note}\n", style="dim")
    return text


def _counts(kinds: Sequence[ActionKind], *, done: bool) -> str:
    words = ("created", "updated", "deleted") if done else ("to create", "to update",
                                                             "to delete")
    counts = [sum(k is kind for k in kinds) for kind in
              (ActionKind.CREATE, ActionKind.UPDATE, ActionKind.DELETE)]
    parts = [f"{n} {w}" for n, w in zip(counts, words, strict=True)
             if n or w not in ("deleted", "to delete")]
    return ", ".join(parts) + f", {kinds.count(ActionKind.NO_CHANGE)} unchanged"


@view(PlanSummary)
def _plan_view(summary: PlanSummary) -> Text:
    from rich.text import Text  # text output only: JSON needs no rich

    plan = summary.plan
    text = Text(f"Plan for {summary.target}, region {plan.region}, account "
                f"{plan.account_id}:\n")
    text.append_text(action_lines(plan.actions, done=False, details=True))
    text.append_text(not_deployed_lines(plan.state.undeployed, plan.state.notes))
    if not plan.has_changes:
        text.append("No changes: everything is up to date.")
    else:
        text.append(f"Plan: {_counts([a.kind for a in plan.actions], done=False)}.")
    return text


@view(UpSummary)
def _up_view(summary: UpSummary) -> Text:
    from rich.text import Text  # text output only: JSON needs no rich

    r = summary.result
    applied = [x for x in r.resources if not x.outcome.startswith("kept")]
    if not r.changed and not r.kept:
        text = Text(f"No changes: all {len(applied)} resources are up to date (0 write calls).\n")
    else:
        counts = _counts([x.action for x in applied], done=True)
        text = Text(f"Deployed: {counts} ({r.write_calls} write calls).\n")
    text.append_text(action_lines(r.resources, done=True, details=False))
    if summary.state is not None:
        text.append_text(not_deployed_lines(summary.state.undeployed, summary.state.notes))
    if r.kept:
        text.append(f"Kept {len(r.kept)} resource(s) that s.yaml no longer declares; "
                    "`deploy up --yes` removes them.\n", style="yellow")
    for index, step in enumerate(summary.next_steps):
        text.append(("Next: " if index == 0 else "      ") + step + "\n", style="dim")
    text.rstrip()
    return text


@view(DownResult)
def _down_view(result: DownResult) -> Text:
    from rich.text import Text  # text output only: JSON needs no rich

    if not result.resources:
        return Text(f"Nothing to remove: {result.record.name} lists no resources created by "
                    "`deploy up`.")
    text = Text(f"Removed what `deploy up` created ({result.write_calls} write calls):\n")
    for item in result.resources:
        style = "yellow" if item.outcome.startswith("kept") else "green"
        text.append(f"  {item.outcome:<13}", style=style)
        text.append(f"{item.resource.value:<9}{item.name}\n")
    return text
