"""Ascend Fine-Tune runner: MindSpore transfer learning with live telemetry (see docs/protocol.md)."""

__version__ = "0.1.0"
