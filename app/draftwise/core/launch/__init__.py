"""Starting an engine: argv, environment, the launch state machine, crashes, orphans.

Launching only: measuring a launch is core/measuring, sharing this computer's memory
core/rpc/share.py."""
