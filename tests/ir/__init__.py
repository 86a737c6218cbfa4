"""The IR stage: building types from the schema, naming them, checking what they can express."""
