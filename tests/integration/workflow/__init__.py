"""The workflow end to end on LocalSession (a package so its ``package``-scoped session ends with it).

Without this file pytest treats ``scope="package"`` like ``scope="session"`` for a plain directory,
and the session's moto mock, environment variables and handler wiring would stay active while the
unit tests of other directories run.
"""
