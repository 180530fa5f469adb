"""The processes Draftwise starts and owns (engines, workers, probes): process groups, the
lifeline that stops them when Draftwise dies, and the run files that are the last net; and
the one HTTP client for them on loopback, never through a proxy (`loopback`).

Below every other core package, so a worker core/machine starts (share.py, the worker-rate
probe's) and every engine the launch path starts (launches, measurements, the speed probe)
have the same owner."""
