"""The OTLP feeder: the spans and records the receiver decoded, folded into the store
(services, agents, turns, tools, tokens, traces)."""
