"""What the schema stage reads: keywords, kinds of nodes, ECMA-262 patterns."""
