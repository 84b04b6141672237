"""The backup-operator operator (``python -m backupop``); its controllers are in ``backupop.controllers``."""
