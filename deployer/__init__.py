"""cloudflow-deployer: deploy a Function Compute 3.0 + CloudFlow application, or run it locally.

Packages:
    cli        Click commands only; thin layer over ``core``.
    config     s.yaml manifest and runtime settings.
    core       use cases (package, plan, apply, invoke, execute) returning result dataclasses.
    cloud      the only package that imports the official Alibaba Cloud SDKs.
    fdl        the CloudFlow flow language: parser, validator, expressions, interpreter.
    emulator   local FC 3.0 + CloudFlow + RAM + STS server speaking the real wire protocols.
    testing    moto-style fakes: ``mock_cloud()`` and pytest fixtures.
"""

__version__ = "0.1.0"
