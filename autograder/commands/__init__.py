"""CLI subcommands, one module per stage; each has `register(subparsers)`."""
