"""``deploy package``."""

from __future__ import annotations

from pathlib import Path

import click
from rich.text import Text

from deployer.cli.context import AppContext, pass_app
from deployer.cli.options import output_option
from deployer.cli.render import view
from deployer.config.manifest import load_manifest
from deployer.core.packaging import PackageReport, package_project

PACKAGE_EPILOG = """\b
Examples:
  deploy package                       write .deploy/build/<FunctionName>.zip
  deploy package --out build/          somewhere else
  deploy package --output json | jq -r '.packages[].crc64'
\b
The same sources always give byte-identical zips; crc64 is Function Compute's codeChecksum.
"""


@view(PackageReport)
def _report_view(report: PackageReport) -> Text:
    lines = []
    for p in report.packages:
        lines += [f"{p.function_name}: {p.zip_path} ({p.size:,} bytes, {len(p.files)} files)",
                  f"  crc64  {p.crc64}", f"  sha256 {p.sha256}"]
    return Text("\n".join(lines) or "no functions in the manifest")


@click.command("package", epilog=PACKAGE_EPILOG)
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Directory for the zips, relative to the project directory  [default: "
              ".deploy/build]")
@output_option
@pass_app
def package(app: AppContext, out_dir: Path | None, output: str) -> None:
    """Write one deterministic zip per function and print its size and checksums."""
    renderer = app.use_output(output)
    manifest = load_manifest(app.manifest_file, values=app.external_values())
    for warning in manifest.warnings:
        renderer.warn(warning.format())
    target = app.resolve(out_dir) if out_dir else app.deploy_dir / "build"
    report = package_project(manifest.functions, out_dir=target, progress=renderer.progress)
    app.render(report)
