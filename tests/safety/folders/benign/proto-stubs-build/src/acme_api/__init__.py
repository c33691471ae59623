"""Client for the Acme API; *_pb2 modules are generated at build time."""
