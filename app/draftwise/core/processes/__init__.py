"""The processes Draftwise starts and owns (engines, workers, probes): process groups, the
lifeline that stops them when Draftwise dies, and the run files that are the last net.

Below every other core package, so a probe in core/machine starts the engine through the
same owner as a launch in core/launch."""
