"""What the tests share: generating and importing packages, running async tests under a bound
(`helpers`), Hypothesis strategies (`strategies`), hostile JSON-RPC lines (`hostile_lines`), and
the peer programs the tests start as processes (`hostile_agent`, `quiet_agent`, `raw_proxy`)."""
