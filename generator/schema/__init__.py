"""Stage 1, read: the schema file as nodes that know their JSON pointer, which JSON Schema
keywords the generator knows, ECMA-262 patterns, the shapes of nodes, and vendoring the
official schema from npm. Imports no other stage."""
