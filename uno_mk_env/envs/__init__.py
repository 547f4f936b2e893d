"""The environment front ends: PettingZoo AEC, Gymnasium, vector, OpenSpiel; observation
encoding."""
