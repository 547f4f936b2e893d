"""The rules engine (R1-R10): the readable reference; imports nothing of the envs or renderers."""
