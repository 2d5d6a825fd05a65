"""One module per command family; each is registered lazily in ``deployer.cli.main``."""
