"""Starting an engine: argv, environment, the launch state machine, crashes, orphans."""
