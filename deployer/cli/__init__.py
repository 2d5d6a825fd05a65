"""Click commands. Nothing here imports an SDK or holds business logic: a command reads its
options, builds one request, calls one ``deployer.core`` function and hands the result to the
:class:`~deployer.cli.render.Renderer`."""
