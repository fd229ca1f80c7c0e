"""The version of skattr (one home: the package, the command line and saved files)."""

__version__ = "0.3.0.dev0"
