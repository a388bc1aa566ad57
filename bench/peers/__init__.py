"""The other runners of the benchmark: the scan floor and the MinHashLSH peers, one process each."""
