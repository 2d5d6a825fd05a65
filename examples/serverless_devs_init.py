"""Fill in a Serverless Devs application template the way ``s init`` does, so ``deploy`` can
read it: ``python examples/serverless_devs_init.py TEMPLATE_DIR OUT_DIR [--account-id ID]``.

TEMPLATE_DIR is a checkout of a Serverless Devs application (``publish.yaml`` beside a
``src/`` holding ``s.yaml``), e.g. ``git clone https://github.com/devsapp/start-flow-rag``.
Its ``src/`` is copied to OUT_DIR and every ``{{ parameter }}`` in ``s.yaml`` replaced by the
parameter's default from ``publish.yaml`` (``s init`` asks for each, offering the default); a
parameter with an ``x-role`` becomes that role's ARN in the account, as ``s init`` fills it
(``${config('AccountID')}``, the deploying account, unless ``--account-id`` names one);
``${default-suffix}`` becomes ``demo``; an empty default becomes ``demo-<name>``. The
template's resources of other components (rds, model, ...) are not deployed by this toolkit,
so OUT_DIR also gets ``values.yaml`` with a placeholder for each ``${resources.X.output.*}``
or ``${resources.X.info.*}`` that points into one of them. Layers the template names by ARN
(official ones, or another account's) do not exist offline: each becomes a local layer
directory, ``layers/<name>/``, that ``deploy up`` publishes as a layer of your own; put the
layer's content there (``pip install -t layers/<name>/python PACKAGE`` for Python, a
``nodejs/node_modules`` for Node.js; its README.md says which ARN it stands for). Edit
values.yaml, fill the layers, then

    cd OUT_DIR
    deploy --values values.yaml validate
    deploy roles init                     # the default roles the template names
    deploy --values values.yaml up

Nothing here talks to a network.
"""

from __future__ import annotations

import argparse
import re
import shutil
from pathlib import Path

from ruamel.yaml import YAML

PARAMETER = re.compile(r"\{\{\s*([A-Za-z_][\w-]*)\s*\}\}")
REFERENCE = re.compile(r"\$\{resources\.([\w-]+)\.(output|info)((?:\.[\w-]+)+)\}")
DEPLOYED = ("fc3", "fnf", "flow")
LAYER_ARN = re.compile(
    r"^(?P<indent>\s*-\s*)(?P<arn>acs:fc:[^:\s]*:(?P<owner>[^:\s]+):layers/(?P<name>[\w-]+)"
    r"/versions/(?P<version>\d+))\s*$", re.M)


def _defaults(publish: Path, account_id: str) -> dict[str, str]:
    spec = YAML(typ="safe").load(publish.read_text(encoding="utf-8"))
    values: dict[str, str] = {}
    for name, field in ((spec.get("Parameters") or {}).get("properties") or {}).items():
        role = field.get("x-role")
        if role:
            values[name] = f"acs:ram::{account_id}:role/{str(role['name']).lower()}"
            continue
        default = str(field.get("default", "") or f"demo-{name}".replace("_", "-"))
        values[name] = default.replace("${default-suffix}", "demo")
    return values


def _fill(text: str, values: dict[str, str]) -> str:
    return PARAMETER.sub(lambda m: values.get(m[1], m[0]), text)


def _placeholders(out: Path, text: str) -> dict[str, dict[str, dict[str, str]]]:
    """``resources.X.output.Y`` of every non-deployed X the project's files reference."""
    manifest = YAML(typ="safe").load(text)
    others = {name for name, r in (manifest.get("resources") or {}).items()
              if isinstance(r, dict) and r.get("component") not in DEPLOYED}
    found: dict[str, dict[str, dict[str, str]]] = {}
    for path in [out / "s.yaml", *out.rglob("*.yaml")]:
        for resource, kind, keys in REFERENCE.findall(path.read_text(encoding="utf-8")):
            if resource in others:
                key = keys.lstrip(".")
                found.setdefault(resource, {}).setdefault(kind, {})[key] = \
                    f"http://127.0.0.1:8000/{resource.lower()}" if "url" in key.lower() \
                    else "127.0.0.1"
    return found


def _local_layers(out: Path, text: str, account_id: str) -> tuple[str, list[str]]:
    """``text`` with every layer ARN of another account (or an official one) replaced by a
    local layer directory made under ``out/layers``; the directories made."""
    made: list[str] = []

    def local(m: re.Match[str]) -> str:
        if m["owner"] == account_id:
            return m[0]
        directory = f"layers/{m['name']}"
        readme = out / directory / "README.md"
        if not readme.exists():
            readme.parent.mkdir(parents=True, exist_ok=True)
            readme.write_text(
                f"This directory stands for the layer {m['arn']}, which does not exist "
                "offline. `deploy up` publishes it as a layer of your own and the functions "
                "use that version. Put the layer's content here as Function Compute lays it "
                "out under /opt: python/ for Python packages (pip install -t python PACKAGE), "
                "nodejs/node_modules/ for Node.js packages, bin/ and lib/ for binaries.\n",
                encoding="utf-8")
            made.append(directory)
        return f"{m['indent']}./{directory}"

    return LAYER_ARN.sub(local, text), made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("template", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--account-id", default="${config('AccountID')}",
                        help="the account of the roles' ARNs (default: the deploying one)")
    args = parser.parse_args()
    shutil.copytree(args.template / "src", args.out)
    values = _defaults(args.template / "publish.yaml", args.account_id)
    manifest = args.out / "s.yaml"
    text = _fill(manifest.read_text(encoding="utf-8"), {"access": "default", **values})
    text, layers = _local_layers(args.out, text, args.account_id)
    manifest.write_text(text, encoding="utf-8")
    placeholders = _placeholders(args.out, text)
    yaml = YAML()
    yaml.default_flow_style = False
    with (args.out / "values.yaml").open("w", encoding="utf-8") as stream:
        yaml.dump({"resources": placeholders}, stream)
    print(f"Wrote {args.out} (s.yaml with the template's defaults) and values.yaml "
          f"({', '.join(sorted(placeholders)) or 'nothing to fill in'})")
    if layers:
        print(f"Layers that do not exist offline, now local directories to fill: "
              f"{', '.join(layers)}")


if __name__ == "__main__":
    main()
